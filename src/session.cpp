#include "src/session.h"

#include <thread>

namespace toolmux {

bool Session::initialized() const {
  std::lock_guard lock(mutex_);
  return initialized_;
}

std::string Session::protocol_version() const {
  std::lock_guard lock(mutex_);
  return protocol_version_;
}

nlohmann::json Session::client_info() const {
  std::lock_guard lock(mutex_);
  return client_info_;
}

void Session::set_initialized(std::string protocol_version, nlohmann::json client_capabilities,
                              nlohmann::json client_info) {
  std::lock_guard lock(mutex_);
  initialized_ = true;
  protocol_version_ = std::move(protocol_version);
  client_capabilities_ = std::move(client_capabilities);
  client_info_ = std::move(client_info);
}

std::shared_ptr<CallControl> Session::begin_call(const nlohmann::json& request_id) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = calls_.try_emplace(request_id.dump(), nullptr);
  if (!inserted) return nullptr;
  it->second = std::make_shared<CallControl>();
  return it->second;
}

void Session::end_call(const nlohmann::json& request_id) {
  {
    std::lock_guard lock(mutex_);
    calls_.erase(request_id.dump());
  }
  calls_changed_.notify_all();
}

void Session::cancel_call(const nlohmann::json& request_id) {
  std::lock_guard lock(mutex_);
  if (auto it = calls_.find(request_id.dump()); it != calls_.end()) it->second->cancel();
}

void Session::cancel_all_calls() {
  std::lock_guard lock(mutex_);
  for (auto& [id, control] : calls_) control->cancel();
}

bool Session::wait_for_calls(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return calls_changed_.wait_for(lock, timeout, [this] { return calls_.empty(); });
}

bool Session::discovered(std::string_view tool) const {
  std::lock_guard lock(mutex_);
  return discovered_.find(tool) != discovered_.end();
}

void Session::add_discovered(const std::vector<std::string>& tools) {
  bool notify = false;
  {
    std::lock_guard lock(mutex_);
    bool changed = false;
    for (const auto& tool : tools) changed |= discovered_.insert(tool).second;
    if (changed && !list_change_pending_) {
      list_change_pending_ = true;
      notify = true;
    }
  }
  if (!notify) return;
  // Additions in the next moments ride on this one notification.
  std::thread([self = shared_from_this()] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    {
      std::lock_guard lock(self->mutex_);
      self->list_change_pending_ = false;
    }
    self->send({{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}});
  }).detach();
}

}  // namespace toolmux
