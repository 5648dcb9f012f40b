#include "src/session/session_manager.h"

#include <algorithm>

#include "src/base/digest.h"
#include "src/base/random_id.h"

namespace toolmux {

using nlohmann::json;

namespace {

// What the store keeps of a session.
json record_of(const Session& s) {
  return {{"principal", s.principal()}, {"label", s.label()}, {"state", s.state()}};
}

}  // namespace

SessionManager::SessionManager(SessionLimits limits, SessionStore* store,
                               std::shared_ptr<LazyResultStore> results, SinkFactory make_sink,
                               Logger& logger)
    : limits_(limits),
      store_(store),
      results_(std::move(results)),
      make_sink_(std::move(make_sink)),
      logger_(logger) {
  if (store_) {
    const auto now = std::chrono::steady_clock::now();
    for (auto& [id, record] : store_->load_sessions()) {
      const std::string label = record.value("label", "http");
      Entry entry = make_entry(id, record.value("principal", ""), label, /*kept=*/true);
      entry.session->restore(record.value("state", json::object()));
      entry.last_used = now;
      sessions_[id] = std::move(entry);
      // Labels go on from the highest restored one.
      if (label.rfind("http-", 0) == 0) {
        next_label_ =
            std::max<std::size_t>(next_label_, std::strtoull(label.c_str() + 5, nullptr, 10) + 1);
      }
    }
    if (!sessions_.empty()) {
      logger_.write(LogLevel::info, "sessions_restored", {{"sessions", sessions_.size()}});
      // Their offloaded results are on disk. Open the store now: resources/list
      // and resources/read never open it, so they would not see them.
      if (results_) {
        if (const auto opened = results_->get(); !opened.ok()) {
          logger_.write(LogLevel::warning, "result_store_unavailable",
                        {{"reason", opened.message()}});
        }
      }
    }
  }
  sweeper_ = std::thread([this] {
    std::unique_lock lock(sweeper_mutex_);
    while (!stopping_) {
      sweeper_wake_.wait_for(lock, limits_.sweep_interval);
      if (stopping_) break;
      lock.unlock();
      expire_idle();
      lock.lock();
    }
  });
}

SessionManager::~SessionManager() {
  {
    std::lock_guard lock(sweeper_mutex_);
    stopping_ = true;
  }
  sweeper_wake_.notify_all();
  sweeper_.join();
}

SessionManager::Entry SessionManager::make_entry(const std::string& id,
                                                 const std::string& principal,
                                                 const std::string& label, bool kept) {
  Entry entry;
  entry.session = std::make_shared<Session>(id, principal, label, make_sink_(id));
  entry.last_used = std::chrono::steady_clock::now();
  entry.kept = kept;
  if (store_) {
    // Every change of what a session keeps is written through, so a restart
    // finds the session as its client left it. One the store missed is
    // marked: find_shared writes it again rather than take the older record.
    entry.session->set_state_listener([store = store_, unsaved = entry.unsaved](const Session& s) {
      unsaved->store(!store->put_session(s.id(), record_of(s)).ok());
    });
  }
  return entry;
}

std::shared_ptr<Session> SessionManager::create(const std::string& principal) {
  std::shared_ptr<Session> session;
  {
    std::lock_guard lock(mutex_);
    if (sessions_.size() >= limits_.max_sessions) return nullptr;
    // 256 random bits, base64url: visible ASCII as the spec requires.
    std::string id = random_id();
    Entry entry = make_entry(id, principal, "http-" + std::to_string(next_label_++), false);
    session = entry.session;
    sessions_[id] = std::move(entry);
  }
  return session;
}

Status SessionManager::keep(const std::string& id) {
  std::shared_ptr<Session> session;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return Status::not_found("no such session (it may have ended)");
    session = it->second.session;
  }
  if (store_) {
    // Written here, not by the state listener, whose writes cannot fail
    // loudly: a session its client holds must be in the store, or another
    // instance, or this one after a restart, answers its requests 404.
    if (Status put = store_->put_session(id, record_of(*session)); !put.ok()) return put;
  }
  std::lock_guard lock(mutex_);
  if (auto it = sessions_.find(id); it != sessions_.end()) {
    it->second.kept = true;
    it->second.unsaved->store(false);  // what the listener missed is written now
  }
  return Status::ok_status();
}

std::shared_ptr<Session> SessionManager::find(const std::string& id, const std::string& principal,
                                              Status* unreachable) {
  if (shared()) return find_shared(id, principal, unreachable);
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.session->principal() != principal) return nullptr;
  it->second.last_used = std::chrono::steady_clock::now();
  return it->second.session;
}

std::shared_ptr<Session> SessionManager::find_shared(const std::string& id,
                                                     const std::string& principal,
                                                     Status* unreachable) {
  // Read outside the lock: the store may take a while.
  const Result<std::optional<json>> stored = store_->load_session(id);
  std::shared_ptr<Session> session;
  std::shared_ptr<Session> gone;
  std::shared_ptr<std::atomic<bool>> write_again;
  bool touch = false;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(id);
    const auto now = std::chrono::steady_clock::now();
    if (!stored.ok()) {
      // The store cannot be read: the copy here serves, if there is one.
      if (it == sessions_.end()) {
        if (unreachable) *unreachable = stored.status();
        return nullptr;
      }
      if (it->second.session->principal() != principal) return nullptr;
      it->second.last_used = now;
      return it->second.session;
    }
    if (!stored->has_value()) {
      // Ended by another instance (or never made): the copy goes too.
      if (it != sessions_.end()) {
        gone = it->second.session;
        sessions_.erase(it);
      }
    } else if ((**stored).value("principal", "") == principal) {
      const json& record = **stored;
      if (it == sessions_.end()) {
        if (sessions_.size() >= limits_.max_sessions) return nullptr;
        it = sessions_.emplace(id, make_entry(id, principal, record.value("label", "http"), true))
                 .first;
      }
      session = it->second.session;
      if (it->second.unsaved->load()) {
        // A change made here did not reach the store (it was down): the
        // record there is older than this copy, which is written again.
        write_again = it->second.unsaved;
      } else if (const json state = record.value("state", json::object());
                 state != session->state()) {
        // What another instance changed (initialize, log level, discovered
        // tools) is taken in.
        session->restore(state);
      }
      it->second.last_used = now;
      if (now - it->second.touched >= std::chrono::minutes(1)) {
        it->second.touched = now;
        touch = true;
      }
    }
  }
  if (gone) drop_copy(gone, "ended elsewhere");
  if (write_again && store_->put_session(id, record_of(*session)).ok()) write_again->store(false);
  if (touch) store_->touch_session(id);
  return session;
}

void SessionManager::drop_copy(const std::shared_ptr<Session>& session, const char* why) {
  session->cancel_all_calls();
  if (const auto& sink = session->owned_sink()) sink->session_ended();
  logger_.write(LogLevel::info, "session_copy_dropped",
                {{"session", session->label()}, {"why", why}});
}

void SessionManager::set_end_listener(std::function<void(const std::string&)> listener) {
  std::lock_guard lock(mutex_);
  end_listener_ = std::move(listener);
}

std::map<std::string, SessionManager::Entry, std::less<>>::iterator SessionManager::find_digest(
    const std::string& digest) {
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->second.digest.empty()) it->second.digest = sha256_hex(it->first);
    if (it->second.digest == digest) return it;
  }
  return sessions_.end();
}

void SessionManager::forget_ended_elsewhere(const std::string& digest) {
  std::shared_ptr<Session> gone;
  {
    std::lock_guard lock(mutex_);
    if (auto it = find_digest(digest); it != sessions_.end()) {
      gone = it->second.session;
      sessions_.erase(it);
    }
  }
  if (gone) drop_copy(gone, "ended elsewhere");
}

void SessionManager::look_again_elsewhere(const std::string& digest) {
  std::shared_ptr<Session> session;
  {
    std::lock_guard lock(mutex_);
    if (auto it = find_digest(digest); it != sessions_.end()) session = it->second.session;
  }
  if (!session) return;
  if (const auto& sink = session->owned_sink()) sink->look_again();
}

bool SessionManager::end(const std::string& id, const std::string& principal) {
  // A session not kept (its initialize failed, or could not be stored) is
  // only here: nothing to load, delete or announce.
  bool kept = true;
  {
    std::lock_guard lock(mutex_);
    if (auto it = sessions_.find(id); it != sessions_.end()) kept = it->second.kept;
  }
  // A session this instance has not seen yet is loaded, so that it can end it.
  if (kept && shared() && !find_shared(id, principal)) return false;
  std::shared_ptr<Session> session;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.session->principal() != principal) return false;
    session = it->second.session;
    kept = it->second.kept;
    sessions_.erase(it);
  }
  forget(session, kept ? "deleted" : "not kept", kept);
  return true;
}

void SessionManager::forget(const std::shared_ptr<Session>& session, const char* why, bool stored) {
  session->cancel_all_calls();
  if (const auto& sink = session->owned_sink()) sink->session_ended();
  if (store_ && stored) store_->delete_session(session->id());
  if (results_) {
    // Open the store if need be: results of a session restored after a
    // restart are on disk even when this process has not offloaded yet.
    if (const auto results = results_->get(); results.ok()) (*results)->delete_owner(session->id());
  }
  logger_.write(LogLevel::info, "session_ended", {{"session", session->label()}, {"why", why}});
  if (stored) tell_ended(session->id());
}

void SessionManager::tell_ended(const std::string& id) {
  std::function<void(const std::string&)> listener;
  {
    std::lock_guard lock(mutex_);
    listener = end_listener_;
  }
  if (listener) listener(id);
}

std::size_t SessionManager::expire_idle() {
  std::vector<std::shared_ptr<Session>> expired;
  {
    std::lock_guard lock(mutex_);
    const auto cutoff = std::chrono::steady_clock::now() - limits_.idle_timeout;
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      // A session with a call in flight or a stream open is not idle, however
      // long the call or the client's silence.
      if (it->second.last_used < cutoff && it->second.holds == 0 &&
          it->second.session->wait_for_calls(std::chrono::milliseconds(0))) {
        expired.push_back(it->second.session);
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  if (!shared()) {
    for (const auto& session : expired) forget(session, "idle");
    return expired.size();
  }
  // Another instance may be serving them: only the copies go. The store's
  // sessions expire by their last use on any instance.
  for (const auto& session : expired) drop_copy(session, "idle here");
  const std::vector<std::string> ended = store_->expire_sessions(
      std::chrono::duration_cast<std::chrono::seconds>(limits_.idle_timeout));
  for (const std::string& id : ended) {
    if (results_) {
      if (const auto results = results_->get(); results.ok()) (*results)->delete_owner(id);
    }
    tell_ended(id);
  }
  if (!ended.empty()) {
    logger_.write(LogLevel::info, "sessions_expired", {{"sessions", ended.size()}});
  }
  return expired.size() + ended.size();
}

void SessionManager::hold(const std::string& id) {
  std::lock_guard lock(mutex_);
  if (auto it = sessions_.find(id); it != sessions_.end()) ++it->second.holds;
}

void SessionManager::release(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.holds == 0) return;
  --it->second.holds;
  it->second.last_used = std::chrono::steady_clock::now();
}

std::size_t SessionManager::count() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

std::vector<std::shared_ptr<Session>> SessionManager::all() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<Session>> out;
  out.reserve(sessions_.size());
  for (const auto& [id, entry] : sessions_) out.push_back(entry.session);
  return out;
}

std::vector<SessionManager::Summary> SessionManager::summaries(std::size_t limit) const {
  std::vector<const Entry*> newest;
  std::vector<Summary> out;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  newest.reserve(sessions_.size());
  for (const auto& [id, entry] : sessions_) newest.push_back(&entry);
  const std::size_t kept = std::min(limit, newest.size());
  std::partial_sort(newest.begin(), newest.begin() + static_cast<std::ptrdiff_t>(kept),
                    newest.end(),
                    [](const Entry* a, const Entry* b) { return a->created > b->created; });
  out.reserve(kept);
  for (std::size_t i = 0; i < kept; ++i) {
    const Entry& entry = *newest[i];
    out.push_back({entry.session->label(), entry.session->principal(),
                   entry.session->protocol_version(), now - entry.created, now - entry.last_used});
  }
  return out;
}

}  // namespace toolmux
