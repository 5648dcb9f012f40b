#include "src/pipeline/check_arguments.h"

#include <utility>

namespace toolmux {

void check_for_tool(const ToolCall& call, ArgumentCheck& check) {
  if (check.ok()) {
    auto fixed = call.catalog->policy.apply_arguments(call.tool->spec.name, check.arguments);
    check.problems.insert(check.problems.end(), fixed.begin(), fixed.end());
  }
  if (call.catalog->policy.reject_unknown_arguments) reject_undeclared_arguments(*call.tool, check);
  check_input_schema(*call.tool, check);
}

}  // namespace toolmux

namespace toolmux::stages {

CallStage check_arguments() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      if (!call.tool) return CallResult::out_of_order("check_arguments", "tool", "resolve_tool");
      const std::string& name = call.tool->spec.name;
      ArgumentCheck check = check_argument_boundary(call.raw_arguments);
      if (check.ok()) {
        auto renamed = call.catalog->aliases.rename_arguments(name, check.arguments);
        check.problems.insert(check.problems.end(), renamed.begin(), renamed.end());
      }
      check_for_tool(call, check);
      if (!check.ok()) return CallResult::invalid_arguments(check.message(name));
      call.arguments = std::move(check.arguments);
      call.filled_arguments = std::move(check.filled);
      return next(call);
    };
  };
}

}  // namespace toolmux::stages
