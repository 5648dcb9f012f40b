// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663; docs/tasks.md)
// as the server serves it in both protocol eras: which calls become tasks,
// the tasks that run here, and tasks/get, tasks/update and tasks/cancel.
//
// A call of a tool that supports tasks (ToolSpec::task_support), from a
// client that negotiated the extension (capabilities.extensions at
// initialize, or the request's _meta clientCapabilities), is linked to a
// TaskRun before it runs (CallRunner). It becomes a task when its handler
// starts (or when the handler says, CallContext::start_task): the task is
// written to the store first, then the client is answered with it
// (CreateTaskResult), and the call goes on through the rest of the pipeline.
// What the pipeline returns (truncated, offloaded, redacted and audited as
// any result) is the task's result: completed for a tool's answer, its
// errors included; failed for what is not one (a crash, a timeout, toolmux
// stopping); cancelled after tasks/cancel.
//
// A task belongs to the principal that made it; its record lives in the
// TaskStore (src/store/task_store.h) until its ttl passes, so tasks/get
// answers after the client went away, and after a restart (a task that was
// running then is failed: its process is gone). Input inside a task: the
// handler's ask_client parks the task as input_required, with the question
// under inputRequests, until tasks/update brings its answer.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "src/base/jsonrpc_error.h"
#include "src/base/logger.h"
#include "src/base/status.h"
#include "src/pipeline/call.h"
#include "src/session/call_context.h"
#include "src/session/session.h"
#include "src/store/task_store.h"

namespace toolmux {

inline constexpr const char* kTasksExtension = "io.modelcontextprotocol/tasks";

// Whether `client_capabilities` (an initialize's, or a request's _meta
// clientCapabilities) negotiate the extension.
bool tasks_negotiated(const nlohmann::json& client_capabilities);
// -32021 for a client that did not negotiate it, naming it in
// data.requiredCapabilities; `what` says what needed it.
JsonRpcError tasks_not_negotiated(const std::string& what);

struct TaskOptions {
  std::chrono::milliseconds ttl{std::chrono::hours(1)};  // how long a task is kept
  std::chrono::milliseconds poll_interval{500};          // what clients are told to poll at
  // Opens the store at the first task; null = kept in memory, for this process only.
  std::function<Result<std::unique_ptr<TaskStore>>()> open_store;
  std::function<std::chrono::system_clock::time_point()> now = std::chrono::system_clock::now;
};

class Tasks;

// One call linked to the task it may become; see the file comment.
class TaskRun final : public TaskLink, public std::enable_shared_from_this<TaskRun> {
 public:
  TaskRun(Tasks& tasks, std::shared_ptr<Session> session, nlohmann::json request_id,
          std::shared_ptr<CallControl> control, std::string tool, std::string owner);

  bool promote() override;
  bool promoted() const override;
  ClientAnswer ask(const std::string& method, const nlohmann::json& params, const std::string& key,
                   const std::stop_token& stop,
                   std::chrono::steady_clock::time_point deadline) override;

  // The call's pipeline ended with `out`: the task's end.
  void finish(const CallResult& out);
  // tasks/cancel of a running task.
  void cancel();
  // tasks/update: answers to the questions waiting; the others are ignored.
  void answer(const nlohmann::json& responses);
  TaskRecord snapshot() const;

 private:
  void save_locked();  // writes record_ to the store; logs a failure

  Tasks& tasks_;
  const std::shared_ptr<Session> session_;
  const nlohmann::json request_id_;
  const std::shared_ptr<CallControl> control_;
  mutable std::mutex mutex_;
  std::condition_variable answered_;
  bool promoted_ = false;
  TaskRecord record_;
  nlohmann::json answers_ = nlohmann::json::object();  // key -> the client's answer
  std::size_t asked_ = 0;
};

class Tasks {
 public:
  Tasks(TaskOptions options, Logger& logger);
  Tasks(const Tasks&) = delete;
  Tasks& operator=(const Tasks&) = delete;

  // A link for a call of `tool` by `session`'s principal with `request_id`.
  std::shared_ptr<TaskRun> link(std::shared_ptr<Session> session, nlohmann::json request_id,
                                std::shared_ptr<CallControl> control, std::string tool);

  // tasks/get, tasks/update and tasks/cancel of `principal`: the result, or
  // the error (-32602 for an unknown task or malformed params).
  std::variant<nlohmann::json, JsonRpcError> get(const std::string& principal,
                                                 const nlohmann::json& params);
  std::variant<nlohmann::json, JsonRpcError> update(const std::string& principal,
                                                    const nlohmann::json& params);
  std::variant<nlohmann::json, JsonRpcError> cancel(const std::string& principal,
                                                    const nlohmann::json& params);

  // {"resultType": "task", taskId, status, ...}: a CreateTaskResult.
  nlohmann::json created(const TaskRecord& record) const;

 private:
  friend class TaskRun;
  Result<TaskStore*> store();
  std::int64_t now_ms() const;
  Status save(const TaskRecord& record);
  void started(const std::shared_ptr<TaskRun>& run, const std::string& id);
  void ended(const std::string& id);
  nlohmann::json detailed(const TaskRecord& record) const;
  // The running task `id` of `principal`, or null.
  std::shared_ptr<TaskRun> running(const std::string& principal, const std::string& id);
  // The task of params.taskId for `principal`, running or stored.
  std::variant<TaskRecord, JsonRpcError> find(const std::string& principal,
                                              const nlohmann::json& params,
                                              std::shared_ptr<TaskRun>& run);

  TaskOptions options_;
  Logger& logger_;
  std::mutex mutex_;
  std::unique_ptr<TaskStore> store_;
  std::string store_error_;  // why the store did not open, once it failed
  std::map<std::string, std::shared_ptr<TaskRun>> running_;
  std::int64_t last_sweep_ms_ = 0;
};

}  // namespace toolmux
