// Schema registration and the argument check (catalog/tool_registry.h,
// catalog/json_schema.h, catalog/argument_check.h) on any schema text and any
// arguments text. The input is the schema, a NUL byte, then the arguments.
//
// Invariants: nothing throws; a registration is either accepted (the tool is
// there, with a compiled input schema) or refused with problems that name
// what is wrong; the argument check is deterministic; arguments it accepts
// are an object and conform to the compiled schema; arguments it refuses
// come with a message naming the tool that can be written as JSON.
#include <chrono>
#include <string>

#include "catalog/argument_check.h"
#include "catalog/json_schema.h"
#include "catalog/tool_registry.h"
#include "tests/fuzz/fuzz_check.h"

using nlohmann::json;

namespace {

void check_messages(const std::vector<std::string>& messages) {
  for (const auto& message : messages) {
    FUZZ_CHECK(!message.empty(), "a schema violation has a message");
    FUZZ_CHECK(toolmux::is_valid_utf8(message), "a schema violation's message is valid UTF-8");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = toolmux::fuzz::split_input(toolmux::fuzz::as_text(data, size), 2);
  const toolmux::ParsedJson schema = toolmux::parse_untrusted_json(parts[0]);
  if (!schema.ok()) return 0;  // the JSON boundary's own target covers that

  try {
    // The compiler on its own, on any JSON value (not only objects).
    toolmux::Problems compile_problems;
    const auto compiled = toolmux::CompiledSchema::compile(schema.value, compile_problems);
    FUZZ_CHECK((compiled == nullptr) == !compile_problems.empty(),
               "a schema compiles, or it has problems");
    for (const auto& problem : compile_problems) {
      FUZZ_CHECK(!problem.message.empty(), "a schema problem has a message");
    }
    const toolmux::ParsedJson arguments = toolmux::parse_untrusted_json(parts[1]);
    if (compiled && !arguments.syntax_error) {
      const auto first = compiled->validate(arguments.value);
      check_messages(first);
      FUZZ_CHECK(first == compiled->validate(arguments.value), "validation is deterministic");
      check_messages(compiled->validate(schema.value));
    }

    // Registration: the contract checks, then the argument check as tools/call runs it.
    toolmux::ToolSpec spec;
    spec.name = "fuzzed";
    spec.description = "A tool whose input schema is the fuzzer's.";
    spec.input_schema = schema.value;
    spec.side_effect = "read_only";
    spec.timeout = std::chrono::milliseconds(1000);
    // The whole contract, the undescribed-property walk included; then
    // registered as an upstream's tool would be, so that schemas whose
    // properties say nothing of themselves still reach the argument check.
    for (const auto& problem : toolmux::check_tool_spec(spec)) {
      FUZZ_CHECK(problem.message.find("fuzzed") != std::string::npos,
                 "a contract problem names the tool");
    }
    toolmux::ToolRegistry registry;
    const toolmux::Problems problems = registry.add(
        spec, [](const json&, toolmux::CallContext&) { return toolmux::ToolResult{}; },
        toolmux::ToolOwner::upstream);
    const toolmux::RegisteredTool* tool = registry.find("fuzzed");
    if (!problems.empty()) {
      FUZZ_CHECK(tool == nullptr, "a refused tool is not registered");
      for (const auto& problem : problems) {
        FUZZ_CHECK(problem.message.find("fuzzed") != std::string::npos,
                   "a registration problem names the tool");
      }
      return 0;
    }
    FUZZ_CHECK(tool != nullptr && tool->input_schema,
               "an accepted tool is registered with its compiled schema");

    const toolmux::ArgumentCheck check = toolmux::check_arguments(*tool, parts[1]);
    const toolmux::ArgumentCheck again = toolmux::check_arguments(*tool, parts[1]);
    FUZZ_CHECK(check.problems == again.problems, "the argument check is deterministic");
    if (check.ok()) {
      FUZZ_CHECK(check.arguments.is_object(), "accepted arguments are an object");
      FUZZ_CHECK(tool->input_schema.validate(check.arguments).empty(),
                 "accepted arguments conform to the schema");
    } else {
      check_messages(check.problems);
      const std::string message = check.message("fuzzed");
      FUZZ_CHECK(message.find("\"fuzzed\"") != std::string::npos, "the refusal names the tool");
      FUZZ_CHECK(!toolmux::unserializable_json(json(message)),
                 "the refusal can be written as JSON");
    }
  } catch (...) {
    FUZZ_CHECK(false, "compiling, registering and checking never throw");
  }
  return 0;
}
