// The HTTP sessions of `toolmux serve --http`, as the Streamable HTTP transport
// finds them (transports/http_sessions.h): SessionManager's sessions, each
// with the SessionStreams its messages go on and its way into the McpServer.
//
// Sessions restored from `store` when this is made get their streams at once.
// The carriers of 2026-07-28 requests (carrier()) are Sessions of their own,
// outside SessionManager, with streams that keep no events; this keeps them
// (weakly) only so that a shutdown reaches their calls (all()).
// Thread-safe, like SessionManager. `server`, `store` and `logger` must
// outlive it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "src/protocol/mcp_server.h"
#include "src/session/session_manager.h"
#include "transports/http_sessions.h"

namespace toolmux {

class SessionDirectory final : public HttpSessions {
 public:
  SessionDirectory(McpServer& server, SessionLimits limits, SessionStore* store,
                   std::shared_ptr<LazyResultStore> results, Logger& logger);

  HttpSession create(const std::string& principal) override;
  Status keep(const std::string& id) override { return manager_->keep(id); }
  HttpSession find(const std::string& id, const std::string& principal) override;
  bool end(const std::string& id, const std::string& principal) override {
    return manager_->end(id, principal);
  }
  void hold(const std::string& id) override { manager_->hold(id); }
  void release(const std::string& id) override { manager_->release(id); }
  std::size_t count() const override { return manager_->count(); }
  HttpSession carrier(const std::string& principal) override;

  SessionManager& manager() { return *manager_; }
  // The sessions open now and the carriers of the requests being served:
  // what a shutdown waits for, then cancels.
  std::vector<std::shared_ptr<Session>> all();
  // Requests of the 2026-07-28 protocol being served now (their carriers).
  std::size_t requests_in_flight();

 private:
  HttpSession entry(std::shared_ptr<Session> session);

  McpServer& server_;
  // Each session's streams, as made for it: the session owns them (they are
  // its sink), this finds them again. Entries of ended sessions expire.
  std::mutex mutex_;
  std::map<std::string, std::weak_ptr<SessionStreams>, std::less<>> streams_;
  // Carriers made, the gone ones swept as new ones come (amortized: when
  // the list has doubled since the last sweep).
  std::vector<std::weak_ptr<Session>> carriers_;
  std::size_t sweep_at_ = 64;
  std::uint64_t carried_ = 0;  // carriers made, for their labels
  // Made last: restoring sessions makes their streams, recorded above.
  std::optional<SessionManager> manager_;
};

}  // namespace toolmux
