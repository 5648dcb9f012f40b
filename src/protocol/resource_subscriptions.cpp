#include "src/protocol/resource_subscriptions.h"

#include <algorithm>

#include "src/base/jsonrpc.h"

namespace toolmux {

std::vector<std::shared_ptr<Session>> ResourceSubscriptions::live(
    std::vector<std::weak_ptr<Session>>& list) {
  std::vector<std::shared_ptr<Session>> out;
  std::erase_if(list, [&out](const std::weak_ptr<Session>& weak) {
    auto session = weak.lock();
    if (!session) return true;
    out.push_back(std::move(session));
    return false;
  });
  return out;
}

std::vector<std::string> ResourceSubscriptions::prune_locked() {
  std::vector<std::string> emptied;
  for (auto it = subscribers_.begin(); it != subscribers_.end();) {
    if (live(it->second).empty()) {
      emptied.push_back(it->first);
      it = subscribers_.erase(it);
    } else {
      ++it;
    }
  }
  return emptied;
}

void ResourceSubscriptions::add_session(const std::shared_ptr<Session>& session) {
  std::vector<std::string> emptied;
  {
    std::lock_guard lock(mutex_);
    for (const auto& s : live(sessions_)) {
      if (s == session) return;
    }
    sessions_.push_back(session);
    emptied = prune_locked();
  }
  for (const std::string& uri : emptied) last_left_(uri);
}

bool ResourceSubscriptions::has_subscribers(const std::string& uri) {
  std::lock_guard lock(mutex_);
  auto it = subscribers_.find(uri);
  return it != subscribers_.end() && !live(it->second).empty();
}

void ResourceSubscriptions::subscribe(const std::shared_ptr<Session>& session,
                                      const std::string& uri) {
  std::lock_guard lock(mutex_);
  auto& list = subscribers_[uri];
  for (const auto& s : live(list)) {
    if (s == session) return;
  }
  list.push_back(session);
}

bool ResourceSubscriptions::unsubscribe(const std::shared_ptr<Session>& session,
                                        const std::string& uri) {
  bool found = false;
  bool last = false;
  {
    std::lock_guard lock(mutex_);
    auto it = subscribers_.find(uri);
    if (it == subscribers_.end()) return false;
    std::erase_if(it->second, [&](const std::weak_ptr<Session>& weak) {
      auto s = weak.lock();
      if (s && s != session) return false;
      found = found || s == session;
      return true;
    });
    if (it->second.empty()) {
      subscribers_.erase(it);
      last = true;
    }
  }
  if (last) last_left_(uri);
  return found;
}

void ResourceSubscriptions::resource_updated(const std::string& uri) {
  std::vector<std::shared_ptr<Session>> targets;
  bool emptied = false;
  {
    std::lock_guard lock(mutex_);
    auto it = subscribers_.find(uri);
    if (it == subscribers_.end()) return;
    targets = live(it->second);
    if (targets.empty()) {
      subscribers_.erase(it);
      emptied = true;
    }
  }
  if (emptied) last_left_(uri);
  const auto message =
      jsonrpc::make_notification("notifications/resources/updated", {{"uri", uri}});
  for (const auto& s : targets) s->send(message);
}

void ResourceSubscriptions::broadcast(const nlohmann::json& message) {
  std::vector<std::shared_ptr<Session>> targets;
  {
    std::lock_guard lock(mutex_);
    targets = live(sessions_);
  }
  for (const auto& s : targets) s->send(message);
}

void ResourceSubscriptions::resources_list_changed() {
  broadcast(
      jsonrpc::make_notification("notifications/resources/list_changed", nlohmann::json::object()));
}

void ResourceSubscriptions::prompts_list_changed() {
  broadcast(
      jsonrpc::make_notification("notifications/prompts/list_changed", nlohmann::json::object()));
}

}  // namespace toolmux
