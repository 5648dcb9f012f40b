// Where HTTP sessions are kept so that they outlive a restart of the server: a
// RocksDB database in data_dir/sessions holding each session's record (its
// principal and Session::state()) and the SSE events sent to it, so that a
// client reconnecting with Last-Event-ID after a restart still gets what it
// missed.
//
// One process per data directory serves HTTP sessions: open() fails, naming
// the folder, when another process holds it.
//
// Keys: "s/<session id>" -> record JSON; "e/<session id>/<seq, 16 hex digits>"
// -> {"stream": n, "data": message text, "final": bool}, so a session's events are one
// ordered range. Thread-safe.
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

// The transport's event log (transports/event_log.h), kept on disk.
class SessionStore final : public EventLog {
 public:
  // io_error naming the folder and RocksDB's reason when the database cannot
  // be opened.
  static Result<std::unique_ptr<SessionStore>> open(const std::filesystem::path& data_dir);
  ~SessionStore();

  void put_session(std::string_view id, const nlohmann::json& record);
  // Deletes the session's record and all its events.
  void delete_session(std::string_view id);
  // Every stored session: (id, record).
  std::vector<std::pair<std::string, nlohmann::json>> load_sessions() const;

  void append_event(std::string_view session, const StoredEvent& event) override;
  std::vector<StoredEvent> events_after(std::string_view session,
                                        std::uint64_t after_seq) const override;
  std::uint64_t last_seq(std::string_view session) const override;
  void trim_events(std::string_view session, std::uint64_t below_seq) override;

  // Makes everything written so far durable (shutdown).
  void flush();

  struct Impl;

 private:
  explicit SessionStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace toolmux
