#include "src/pipeline/outcome_meta.h"

#include <string>
#include <utility>

namespace toolmux::stages {

CallStage outcome_meta() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      CallResult out = next(call);
      if (!carries_result(out)) return out;
      ToolResult& r = out.result;
      if (r.is_error) {
        set_outcome_meta(r, out.outcome);
      } else if (r.meta.is_object()) {
        r.meta.erase(std::string(kOutcomeMetaKey));
        if (r.meta.empty()) r.meta = nullptr;
      }
      return out;
    };
  };
}

}  // namespace toolmux::stages
