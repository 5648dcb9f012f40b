#include "src/call_context.h"

#include <utility>

#include "src/jsonrpc.h"

namespace toolmux {

SessionCallContext::SessionCallContext(std::shared_ptr<Session> session,
                                       std::shared_ptr<CallControl> control,
                                       nlohmann::json progress_token, std::string logger_name)
    : session_(std::move(session)),
      control_(std::move(control)),
      progress_token_(std::move(progress_token)),
      logger_name_(std::move(logger_name)) {}

void SessionCallContext::report_progress(double progress, std::optional<double> total,
                                         std::string_view message) {
  if (progress_token_.is_null()) return;
  std::lock_guard lock(mutex_);
  // Progress MUST increase with each notification (MCP progress utility).
  if (finished_ || control_->stop_requested()) return;
  if (last_progress_ && progress <= *last_progress_) return;
  last_progress_ = progress;
  nlohmann::json params{{"progressToken", progress_token_}, {"progress", progress}};
  if (total) params["total"] = *total;
  if (!message.empty()) params["message"] = message;
  session_->send(jsonrpc::make_notification("notifications/progress", std::move(params)));
}

void SessionCallContext::log(LogLevel level, const nlohmann::json& data) {
  if (level < session_->log_level()) return;
  session_->send(jsonrpc::make_notification(
      "notifications/message",
      {{"level", log_level_name(level)}, {"logger", logger_name_}, {"data", data}}));
}

void SessionCallContext::finish() {
  std::lock_guard lock(mutex_);
  finished_ = true;
}

}  // namespace toolmux
