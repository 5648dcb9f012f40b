#include "src/pipeline/authorize.h"

#include <utility>

namespace toolmux::stages {

CallStage authorize() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      if (!call.tool) return CallResult::out_of_order("authorize", "tool", "resolve_tool");
      if (auto why = call_refusal(*call.catalog, call.principal, *call.tool)) {
        return CallResult::denied(tool_label(call) + " " + *why);
      }
      return next(call);
    };
  };
}

}  // namespace toolmux::stages
