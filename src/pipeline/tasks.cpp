#include "src/pipeline/tasks.h"

#include <algorithm>
#include <stop_token>
#include <utility>

#include "src/base/jsonrpc.h"
#include "src/base/random_id.h"
#include "src/base/rfc3339.h"
#include "src/session/input_exchange.h"

namespace toolmux {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxTaskIdBytes = 200;

std::string iso(std::int64_t ms) {
  return format_rfc3339(std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)));
}

// The first text block of a result, for a failed task's error message.
std::string first_text(const json& result) {
  if (auto content = result.find("content"); content != result.end() && content->is_array()) {
    for (const json& block : *content) {
      if (block.is_object() && block.value("type", "") == "text" && block.contains("text") &&
          block["text"].is_string()) {
        return block["text"].get<std::string>();
      }
    }
  }
  return "the task failed";
}

}  // namespace

bool tasks_negotiated(const json& client_capabilities) {
  if (!client_capabilities.is_object()) return false;
  auto extensions = client_capabilities.find("extensions");
  return extensions != client_capabilities.end() && extensions->is_object() &&
         extensions->contains(kTasksExtension);
}

JsonRpcError tasks_not_negotiated(const std::string& what) {
  return {JsonRpcError::kMissingClientCapability,
          what + " needs the client to declare the " + std::string(kTasksExtension) +
              " extension (capabilities.extensions)",
          {{"requiredCapabilities", {{"extensions", {{kTasksExtension, json::object()}}}}}}};
}

// ---- TaskRun

TaskRun::TaskRun(Tasks& tasks, std::shared_ptr<Session> session, json request_id,
                 std::shared_ptr<CallControl> control, std::string tool, std::string owner)
    : tasks_(tasks),
      session_(std::move(session)),
      request_id_(std::move(request_id)),
      control_(std::move(control)) {
  record_.tool = std::move(tool);
  record_.owner = std::move(owner);
}

bool TaskRun::promoted() const {
  std::lock_guard lock(mutex_);
  return promoted_;
}

bool TaskRun::promote() {
  json created;
  {
    std::lock_guard lock(mutex_);
    if (promoted_) return true;
    record_.id = random_id(24);
    record_.status = "working";
    record_.created_ms = record_.updated_ms = tasks_.now_ms();
    record_.ttl_ms = tasks_.options_.ttl.count();
    // Durable before the client hears of it: a tasks/get right after the
    // answer finds it.
    if (Status saved = tasks_.save(record_); !saved.ok()) {
      tasks_.logger_.write(
          LogLevel::warning, "task_not_created",
          {{"session", session_->label()}, {"tool", record_.tool}, {"reason", saved.message()}});
      return false;
    }
    promoted_ = true;
    created = tasks_.created(record_);
  }
  tasks_.started(shared_from_this(), record_.id);
  session_->send_related(jsonrpc::make_result(request_id_, std::move(created)), request_id_);
  // The request is answered: its id is the client's to use again.
  session_->end_call(request_id_);
  return true;
}

void TaskRun::save_locked() {
  record_.updated_ms = tasks_.now_ms();
  if (Status saved = tasks_.save(record_); !saved.ok()) {
    tasks_.logger_.write(LogLevel::warning, "task_not_saved",
                         {{"tool", record_.tool}, {"reason", saved.message()}});
  }
}

ClientAnswer TaskRun::ask(const std::string& method, const json& params, const std::string& key,
                          const std::stop_token& stop,
                          std::chrono::steady_clock::time_point deadline) {
  // Woken when the call stops (tasks/cancel, its deadline's timer, toolmux
  // exiting) or the asker's own stop; the callbacks go after the lock does.
  auto wake = [this] {
    std::lock_guard lock(mutex_);
    answered_.notify_all();
  };
  std::stop_callback on_stop(stop, wake);
  std::stop_callback on_cancel(control_->stop_token(), wake);
  std::unique_lock lock(mutex_);
  if (record_.terminal()) return {std::nullopt, "the task has ended", false};
  if (record_.input_requests.is_object() &&
      record_.input_requests.size() >= InputExchange::kMaxQuestions) {
    return {std::nullopt,
            "the task has " + std::to_string(InputExchange::kMaxQuestions) +
                " questions waiting already, its limit",
            false};
  }
  const std::string k = key.empty() ? "input-" + std::to_string(++asked_) : key;
  if (!record_.input_requests.is_object()) record_.input_requests = json::object();
  record_.input_requests[k] = {{"method", method}, {"params", params}};
  record_.status = "input_required";
  save_locked();
  while (!answers_.contains(k) && !stop.stop_requested() && !control_->stop_requested() &&
         std::chrono::steady_clock::now() < deadline) {
    answered_.wait_until(lock, deadline);
  }
  // Cancelled meanwhile: the task's questions are gone already.
  if (record_.input_requests.is_object()) record_.input_requests.erase(k);
  if (!record_.input_requests.is_object() || record_.input_requests.empty()) {
    record_.input_requests = nullptr;
    if (record_.status == "input_required") record_.status = "working";
  }
  if (!record_.terminal()) save_locked();
  if (auto it = answers_.find(k); it != answers_.end()) {
    ClientAnswer answer{std::move(*it), "", false};
    answers_.erase(it);
    return answer;
  }
  return {
      std::nullopt,
      control_->cancelled() ? "the task was cancelled" : "no answer came from the client in time",
      false};
}

void TaskRun::answer(const json& responses) {
  std::lock_guard lock(mutex_);
  if (!record_.input_requests.is_object()) return;
  for (const auto& [key, response] : responses.items()) {
    if (record_.input_requests.contains(key)) answers_[key] = response;
  }
  answered_.notify_all();
}

void TaskRun::cancel() {
  {
    std::lock_guard lock(mutex_);
    if (record_.terminal()) return;
    record_.status = "cancelled";
    record_.status_message = "cancelled by the client";
    record_.input_requests = nullptr;
    save_locked();
    answered_.notify_all();
  }
  control_->cancel();
}

void TaskRun::finish(const CallResult& out) {
  {
    std::lock_guard lock(mutex_);
    if (record_.status != "cancelled") {
      record_.input_requests = nullptr;
      const json result = out.result.to_json();
      switch (out.outcome) {
        case CallOutcome::cancelled:
          record_.status = "cancelled";
          break;
        case CallOutcome::ok:
        case CallOutcome::tool_error:
        case CallOutcome::unknown_tool:
        case CallOutcome::denied:
        case CallOutcome::invalid_arguments:
        case CallOutcome::bad_result:
          // The tool (or toolmux's check of it) answered: its errors are
          // results, isError and all.
          if (!out.protocol_error) {
            record_.status = "completed";
            record_.result = result;
            break;
          }
          [[fallthrough]];
        default:
          // No answer of the tool's: a crash, a timeout, toolmux stopping.
          record_.status = "failed";
          if (out.protocol_error) {
            record_.error = {{"code", out.protocol_error->code},
                             {"message", out.protocol_error->message}};
            if (!out.protocol_error->data.is_null())
              record_.error["data"] = out.protocol_error->data;
          } else {
            record_.error = {{"code", jsonrpc::kInternalError},
                             {"message", first_text(result)},
                             {"data", {{"outcome", call_outcome_name(out.outcome)}}}};
          }
          record_.status_message = record_.error["message"].get<std::string>();
          break;
      }
      save_locked();
    }
  }
  tasks_.logger_.write(
      LogLevel::info, "task_ended",
      {{"session", session_->label()}, {"tool", record_.tool}, {"status", snapshot().status}});
  tasks_.ended(record_.id);
}

TaskRecord TaskRun::snapshot() const {
  std::lock_guard lock(mutex_);
  return record_;
}

// ---- Tasks

Tasks::Tasks(TaskOptions options, Logger& logger) : options_(std::move(options)), logger_(logger) {
  if (!options_.now) options_.now = std::chrono::system_clock::now;
}

std::int64_t Tasks::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(options_.now().time_since_epoch())
      .count();
}

Result<TaskStore*> Tasks::store() {
  std::lock_guard lock(mutex_);
  if (store_) return store_.get();
  if (!store_error_.empty()) return Status::unavailable(store_error_);
  if (!options_.open_store) {
    store_ = memory_task_store();
    return store_.get();
  }
  auto opened = options_.open_store();
  if (!opened.ok()) {
    store_error_ = "the task store did not open: " + opened.status().message();
    logger_.write(LogLevel::error, "task_store_failed", {{"reason", store_error_}});
    return Status::unavailable(store_error_);
  }
  store_ = std::move(*opened);
  logger_.write(LogLevel::info, "task_store_opened", {{"where", store_->where()}});
  return store_.get();
}

Status Tasks::save(const TaskRecord& record) {
  auto store = this->store();
  if (!store.ok()) return store.status();
  return (*store)->put(record);
}

std::shared_ptr<TaskRun> Tasks::link(std::shared_ptr<Session> session, json request_id,
                                     std::shared_ptr<CallControl> control, std::string tool) {
  std::string owner = session->principal();
  return std::make_shared<TaskRun>(*this, std::move(session), std::move(request_id),
                                   std::move(control), std::move(tool), std::move(owner));
}

void Tasks::started(const std::shared_ptr<TaskRun>& run, const std::string& id) {
  const std::int64_t now = now_ms();
  bool sweep = false;
  {
    std::lock_guard lock(mutex_);
    running_[id] = run;
    if (now - last_sweep_ms_ >= 60000) {
      last_sweep_ms_ = now;
      sweep = true;
    }
  }
  if (sweep) {
    if (auto store = this->store(); store.ok()) (*store)->expire(now);
  }
  logger_.write(LogLevel::info, "task_created", {{"tool", run->snapshot().tool}});
}

void Tasks::ended(const std::string& id) {
  std::lock_guard lock(mutex_);
  running_.erase(id);
}

std::shared_ptr<TaskRun> Tasks::running(const std::string& principal, const std::string& id) {
  std::shared_ptr<TaskRun> run;
  {
    std::lock_guard lock(mutex_);
    auto it = running_.find(id);
    if (it != running_.end()) run = it->second;
  }
  // The run's lock is taken outside this one: a run that saves holds its own
  // and then takes this one (store()), so the other order could deadlock.
  if (!run || run->snapshot().owner != principal) return nullptr;
  return run;
}

json Tasks::created(const TaskRecord& record) const {
  return {{"resultType", "task"},
          {"taskId", record.id},
          {"status", record.status},
          {"createdAt", iso(record.created_ms)},
          {"lastUpdatedAt", iso(record.updated_ms)},
          {"ttlMs", record.ttl_ms},
          {"pollIntervalMs", options_.poll_interval.count()}};
}

json Tasks::detailed(const TaskRecord& record) const {
  json out = created(record);
  out["resultType"] = "complete";
  if (!record.status_message.empty()) out["statusMessage"] = record.status_message;
  if (record.status == "completed" && !record.result.is_null()) out["result"] = record.result;
  if (record.status == "failed" && !record.error.is_null()) out["error"] = record.error;
  if (record.status == "input_required" && record.input_requests.is_object()) {
    out["inputRequests"] = record.input_requests;
  }
  return out;
}

std::variant<TaskRecord, JsonRpcError> Tasks::find(const std::string& principal, const json& params,
                                                   std::shared_ptr<TaskRun>& run) {
  const json* id = params.is_object() && params.contains("taskId") ? &params["taskId"] : nullptr;
  if (!id || !id->is_string() || id->get_ref<const std::string&>().empty() ||
      id->get_ref<const std::string&>().size() > kMaxTaskIdBytes) {
    return JsonRpcError::invalid_params("\"taskId\" must be a string of 1 to " +
                                        std::to_string(kMaxTaskIdBytes) + " bytes");
  }
  const std::string& task_id = id->get_ref<const std::string&>();
  const JsonRpcError unknown = JsonRpcError::invalid_params(
      "no task " + json_quoted(task_id) + " is known to this caller (it may have expired)");
  run = running(principal, task_id);
  if (run) return run->snapshot();
  auto store = this->store();
  if (!store.ok()) return JsonRpcError{jsonrpc::kInternalError, store.status().message(), nullptr};
  auto found = (*store)->get(principal, task_id);
  if (!found.ok()) {
    return JsonRpcError{jsonrpc::kInternalError,
                        "the task store could not be read: " + found.status().message(), nullptr};
  }
  if (!*found || (**found).created_ms + (**found).ttl_ms <= now_ms()) return unknown;
  return std::move(**found);
}

std::variant<json, JsonRpcError> Tasks::get(const std::string& principal, const json& params) {
  std::shared_ptr<TaskRun> run;
  auto found = find(principal, params, run);
  if (auto* e = std::get_if<JsonRpcError>(&found)) return std::move(*e);
  return detailed(std::get<TaskRecord>(found));
}

std::variant<json, JsonRpcError> Tasks::update(const std::string& principal, const json& params) {
  std::shared_ptr<TaskRun> run;
  auto found = find(principal, params, run);
  if (auto* e = std::get_if<JsonRpcError>(&found)) return std::move(*e);
  if (!params.contains("inputResponses") || !params["inputResponses"].is_object()) {
    return JsonRpcError::invalid_params("tasks/update needs \"inputResponses\" (an object)");
  }
  const TaskRecord& record = std::get<TaskRecord>(found);
  if (!run || record.status != "input_required") {
    return JsonRpcError::invalid_params("task " + json_quoted(record.id) +
                                        " is not waiting for input here (its status is " +
                                        record.status + ")");
  }
  run->answer(params["inputResponses"]);
  return json{{"resultType", "complete"}};
}

std::variant<json, JsonRpcError> Tasks::cancel(const std::string& principal, const json& params) {
  std::shared_ptr<TaskRun> run;
  auto found = find(principal, params, run);
  if (auto* e = std::get_if<JsonRpcError>(&found)) return std::move(*e);
  if (run) {
    run->cancel();
  } else if (TaskRecord& record = std::get<TaskRecord>(found); !record.terminal()) {
    // Run by an instance that is gone, or another one: marked, so that it
    // is told when it saves next, and every tasks/get says so meanwhile.
    record.status = "cancelled";
    record.status_message = "cancelled by the client";
    record.input_requests = nullptr;
    record.updated_ms = now_ms();
    if (Status saved = save(record); !saved.ok()) {
      return JsonRpcError{jsonrpc::kInternalError, saved.message(), nullptr};
    }
  }
  return json{{"resultType", "complete"}};
}

}  // namespace toolmux
