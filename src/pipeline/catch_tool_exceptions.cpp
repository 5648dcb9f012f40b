#include "src/pipeline/catch_tool_exceptions.h"

#include <exception>
#include <utility>

namespace toolmux::stages {

CallStage catch_tool_exceptions() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      if (!call.tool) {
        return CallResult::out_of_order("catch_tool_exceptions", "tool", "resolve_tool");
      }
      try {
        return next(call);
      } catch (const std::exception& e) {
        return CallResult::crashed(tool_label(call) + " failed: " + e.what());
      } catch (...) {
        return CallResult::crashed(tool_label(call) + " failed with an unknown exception");
      }
    };
  };
}

}  // namespace toolmux::stages
