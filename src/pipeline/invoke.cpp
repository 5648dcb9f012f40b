#include "src/pipeline/invoke.h"

namespace toolmux {

CallHandler invoke_tool() {
  return [](ToolCall& call) {
    if (!call.tool) return CallResult::out_of_order("invoke_tool", "tool", "resolve_tool");
    if (!call.arguments) {
      return CallResult::out_of_order("invoke_tool", "arguments", "check_arguments");
    }
    return CallResult::answered(call.tool->handler(*call.arguments, *call.context));
  };
}

}  // namespace toolmux
