// The check a JSON Schema passes before valijson compiles it: every keyword
// is one the validator enforces (or a plain annotation), every $ref points
// inside the document at a schema, and neither nesting nor $ref chains are
// deep enough to exhaust valijson's recursion. See "JSON Schema support" in
// docs/tool-contract.md for the keyword lists.
//
// Nothing is read or fetched: a $ref, $id or $schema naming a file or a URL
// is a problem. The audit itself never recurses deeper than 257 levels, and
// follows $ref with explicit stacks. Pure functions, safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/problem.h"
#include "src/base/status.h"

namespace toolmux::json_schema {

// Where the keywords toolmux checks itself, instead of valijson, stand: JSON
// pointers of the schema objects holding them.
struct OwnKeywordPositions {
  std::vector<std::string> formats;             // "format" with a string value
  std::vector<std::string> patterns;            // "pattern" with a string value (it compiles)
  std::vector<std::string> pattern_properties;  // "patternProperties" (its names compile)
};

// The positions, or nullopt with every problem found appended to `problems`,
// each with the pointer (relative to the schema's root) of what is wrong.
std::optional<OwnKeywordPositions> audit_schema(const nlohmann::json& schema, Problems& problems);

// RFC 6901 tokens of a "#" or "#/..." reference, decoded the way valijson
// decodes them (~1, ~0, then %XX). Fails (invalid_argument, e.g. "has an
// invalid ~ escape") when valijson would read it differently from the
// standard.
Result<std::vector<std::string>> ref_tokens(const std::string& ref);

// The node `tokens` lead to in `root` (null when there is none), with
// `pointer` set to its canonical JSON pointer.
const nlohmann::json* resolve_tokens(const nlohmann::json& root,
                                     const std::vector<std::string>& tokens, std::string& pointer);

}  // namespace toolmux::json_schema
