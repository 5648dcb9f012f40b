// The sessions of a server that keeps many (Streamable HTTP, legacy era): it
// mints their ids, finds them again for later requests, ends them (DELETE,
// idle expiry), caps how many there are, and keeps them in the SessionStore
// so that they outlive a restart. Transport-agnostic: the transport says what
// sink a session's messages go to (make_sink).
//
// A session belongs to the principal that created it: find() gives another
// principal the same "no such session" as an unknown id.
//
// With a shared store (several instances on one PostgreSQL database:
// SessionStore::shared()), a session lives in the store and each instance
// keeps a copy: find() loads a session this instance has not seen, and
// brings its copy up to date (or forgets it, when another instance ended it)
// at every request; a copy whose last change the store missed (it was down)
// is written to the store instead, so that the change is not undone. Idle
// expiry then only drops copies; the store's sessions expire by the time any
// instance last used them (touch_session, at most once a minute a session),
// swept by one instance at a time.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/base/logger.h"
#include "src/session/session.h"
#include "src/store/lazy_result_store.h"
#include "src/store/session_store.h"

namespace toolmux {

struct SessionLimits {
  std::size_t max_sessions = 1000;
  std::chrono::seconds idle_timeout{3600};  // ended when idle this long (and no call running)
  std::chrono::milliseconds sweep_interval{5000};
};

class SessionManager {
 public:
  using SinkFactory = std::function<std::shared_ptr<MessageSink>(const std::string& session_id)>;

  // `store` and `results` may be null (no persistence; nothing to delete).
  // Sessions in the store are restored at once, with sinks from make_sink.
  SessionManager(SessionLimits limits, SessionStore* store,
                 std::shared_ptr<LazyResultStore> results, SinkFactory make_sink, Logger& logger);
  ~SessionManager();
  SessionManager(const SessionManager&) = delete;
  SessionManager& operator=(const SessionManager&) = delete;

  // A new session for `principal`, or null when max_sessions are open. It is
  // not in the store yet: keep() puts it there once its initialize succeeded.
  std::shared_ptr<Session> create(const std::string& principal);
  // Writes the session made by create() to the store, so that it outlives a
  // restart and other instances find it; from then on, changes of its state
  // are written through (unchecked). The store's Status when the write
  // fails: its client must not be given the id (end() it, and say to retry);
  // not_found when there is no such session. OK without a store.
  Status keep(const std::string& id);
  // The session with `id` if it exists and belongs to `principal`; marks it used.
  // Null also when the store cannot be read and this instance has no copy:
  // then `unreachable` (when given) gets the store's Status, since whether the
  // session exists cannot be told (its client must not take it for ended).
  std::shared_ptr<Session> find(const std::string& id, const std::string& principal,
                                Status* unreachable = nullptr);
  // Ends the session: its calls are cancelled, its results deleted, it is
  // forgotten. False when find() would not have found it.
  bool end(const std::string& id, const std::string& principal);
  // Ends sessions idle longer than the limit; called periodically. A session
  // with a call in flight or a connection held open is not idle.
  std::size_t expire_idle();

  // Told the id of each session ended here (deleted, or expired), after it
  // was removed from the store: the other instances are to forget it. Set
  // before sessions are served.
  void set_end_listener(std::function<void(const std::string& id)> listener);
  // Another instance ended the session whose id has this digest
  // (session_id_digest): the copy here, if any, is dropped (its calls
  // cancelled, its streams closed). Nothing is deleted from the store.
  void forget_ended_elsewhere(const std::string& digest);
  // Another instance stored events for that session: its streams open here,
  // if any, look at once (MessageSink::look_again).
  void look_again_elsewhere(const std::string& digest);
  // A connection that belongs to the session and stays open (its SSE stream,
  // where a quiet client waits for notifications) keeps it from idling out:
  // hold() when it opens, release() when it closes, which counts as a use.
  // Unknown ids are ignored.
  void hold(const std::string& id);
  void release(const std::string& id);

  std::size_t count() const;
  std::vector<std::shared_ptr<Session>> all() const;

  // A session as an operator's status page shows it: never its id.
  struct Summary {
    std::string label;  // "http-1", ...
    std::string principal;
    std::string protocol_version;  // negotiated; "" before initialize
    // Since this process created it, or restored it after a restart.
    std::chrono::steady_clock::duration age{};
    std::chrono::steady_clock::duration idle{};  // since its last request
  };
  // The `limit` newest sessions, newest first.
  std::vector<Summary> summaries(std::size_t limit) const;

 private:
  struct Entry {
    std::shared_ptr<Session> session;
    std::chrono::steady_clock::time_point last_used;
    bool kept = false;  // in the store: keep(), restored, or loaded from it
    std::chrono::steady_clock::time_point touched{};  // shared store: last touch_session
    std::size_t holds = 0;                            // open connections (hold/release)
    std::chrono::steady_clock::time_point created = std::chrono::steady_clock::now();
    std::string digest;  // session_id_digest of its id, once asked for
    // The store missed the last change of its state (set by its state listener).
    std::shared_ptr<std::atomic<bool>> unsaved = std::make_shared<std::atomic<bool>>(false);
  };
  // The entry whose id has this digest, or end(). Under mutex_.
  std::map<std::string, Entry, std::less<>>::iterator find_digest(const std::string& digest);
  // A new session and its entry, its changes written through to the store.
  Entry make_entry(const std::string& id, const std::string& principal, const std::string& label,
                   bool kept);
  // Ends the session here; `stored`: and in the store, and tells the others.
  void forget(const std::shared_ptr<Session>& session, const char* why, bool stored = true);
  void tell_ended(const std::string& id);
  // Drops this instance's copy only (shared store).
  void drop_copy(const std::shared_ptr<Session>& session, const char* why);
  std::shared_ptr<Session> find_shared(const std::string& id, const std::string& principal,
                                       Status* unreachable = nullptr);
  bool shared() const { return store_ && store_->shared(); }

  const SessionLimits limits_;
  SessionStore* const store_;
  const std::shared_ptr<LazyResultStore> results_;
  const SinkFactory make_sink_;
  Logger& logger_;

  mutable std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> sessions_;
  std::size_t next_label_ = 1;
  std::function<void(const std::string&)> end_listener_;

  std::mutex sweeper_mutex_;
  std::condition_variable sweeper_wake_;
  bool stopping_ = false;
  std::thread sweeper_;
};

}  // namespace toolmux
