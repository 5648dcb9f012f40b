// Where HTTP sessions are kept so that they outlive a restart of the server:
// each session's record (its principal and Session::state()) and the SSE
// events sent to it, so that a client reconnecting with Last-Event-ID after a
// restart still gets what it missed. An interface with two implementations:
//
// - RocksDbSessionStore (rocksdb_session_store.h): a RocksDB database in
//   data_dir/sessions, what `serve --http` uses. One process per data
//   directory serves HTTP sessions: open() fails, naming the folder, when
//   another process holds it.
// - PgSessionStore (pg_session_store.h): tables in a deployment's PostgreSQL
//   store (pg_store.h), which several instances can reach.
//
// Thread-safe; no member throws (a write that fails is lost, as the
// transport's event log allows).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/status.h"
#include "transports/event_log.h"

namespace toolmux {

// The transport's event log (transports/event_log.h), kept in a store.
class SessionStore : public EventLog {
 public:
  // The RocksDB store in data_dir/sessions (RocksDbSessionStore::open).
  static Result<std::unique_ptr<SessionStore>> open(const std::filesystem::path& data_dir);

  // Stores the session's record, replacing any before.
  virtual void put_session(std::string_view id, const nlohmann::json& record) = 0;
  // Deletes the session's record and all its events.
  virtual void delete_session(std::string_view id) = 0;
  // Every stored session: (id, record), by id.
  virtual std::vector<std::pair<std::string, nlohmann::json>> load_sessions() const = 0;

  // Makes everything written so far durable (shutdown).
  virtual void flush() = 0;
};

}  // namespace toolmux
