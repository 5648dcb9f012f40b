// The session store (session_store.h) in PostgreSQL, shared by every toolmux
// instance on one database (pg_store.h): a legacy HTTP session made on one
// instance is found by any other, which loads it when a request names it,
// and the SSE events any of them sent it are read back by whichever instance
// a client resumes on (Last-Event-ID).
//
// Tables (pg_schema.cpp): toolmux_sessions, one row per session (its record
// as JSON text, the last event seq handed out, when an instance last used
// it), and toolmux_session_events, one row per event, deleted with their
// session. Seqs come from the session's row (UPDATE ... RETURNING), so they
// count up across instances.
//
// Failures: the event-log members cannot report one (the transport goes on
// without the log); they log it, rate limited. load_session and put_session
// give the store's Status (put_session logs it too).
//
// Thread-safe: each method takes a connection from the store's pool.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "src/base/logger.h"
#include "src/store/pg_connection.h"
#include "src/store/pg_store.h"
#include "src/store/session_store.h"

namespace toolmux {

class PgSessionStore final : public SessionStore {
 public:
  // `logger` outlives the store. The pool's Status when no connection can be
  // had.
  static Result<std::unique_ptr<PgSessionStore>> open(std::shared_ptr<PgStore> store,
                                                      Logger& logger);

  Status put_session(std::string_view id, const nlohmann::json& record) override;
  void delete_session(std::string_view id) override;
  std::vector<std::pair<std::string, nlohmann::json>> load_sessions() const override;
  Result<std::optional<nlohmann::json>> load_session(std::string_view id) const override;
  void touch_session(std::string_view id) override;
  std::vector<std::string> expire_sessions(std::chrono::seconds idle) override;
  void flush() override {}
  std::string where() const override;

  void append_event(std::string_view session, const StoredEvent& event) override;
  std::vector<StoredEvent> events_after(std::string_view session,
                                        std::uint64_t after_seq) const override;
  std::vector<StoredEvent> stream_events_after(std::string_view session, std::uint64_t stream,
                                               std::uint64_t after_seq) const override;
  std::uint64_t last_seq(std::string_view session) const override;
  void trim_events(std::string_view session, std::uint64_t below_seq) override;
  bool shared() const override { return true; }
  std::uint64_t next_seq(std::string_view session) override;

  // From now on, an event stored for a session also tells the other
  // instances, in the statement that stores it (so once it is there to be
  // read): "session_events" with the session's digest, from `instance_id`
  // (src/store/cluster_bus.h), so that a stream open on another instance
  // looks at once instead of at its next poll. Before the store is used.
  void set_append_notice(std::string instance_id) { notice_from_ = std::move(instance_id); }

  // The wall clock, replaceable in tests of expiry.
  std::function<std::chrono::system_clock::time_point()> now = std::chrono::system_clock::now;

 private:
  PgSessionStore(std::shared_ptr<PgStore> store, Logger& logger)
      : store_(std::move(store)), logger_(logger) {}
  void failed(const char* what, const Status& status) const;
  std::vector<StoredEvent> read_events(std::string_view sql,
                                       const std::vector<PgParam>& params) const;
  std::int64_t now_ns() const;

  const std::shared_ptr<PgStore> store_;
  Logger& logger_;
  std::string notice_from_;  // set_append_notice: empty for none
  mutable std::atomic<std::uint64_t> failures_{0};
};

}  // namespace toolmux
