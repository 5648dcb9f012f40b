#include "src/pipeline/limit_result.h"

#include <utility>

#include "src/builtins/result_tools.h"
#include "src/pipeline/result_limiter.h"

namespace toolmux::stages {

CallStage limit_result(std::shared_ptr<LazyResultStore> results) {
  return [results](CallHandler next) -> CallHandler {
    return [results, next = std::move(next)](ToolCall& call) {
      if (!call.tool) return CallResult::out_of_order("limit_result", "tool", "resolve_tool");
      CallResult out = next(call);
      out.bytes_produced = result_payload_bytes(out.result);
      if (out.outcome == CallOutcome::cancelled || out.outcome == CallOutcome::input_required ||
          call.tool->spec.name == kReadToolResult) {
        return out;
      }
      StorePayload store;
      if (results) {
        store = [&](std::string_view payload, const StoredFormat& format) {
          const Result<ResultStore*> opened = results->get();
          Result<std::string> id = opened.ok() ? (*opened)->put(call.session_id, payload, format)
                                               : Result<std::string>(opened.status());
          if (!id.ok() && call.context) {
            call.context->log(LogLevel::warning,
                              {{"event", "offload_failed"}, {"tool", call.tool->spec.name}});
          }
          return id.ok() ? std::move(id).value() : std::string();
        };
      }
      const LimitReport report = apply_result_limits(out.result, call.catalog->limits, store);
      out.truncated = out.truncated || report.truncated;
      out.offloaded = out.offloaded || report.offloaded;
      return out;
    };
  };
}

}  // namespace toolmux::stages
