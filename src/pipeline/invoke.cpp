#include "src/pipeline/invoke.h"

namespace toolmux {

CallHandler invoke_tool() {
  return [](ToolCall& call) {
    if (!call.tool) return CallResult::out_of_order("invoke_tool", "tool", "resolve_tool");
    if (!call.arguments) {
      return CallResult::out_of_order("invoke_tool", "arguments", "check_arguments");
    }
    // The server's decision: a call that may be a task becomes one as its
    // tool starts, unless the tool says when itself (catalog/tool.h).
    if (call.tool->spec.task_support != TaskSupport::forbidden &&
        !call.tool->spec.task_started_by_handler) {
      call.context->start_task();
    }
    return CallResult::answered(call.tool->handler(*call.arguments, *call.context));
  };
}

}  // namespace toolmux
