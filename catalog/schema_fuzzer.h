// Schema fuzzing: from a tool's input schema (the JSON Schema subset toolmux
// enforces, docs/tool-contract.md), argument objects the schema allows
// and near misses it must refuse, for `toolmux check --fuzz`.
//
// A valid case is built from what the schema's keywords say is allowed, using
// its own const, enum, examples and default where it has them; it is never
// filtered through the validator, so the schema refusing one is a finding (two
// keywords that contradict each other, or an example that breaks a rule).
// Strings with a "pattern" come only from the schema's examples, default or
// enum: the fuzzer does not guess, and says so in `skipped`. Where a case
// cannot be built exactly (oneOf, not, propertyNames, contains, conflicting
// keywords in one allOf) it is marked inexact, and the caller confirms it with
// the validator before counting it.
// Each near miss breaks exactly one rule that the schema states outside any
// anyOf, oneOf, not or if/then/else branch, so the schema itself says it is
// invalid; a rule the schema does not state (a count without a maximum) gives
// no near miss.
//
// Deterministic for a seed (the same schema, seed and count give the same
// cases on every platform). Bounded on any schema, recursive or huge: value
// nesting, values per case, items per array, characters per string, $ref hops
// and near misses per call are all capped by FuzzLimits. Stateless; safe to
// call from many threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolmux {

struct FuzzLimits {
  // Nesting of a generated value; below it only what is required is built,
  // and twice as deep nothing is (a recursive schema that requires itself).
  std::size_t max_depth = 6;
  std::size_t max_nodes = 2000;       // values in one case
  std::size_t max_items = 1000;       // items of one array (minItems, maxItems + 1)
  std::size_t max_chars = 10000;      // characters of one string (minLength, maxLength + 1)
  std::size_t max_near_misses = 200;  // per call of generate_fuzz_cases
};

struct FuzzValidCase {
  nlohmann::json arguments;
  // False when the generator could not be sure the schema allows the case
  // (`inexact_reason` says why, e.g. "/mode: oneOf"); confirm it with the
  // validator first.
  bool exact = true;
  std::string inexact_reason;
};

struct FuzzNearMiss {
  nlohmann::json arguments;
  // The argument the case breaks (RFC 6901; "" is the arguments object), and
  // how, e.g. "missing required property", "above maximum 1000", "over
  // maxLength 64", "not in enum", "wrong type (expected integer)", "extra
  // property (additionalProperties is false)".
  std::string pointer;
  std::string rule;
};

struct FuzzCases {
  std::vector<FuzzValidCase> valid;
  std::vector<FuzzNearMiss> near_misses;
  // What could not be generated, each "<pointer>: <why>", e.g. `/branch: no
  // examples, default or enum to take a string matching the pattern "^v\d+$"
  // from`. Not a fault of the schema.
  std::vector<std::string> skipped;
  // When no valid case could be built because the schema allows no value
  // there, each "<pointer>: <why>", e.g. `/: required property "path" is not
  // in "properties" and "additionalProperties" is false`. A finding.
  std::vector<std::string> impossible;
};

// `count` valid cases (fewer when some cannot be built; the first one uses
// the schema's examples and defaults wherever it has them and every optional
// property), then near misses derived from them, one per pointer and rule.
// `schema` should have compiled (CompiledSchema::compile); anything else
// gives no cases, with a note in `skipped`.
FuzzCases generate_fuzz_cases(const nlohmann::json& schema, std::uint64_t seed, std::size_t count,
                              const FuzzLimits& limits = {});

}  // namespace toolmux
