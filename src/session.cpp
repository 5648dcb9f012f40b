#include "src/session.h"

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

}  // namespace toolmux
