// The CallContext a handler gets when its call came from a client session:
// progress and log messages go to that session as notifications. A question
// to the client (ask_client) goes to a legacy session as a request the call
// waits for; a request of the 2026-07-28 protocol asks it through its
// InputExchange (src/session/input_exchange.h) instead.
//
// Once finish() has returned, nothing more is sent for the call: the spec
// forbids progress after the response, and the server calls finish() before it
// responds. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"
#include "src/session/input_exchange.h"
#include "src/session/session.h"

namespace toolmux {

// What a call that may become a task (catalog/tool.h TaskSupport) is linked
// to: the task it becomes (src/pipeline/tasks.h). Thread-safe.
class TaskLink {
 public:
  virtual ~TaskLink() = default;
  // Makes the call a task, unless it is one: the client is answered with the
  // task. False when it cannot be one (the store refused it).
  virtual bool promote() = 0;
  virtual bool promoted() const = 0;
  // A question to the client, kept in the task (input_required) until the
  // client answers it with tasks/update, `stop` is requested or `deadline`.
  virtual ClientAnswer ask(const std::string& method, const nlohmann::json& params,
                           const std::string& key, const std::stop_token& stop,
                           std::chrono::steady_clock::time_point deadline) = 0;
};

class SessionCallContext final : public CallContext {
 public:
  // `request_id` is the tools/call request served: what the call sends
  // belongs to it (on HTTP, its stream).
  SessionCallContext(std::shared_ptr<Session> session, std::shared_ptr<CallControl> control,
                     nlohmann::json request_id, nlohmann::json progress_token,
                     std::string logger_name, std::shared_ptr<InputExchange> exchange = nullptr);

  bool cancelled() const override { return control_->stop_requested(); }
  std::chrono::steady_clock::time_point deadline() const override { return control_->deadline(); }
  std::stop_token stop_token() const override { return control_->stop_token(); }
  void report_progress(double progress, std::optional<double> total,
                       std::string_view message) override;
  void log(LogLevel level, const nlohmann::json& data) override;
  bool logs(LogLevel level) const override { return session_->wants_log(level); }
  const std::string& session_id() const override { return session_->id(); }
  const std::string& principal() const override { return session_->principal(); }
  void tools_discovered(const std::vector<std::string>& names) override {
    session_->add_discovered(names);
  }
  nlohmann::json client_capabilities() const override { return session_->client_capabilities(); }
  ClientAnswer ask_client(const std::string& method, const nlohmann::json& params,
                          const std::stop_token& stop = {}, const std::string& key = {}) override;
  void release_stream() override { session_->close_request_stream(request_id_); }
  bool start_task() override;

  // Links the call to the task it may become; before the handler runs.
  void set_task(std::shared_ptr<TaskLink> task) { task_ = std::move(task); }
  // The task the call became, or null.
  TaskLink* task() const { return task_ && task_->promoted() ? task_.get() : nullptr; }

  void finish();
  const nlohmann::json& request_id() const { return request_id_; }
  // The request's questions to a 2026-07-28 client, when it has asked one.
  const InputExchange* input_exchange() const {
    return exchange_ && exchange_->input_required() ? exchange_.get() : nullptr;
  }

 private:
  std::shared_ptr<Session> session_;
  std::shared_ptr<CallControl> control_;
  const nlohmann::json request_id_;
  const nlohmann::json progress_token_;  // null: the client asked for no progress
  const std::string logger_name_;
  const std::shared_ptr<InputExchange> exchange_;  // null: a legacy session's call
  std::shared_ptr<TaskLink> task_;                 // null: the call cannot be a task
  std::mutex mutex_;
  bool finished_ = false;
  std::optional<double> last_progress_;
};

}  // namespace toolmux
