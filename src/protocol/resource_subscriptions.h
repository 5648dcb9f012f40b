// Which sessions hear about resource changes: every initialized session gets
// notifications/resources/list_changed and notifications/prompts/list_changed,
// and the sessions subscribed to a URI (resources/subscribe) get
// notifications/resources/updated for it.
//
// Sessions are held weakly: one that has ended and been released drops out,
// and its subscriptions with it. `last_left` is called (outside the lock) for
// a URI whose last subscriber left, so that the provider can stop watching it.
// Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "catalog/provider_events.h"
#include "src/session/session.h"

namespace toolmux {

class ResourceSubscriptions final : public ProviderEventSink {
 public:
  explicit ResourceSubscriptions(std::function<void(const std::string& uri)> last_left)
      : last_left_(std::move(last_left)) {}

  // An initialized session: list_changed notifications go to it from now on
  // (again is harmless).
  void add_session(const std::shared_ptr<Session>& session);

  // True when some live session is subscribed to `uri`.
  bool has_subscribers(const std::string& uri);
  // Adds the subscription (again is harmless).
  void subscribe(const std::shared_ptr<Session>& session, const std::string& uri);
  // Removes it; false when the session was not subscribed to `uri`.
  bool unsubscribe(const std::shared_ptr<Session>& session, const std::string& uri);

  // ProviderEventSink.
  void resource_updated(const std::string& uri) override;
  void resources_list_changed() override;
  void prompts_list_changed() override;

 private:
  // The live sessions of `list`, dropping the ended ones.
  static std::vector<std::shared_ptr<Session>> live(std::vector<std::weak_ptr<Session>>& list);
  void broadcast(const nlohmann::json& message);
  // Drops ended sessions from every URI; returns the URIs left without subscribers.
  std::vector<std::string> prune_locked();

  const std::function<void(const std::string&)> last_left_;
  std::mutex mutex_;
  std::vector<std::weak_ptr<Session>> sessions_;
  std::map<std::string, std::vector<std::weak_ptr<Session>>> subscribers_;
};

}  // namespace toolmux
