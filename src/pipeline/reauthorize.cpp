#include "src/pipeline/reauthorize.h"

#include <utility>

namespace toolmux::stages {

CallStage reauthorize(CatalogSource serving) {
  return [serving = std::move(serving)](CallHandler next) -> CallHandler {
    return [serving, next = std::move(next)](ToolCall& call) {
      if (!call.tool) return CallResult::out_of_order("reauthorize", "tool", "resolve_tool");
      if (!serving || call.confirmation == "not_required") return next(call);
      const std::shared_ptr<const Catalog> now = serving();
      if (!now || now == call.catalog) return next(call);
      if (auto why = call_refusal(*now, call.principal, *call.tool)) {
        return CallResult::denied(tool_label(call) + " " + *why);
      }
      return next(call);
    };
  };
}

}  // namespace toolmux::stages
