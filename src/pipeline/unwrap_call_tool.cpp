#include "src/pipeline/unwrap_call_tool.h"

#include <utility>

#include "src/builtins/call_tool.h"

namespace toolmux::stages {

namespace {

using nlohmann::json;

// The call, unwrapped in place; why not, if it cannot be.
std::optional<std::string> unwrap(ToolCall& call) {
  const json& outer = call.raw_arguments.value;
  if (call.raw_arguments.syntax_error) return "arguments are " + *call.raw_arguments.syntax_error;
  for (const JsonViolation& v : call.raw_arguments.violations) {
    if (v.pointer.rfind("/arguments", 0) != 0) return "argument " + v.pointer + ": " + v.message;
  }
  if (!outer.is_object() || !outer.contains("name") || !outer["name"].is_string()) {
    return std::string("argument /name: a tool name (string) is required");
  }
  const json inner = outer.value("arguments", json(nullptr));
  if (!inner.is_null() && !inner.is_object()) {
    return std::string("argument /arguments: must be an object");
  }
  for (const auto& [key, value] : outer.items()) {
    if (key != "name" && key != "arguments" && key != "reason") {
      return "argument /" + pointer_token(key) +
             ": call_tool takes only name, arguments and reason";
    }
  }
  if (outer.contains("reason") && !outer["reason"].is_string()) {
    return std::string("argument /reason: must be a string");
  }
  if (outer.contains("reason")) call.reason = outer["reason"].get<std::string>();
  std::string name = outer["name"].get<std::string>();
  if (call.catalog->aliases.canonical_tool(name) == kCallTool) {
    return std::string("argument /name: call_tool cannot call itself");
  }
  ParsedJson arguments;
  arguments.value = inner;
  arguments.violations = violations_under(call.raw_arguments.violations, "/arguments");
  call.requested_name = std::move(name);
  call.raw_arguments = std::move(arguments);
  call.via_call_tool = true;
  return std::nullopt;
}

}  // namespace

CallStage unwrap_call_tool() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      if (call.catalog->aliases.canonical_tool(call.requested_name) == kCallTool) {
        if (auto problem = unwrap(call)) {
          return CallResult::invalid_arguments("Invalid arguments for tool \"call_tool\": " +
                                               *problem);
        }
      }
      return next(call);
    };
  };
}

}  // namespace toolmux::stages
