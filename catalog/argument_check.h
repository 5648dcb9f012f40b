// The argument check the server runs on every tools/call before the tool runs.
//
// Public so that tests and tool authors call the very same code: first the
// JSON boundary (well-formed, valid UTF-8, no escaped lone surrogate, no
// repeated object key, depth <= 256), then the tool's compiled input schema.
// Absent, empty or null arguments mean {}.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool_registry.h"
#include "src/base/untrusted_json.h"

namespace toolmux {

struct ArgumentCheck {
  nlohmann::json arguments;           // what the tool will be given ({} for empty)
  std::vector<std::string> problems;  // e.g. "argument /count: expected integer, got string"
  bool ok() const { return problems.empty(); }
  // "Invalid arguments for tool \"x\": <problem>; <problem>"
  std::string message(std::string_view tool_name) const;
};

// From raw JSON text, as a tool author would test it.
ArgumentCheck check_arguments(const RegisteredTool& tool, std::string_view arguments_json);

// From a value already read at the boundary, as the server has it: `parsed` is
// the arguments value with the violations found under it (see violations_under).
// Exactly check_argument_boundary, then check_input_schema.
ArgumentCheck check_arguments(const RegisteredTool& tool, const ParsedJson& parsed);

// The two halves, for the server, which applies the operator's argument policy
// (aliases, defaults, fixed values) in between:
// the JSON boundary, and that the arguments are an object ({} when absent);
ArgumentCheck check_argument_boundary(const ParsedJson& parsed);
// the tool's input schema, when the boundary check passed.
void check_input_schema(const RegisteredTool& tool, ArgumentCheck& check);

}  // namespace toolmux
