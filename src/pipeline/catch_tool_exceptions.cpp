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
      } catch (const MissingClientCapability& e) {
        // Not the tool failing: the request needs what the client cannot do.
        // The 2026-07-28 protocol has an error for it; the legacy era has not,
        // and its client gets the tool's error.
        if (!call.modern) return CallResult::answered(ToolResult::error(e.what()));
        return CallResult::rejected(CallOutcome::tool_error,
                                    JsonRpcError::missing_client_capability(e.missing()));
      } catch (const std::exception& e) {
        return CallResult::crashed(tool_label(call) + " failed: " + e.what());
      } catch (...) {
        return CallResult::crashed(tool_label(call) + " failed with an unknown exception");
      }
    };
  };
}

}  // namespace toolmux::stages
