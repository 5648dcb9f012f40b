#include "src/session/call_context.h"

#include <algorithm>
#include <utility>

#include "src/base/jsonrpc.h"
#include "src/base/redact.h"

namespace toolmux {

SessionCallContext::SessionCallContext(std::shared_ptr<Session> session,
                                       std::shared_ptr<CallControl> control,
                                       nlohmann::json request_id, nlohmann::json progress_token,
                                       std::string logger_name,
                                       std::shared_ptr<InputExchange> exchange)
    : session_(std::move(session)),
      control_(std::move(control)),
      request_id_(std::move(request_id)),
      progress_token_(std::move(progress_token)),
      logger_name_(std::move(logger_name)),
      exchange_(std::move(exchange)) {}

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
  session_->send_related(jsonrpc::make_notification("notifications/progress", std::move(params)),
                         request_id_);
}

void SessionCallContext::log(LogLevel level, const nlohmann::json& data) {
  if (!session_->wants_log(level)) return;
  session_->send_related(
      jsonrpc::make_notification("notifications/message",
                                 // What a tool or an upstream logs is redacted as its results are.
                                 {{"level", log_level_name(level)},
                                  {"logger", logger_name_},
                                  {"data", redact_json(data)}}),
      request_id_);
}

ClientAnswer SessionCallContext::ask_client(const std::string& method, const nlohmann::json& params,
                                            const std::stop_token& stop, const std::string& key) {
  if (TaskLink* task = this->task()) {
    // A task's question waits in the task for the client's tasks/update.
    return task->ask(method, params, key, stop, control_->deadline());
  }
  {
    std::lock_guard lock(mutex_);
    if (finished_) return {std::nullopt, "the call has already ended", false};
  }
  if (exchange_) {
    // Asked in the answer: the call stops now and is run again with the answer.
    ClientAnswer answer = exchange_->ask(method, params, key, session_->client_capabilities());
    if (answer.pending) control_->request_input();
    return answer;
  }
  // The wait ends with the call: its deadline or its cancellation.
  const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
      control_->deadline() - std::chrono::steady_clock::now());
  const auto timeout = std::max(std::chrono::milliseconds(0), remaining);
  return session_->request_client(method, params, request_id_, control_.get(), timeout, stop);
}

bool SessionCallContext::start_task() {
  if (!task_) return false;
  if (!task_->promote()) return false;
  // The request is answered: nothing more goes to its stream.
  finish();
  return true;
}

void SessionCallContext::finish() {
  std::lock_guard lock(mutex_);
  finished_ = true;
}

}  // namespace toolmux
