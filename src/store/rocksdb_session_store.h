// The session store (session_store.h) in RocksDB: data_dir/sessions.
//
// Keys: "s/<session id>" -> record JSON; "e/<session id>/<seq, 16 hex digits>"
// -> {"stream": n, "data": message text, "final": bool}, so a session's events are one
// ordered range. Thread-safe.
#pragma once

#include <filesystem>
#include <memory>

#include "src/store/session_store.h"

namespace toolmux {

class RocksDbSessionStore final : public SessionStore {
 public:
  // io_error naming the folder and RocksDB's reason when the database cannot
  // be opened.
  static Result<std::unique_ptr<RocksDbSessionStore>> open(const std::filesystem::path& data_dir);
  ~RocksDbSessionStore() override;

  void put_session(std::string_view id, const nlohmann::json& record) override;
  void delete_session(std::string_view id) override;
  std::vector<std::pair<std::string, nlohmann::json>> load_sessions() const override;
  void append_event(std::string_view session, const StoredEvent& event) override;
  std::vector<StoredEvent> events_after(std::string_view session,
                                        std::uint64_t after_seq) const override;
  std::uint64_t last_seq(std::string_view session) const override;
  void trim_events(std::string_view session, std::uint64_t below_seq) override;
  void flush() override;

  struct Impl;

 private:
  explicit RocksDbSessionStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace toolmux
