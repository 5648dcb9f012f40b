// The session store (session_store.h) in a deployment's PostgreSQL store
// (pg_store.h): table toolmux_sessions (id, record: the JSON text) and
// toolmux_session_events (session_id, seq, stream, data, final), one row per
// SSE event. Every instance on the database reads what any of them wrote.
//
// Thread-safe: each member takes a connection from the store's pool for its
// duration. None throws: when the store cannot be reached a write is lost
// and a read finds nothing (EventLog's contract).
#pragma once

#include <memory>

#include "src/store/pg_store.h"
#include "src/store/session_store.h"

namespace toolmux {

class PgSessionStore final : public SessionStore {
 public:
  explicit PgSessionStore(std::shared_ptr<PgStore> store) : store_(std::move(store)) {}

  void put_session(std::string_view id, const nlohmann::json& record) override;
  void delete_session(std::string_view id) override;
  std::vector<std::pair<std::string, nlohmann::json>> load_sessions() const override;
  void append_event(std::string_view session, const StoredEvent& event) override;
  std::vector<StoredEvent> events_after(std::string_view session,
                                        std::uint64_t after_seq) const override;
  std::uint64_t last_seq(std::string_view session) const override;
  void trim_events(std::string_view session, std::uint64_t below_seq) override;
  // Every write is committed when it returns: nothing to do.
  void flush() override {}

 private:
  const std::shared_ptr<PgStore> store_;
};

}  // namespace toolmux
