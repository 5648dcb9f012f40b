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
