// The argument check the server runs on every tools/call before the tool runs.
//
// Public so that tests and tool authors call the very same code: first the
// JSON boundary (well-formed, valid UTF-8, no escaped lone surrogate, no
// repeated object key, depth <= 256), then the tool's compiled input schema,
// then the schema's defaults: each property of the schema's top-level
// "properties" that declares a "default" and that the arguments lack is set
// to it (the filled arguments are checked against the schema again, so that
// a default that breaks it is a problem, not the tool's surprise; a
// built-in's vetted schema is not: a test checks its defaults).
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
  // The arguments the schema's defaults filled in, by name, with the value
  // each got (also in `arguments`); null when none was.
  nlohmann::json filled;
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

// From a spec alone, for a program that checks arguments without a registry
// (before registering the tool, or in a test): as check_arguments above with
// the spec's input schema. The compiled schema is kept in a process-wide
// cache of the 64 most recently used, keyed by the schema's text, so that
// checking many calls of one spec compiles it once. A spec without an input
// schema, or whose schema does not compile, gets one problem that says why.
// Safe from any number of threads.
ArgumentCheck check_arguments(const ToolSpec& spec, std::string_view arguments_json);

// Whether an input schema lets a call pass arguments it does not declare:
// its top level says nothing of them (no "additionalProperties",
// "unevaluatedProperties" or "patternProperties"). `check` and registration
// warn of such tools; the operator's policy may reject what they do not
// declare (reject_undeclared_arguments).
bool accepts_undeclared_arguments(const nlohmann::json& input_schema);

// When the tool's schema accepts undeclared arguments and the boundary check
// passed: a problem for each argument its top-level "properties" does not
// name, with the closest declared names, e.g. `argument /colour: the tool
// does not declare it, and the operator's policy rejects undeclared arguments
// (did you mean "color"?)`.
void reject_undeclared_arguments(const RegisteredTool& tool, ArgumentCheck& check);

// The two halves, for the server, which applies the operator's argument policy
// (aliases, defaults, fixed values) in between:
// the JSON boundary, and that the arguments are an object ({} when absent);
ArgumentCheck check_argument_boundary(const ParsedJson& parsed);
// the tool's input schema and its defaults, when the boundary check passed.
void check_input_schema(const RegisteredTool& tool, ArgumentCheck& check);

}  // namespace toolmux
