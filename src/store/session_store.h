// Where HTTP sessions are kept so that they outlive a restart of the server:
// each session's record (its principal and Session::state()) and the SSE
// events sent to it, so that a client reconnecting with Last-Event-ID after a
// restart still gets what it missed.
//
// Two implementations: a RocksDB database in data_dir/sessions, one process
// per data directory (open() fails, naming the folder, when another process
// holds it); and PostgreSQL (pg_session_store.h), shared by every instance on
// the database, so that a session's requests may land on any of them.
//
// RocksDB keys: "s/<session id>" -> record JSON; "e/<session id>/<seq, 16 hex digits>"
// -> {"stream": n, "data": message text, "final": bool}, so a session's events are one
// ordered range. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/status.h"
#include "transports/event_log.h"

namespace toolmux {

// The transport's event log (transports/event_log.h), kept on disk (RocksDB)
// or in the shared PostgreSQL store (pg_session_store.h).
class SessionStore : public EventLog {
 public:
  // The RocksDB store in data_dir/sessions. io_error naming the folder and
  // RocksDB's reason when the database cannot be opened.
  static Result<std::unique_ptr<SessionStore>> open(const std::filesystem::path& data_dir);
  ~SessionStore() override = default;

  // Writes the session's record (a new one, or over the one stored); the
  // store's Status when it cannot.
  virtual Status put_session(std::string_view id, const nlohmann::json& record) = 0;
  // Deletes the session's record and all its events.
  virtual void delete_session(std::string_view id) = 0;
  // Every stored session: (id, record). A shared store gives none: its
  // sessions are loaded one at a time, when asked for (load_session).
  virtual std::vector<std::pair<std::string, nlohmann::json>> load_sessions() const = 0;
  // One session's record; nullopt when it is not stored; the store's Status
  // when it cannot be read.
  virtual Result<std::optional<nlohmann::json>> load_session(std::string_view id) const = 0;

  // Shared stores only: marks the session used now, so that no instance's
  // sweep ends it (an instance calls it at most once a minute a session).
  virtual void touch_session(std::string_view /*id*/) {}
  // Shared stores only: deletes the sessions no instance has touched for
  // `idle` and returns their ids (for their results and the other
  // instances to forget). One instance at a time does it.
  virtual std::vector<std::string> expire_sessions(std::chrono::seconds /*idle*/) { return {}; }

  // Makes everything written so far durable (shutdown).
  virtual void flush() = 0;
  // For logs: the folder, or the database.
  virtual std::string where() const = 0;
};

}  // namespace toolmux
