#include "src/app/session_directory.h"

#include <algorithm>
#include <utility>

namespace toolmux {

SessionDirectory::SessionDirectory(McpServer& server, SessionLimits limits, SessionStore* store,
                                   std::shared_ptr<LazyResultStore> results, Logger& logger)
    : server_(server) {
  manager_.emplace(
      limits, store, std::move(results),
      [this, store](const std::string& id) {
        auto streams = std::make_shared<SessionStreams>(id, store);
        std::lock_guard lock(mutex_);
        // Ended sessions' entries go as new ones come: at most max_sessions live.
        std::erase_if(streams_, [](const auto& entry) { return entry.second.expired(); });
        streams_[id] = streams;
        return streams;
      },
      logger);
}

HttpSession SessionDirectory::entry(std::shared_ptr<Session> session) {
  if (!session) return {};
  std::shared_ptr<SessionStreams> streams;
  {
    std::lock_guard lock(mutex_);
    if (auto it = streams_.find(session->id()); it != streams_.end()) streams = it->second.lock();
  }
  // The session owns its streams, so they live as long as it does.
  if (!streams) return {};
  return {std::make_shared<SessionPeer>(server_, std::move(session)), std::move(streams), {}};
}

HttpSession SessionDirectory::create(const std::string& principal) {
  return entry(manager_->create(principal));
}

HttpSession SessionDirectory::carrier(const std::string& principal) {
  // No event log: a 2026-07-28 stream is not resumable.
  auto streams = std::make_shared<SessionStreams>("principal:" + principal, nullptr);
  std::lock_guard lock(mutex_);
  auto session = std::make_shared<Session>("principal:" + principal, principal,
                                           "modern-" + std::to_string(++carried_), streams);
  if (carriers_.size() >= sweep_at_) {
    std::erase_if(carriers_, [](const auto& carrier) { return carrier.expired(); });
    sweep_at_ = std::max<std::size_t>(64, 2 * carriers_.size());
  }
  carriers_.push_back(session);
  return {std::make_shared<SessionPeer>(server_, std::move(session)), std::move(streams), {}};
}

std::vector<std::shared_ptr<Session>> SessionDirectory::all() {
  std::vector<std::shared_ptr<Session>> out = manager_->all();
  std::lock_guard lock(mutex_);
  for (const auto& weak : carriers_) {
    if (auto carrier = weak.lock()) out.push_back(std::move(carrier));
  }
  return out;
}

std::size_t SessionDirectory::requests_in_flight() {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(std::count_if(carriers_.begin(), carriers_.end(),
                                                [](const auto& weak) { return !weak.expired(); }));
}

HttpSession SessionDirectory::find(const std::string& id, const std::string& principal) {
  Status unreachable;
  HttpSession found = entry(manager_->find(id, principal, &unreachable));
  if (!found && !unreachable.ok()) found.unavailable = unreachable.message();
  return found;
}

}  // namespace toolmux
