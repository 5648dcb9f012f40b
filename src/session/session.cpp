#include "src/session/session.h"

#include <algorithm>
#include <optional>
#include <system_error>
#include <thread>

#include "src/base/jsonrpc.h"

namespace toolmux {

std::shared_ptr<Session> Session::for_request(std::shared_ptr<Session> carrier, RequestMeta meta,
                                              std::string owner,
                                              std::shared_ptr<MessageSink> sink) {
  auto view = std::make_shared<Session>(std::move(owner), carrier->principal(), carrier->label(),
                                        std::move(sink));
  static std::atomic<std::uint64_t> next_request{0};
  view->admission_key_ = "request-" + std::to_string(++next_request);
  view->meta_ = std::make_shared<const RequestMeta>(std::move(meta));
  view->carrier_ = std::move(carrier);
  view->initialized_ = true;
  return view;
}

bool Session::initialized() const {
  std::lock_guard lock(mutex_);
  return initialized_;
}

std::string Session::protocol_version() const {
  if (meta_) return meta_->protocol_version;
  std::lock_guard lock(mutex_);
  return protocol_version_;
}

nlohmann::json Session::client_info() const {
  if (meta_) return meta_->client_info;
  std::lock_guard lock(mutex_);
  return client_info_;
}

nlohmann::json Session::client_capabilities() const {
  if (meta_) return meta_->client_capabilities;
  std::lock_guard lock(mutex_);
  return client_capabilities_;
}

bool Session::client_may_be_asked() const {
  // A 2026-07-28 client is asked in the call's answer, never while it runs.
  if (meta_) return false;
  std::lock_guard lock(mutex_);
  return client_capabilities_.is_object() && (client_capabilities_.contains("elicitation") ||
                                              client_capabilities_.contains("sampling"));
}

void Session::set_initialized(std::string protocol_version, nlohmann::json client_capabilities,
                              nlohmann::json client_info) {
  {
    std::lock_guard lock(mutex_);
    initialized_ = true;
    protocol_version_ = std::move(protocol_version);
    client_capabilities_ = std::move(client_capabilities);
    client_info_ = std::move(client_info);
  }
  state_changed();
}

nlohmann::json Session::state() const {
  std::lock_guard lock(mutex_);
  nlohmann::json state{{"initialized", initialized_},
                       {"protocolVersion", protocol_version_},
                       {"clientCapabilities", client_capabilities_},
                       {"clientInfo", client_info_},
                       {"logLevel", log_level_name(log_level_.load())},
                       {"discovered", discovered_}};
  return state;
}

void Session::restore(const nlohmann::json& state) {
  if (!state.is_object()) return;
  std::lock_guard lock(mutex_);
  initialized_ = state.value("initialized", false);
  protocol_version_ = state.value("protocolVersion", "");
  client_capabilities_ = state.value("clientCapabilities", nlohmann::json::object());
  client_info_ = state.value("clientInfo", nlohmann::json::object());
  if (auto level = log_level_from_name(state.value("logLevel", ""))) log_level_.store(*level);
  if (state.contains("discovered") && state["discovered"].is_array()) {
    for (const auto& name : state["discovered"]) {
      if (name.is_string()) discovered_.insert(name.get<std::string>());
    }
  }
}

void Session::set_state_listener(std::function<void(const Session&)> listener) {
  std::lock_guard lock(mutex_);
  state_listener_ = std::move(listener);
}

void Session::state_changed() {
  std::function<void(const Session&)> listener;
  {
    std::lock_guard lock(mutex_);
    listener = state_listener_;
  }
  if (listener) listener(*this);
}

ClientAnswer Session::request_client(const std::string& method, nlohmann::json params,
                                     const nlohmann::json& related_request,
                                     const CallControl* control, std::chrono::milliseconds timeout,
                                     const std::stop_token& stop) {
  if (control && control->carried()) {
    // Its request would reach the client only after the call ended. A call is
    // carried only for a client that declared nothing it could be asked, or
    // by the stdio reader for a tool that promised to ask nothing.
    return {std::nullopt, "the client did not declare that it can answer " + method, false};
  }
  auto pending = std::make_shared<PendingAnswer>();
  nlohmann::json id;
  {
    std::lock_guard lock(mutex_);
    // Our ids are strings, so they never collide with a client's request ids
    // in logs, and never with each other within the session.
    id = "toolmux-" + std::to_string(next_request_id_++);
    pending_answers_.emplace(jsonrpc::id_key(id), pending);
  }
  send_related({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}},
               related_request);
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  // Woken by the answer (deliver_response), by the call being cancelled or
  // aborted or the request ending (these callbacks, which take the lock so a
  // wake-up cannot fall between a look and the wait), or by the earlier of
  // give_up and the call's deadline. The callbacks go after the lock is
  // released: their end waits for one in progress, which may want the lock.
  auto wake = [this] {
    std::lock_guard guard(mutex_);
    answers_changed_.notify_all();
  };
  std::optional<std::stop_callback<decltype(wake)>> on_call_stop;
  if (control) on_call_stop.emplace(control->stop_token(), wake);
  const std::stop_callback on_request_end(stop, wake);
  auto until = give_up;
  if (control) until = std::min(until, control->deadline());
  std::unique_lock lock(mutex_);
  answers_changed_.wait_until(lock, until, [&] {
    return pending->done || (control && (control->cancelled() || control->aborted())) ||
           stop.stop_requested();
  });
  if (!pending->done) {
    if (control && control->stop_requested()) {
      pending->answer.error = "the call was cancelled or timed out while waiting for the client";
    } else if (stop.stop_requested()) {
      pending->answer.error = "the request it was sent for has ended";
    } else {
      pending->answer.error = "the client did not answer " + method + " in time";
    }
  }
  pending_answers_.erase(jsonrpc::id_key(id));
  ClientAnswer answer = pending->answer;
  lock.unlock();
  return answer;
}

bool Session::deliver_response(const nlohmann::json& id, const nlohmann::json& message) {
  {
    std::lock_guard lock(mutex_);
    auto it = pending_answers_.find(jsonrpc::id_key(id));
    if (it == pending_answers_.end()) return false;
    PendingAnswer& pending = *it->second;
    if (message.contains("result")) {
      pending.answer.result = message["result"];
    } else {
      const nlohmann::json& error = message.value("error", nlohmann::json::object());
      pending.answer.error =
          "the client answered with an error: " +
          (error.is_object() ? error.value("message", std::string("(no message)"))
                             : std::string("(malformed)"));
    }
    pending.done = true;
  }
  answers_changed_.notify_all();
  return true;
}

std::shared_ptr<CallControl> Session::begin_call(const nlohmann::json& request_id) {
  if (carrier_) return carrier_->begin_call(request_id);
  std::lock_guard lock(mutex_);
  auto [it, inserted] = calls_.try_emplace(jsonrpc::id_key(request_id), nullptr);
  if (!inserted) return nullptr;
  it->second = std::make_shared<CallControl>();
  return it->second;
}

void Session::end_call(const nlohmann::json& request_id) {
  if (carrier_) {
    carrier_->end_call(request_id);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    calls_.erase(jsonrpc::id_key(request_id));
  }
  calls_changed_.notify_all();
}

// The calls are stopped outside the lock: stopping one runs the callbacks of
// whoever waits for it (CallControl::stop_token), which may take it.
void Session::cancel_call(const nlohmann::json& request_id) {
  if (carrier_) {
    carrier_->cancel_call(request_id);
    return;
  }
  std::shared_ptr<CallControl> control;
  {
    std::lock_guard lock(mutex_);
    if (auto it = calls_.find(jsonrpc::id_key(request_id)); it != calls_.end())
      control = it->second;
  }
  if (control) control->cancel();
}

std::vector<std::shared_ptr<CallControl>> Session::calls_in_flight() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<CallControl>> controls;
  controls.reserve(calls_.size());
  for (const auto& [id, control] : calls_) controls.push_back(control);
  return controls;
}

void Session::cancel_all_calls() {
  for (const auto& control : calls_in_flight()) control->cancel();
}

void Session::abort_all_calls() {
  for (const auto& control : calls_in_flight()) control->abort();
}

bool Session::wait_for_calls(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return calls_changed_.wait_for(lock, timeout, [this] { return calls_.empty(); });
}

bool Session::discovered(std::string_view tool) const {
  if (meta_) return false;
  std::lock_guard lock(mutex_);
  return discovered_.find(tool) != discovered_.end();
}

void Session::add_discovered(const std::vector<std::string>& tools) {
  // A 2026-07-28 client calls what its search found by name: there is no list to grow.
  if (meta_) return;
  bool notify = false;
  bool changed = false;
  {
    std::lock_guard lock(mutex_);
    for (const auto& tool : tools) changed |= discovered_.insert(tool).second;
    if (changed && !list_change_pending_) {
      list_change_pending_ = true;
      notify = true;
    }
  }
  if (changed) state_changed();
  if (!notify) return;
  // Additions in the next moments ride on this one notification.
  auto notify_now = [self = shared_from_this()] {
    {
      std::lock_guard lock(self->mutex_);
      self->list_change_pending_ = false;
    }
    self->send({{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}});
  };
  try {
    std::thread([notify_now] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      notify_now();
    }).detach();
  } catch (const std::system_error&) {
    notify_now();  // no thread to wait on: told at once, without the batching
  }
}

}  // namespace toolmux
