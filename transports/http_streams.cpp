#include "transports/http_streams.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "src/base/json_text.h"

namespace toolmux {

using nlohmann::json;

namespace {

// Events kept in memory per session (older ones are read from the store), and
// kept in the store (older ones are deleted). With a store, the memory kept is
// also bounded in bytes: a call's response on its stream may be large, and a
// session that makes many calls would otherwise hold the last 1024 of them.
constexpr std::size_t kRecentEvents = 1024;
constexpr std::size_t kRecentBytes = std::size_t{1} << 20;
constexpr std::uint64_t kStoredEvents = 4096;
// How often a stream of a shared log looks for other instances' events.
constexpr std::chrono::milliseconds kSharedLogPoll{2000};

}  // namespace

struct Exchange {
  json request_id;
  enum class Mode { undecided, json_body, sse, ended } mode = Mode::undecided;
  std::deque<std::pair<std::string, bool>> pending;  // undecided: (text, final)
  std::uint64_t stream = 0;                          // sse
  int error_code = 0;  // the response is an error with this code (0: a result, or none yet)
  // Its POST waits on this alone: a session-wide condition would wake every
  // POST of the session for each answer (64 connections, 64 wake-ups a call).
  std::condition_variable changed;
};

std::optional<StreamCursor> parse_event_id(const std::string& id) {
  const auto dash = id.find('-');
  if (dash == std::string::npos) return std::nullopt;
  StreamCursor cursor;
  const char* end = id.data() + id.size();
  auto [p1, e1] = std::from_chars(id.data(), id.data() + dash, cursor.stream);
  auto [p2, e2] = std::from_chars(id.data() + dash + 1, end, cursor.after_seq);
  if (e1 != std::errc() || p1 != id.data() + dash || e2 != std::errc() || p2 != end) {
    return std::nullopt;
  }
  return cursor;
}

std::string format_event_id(std::uint64_t stream, std::uint64_t seq) {
  return std::to_string(stream) + "-" + std::to_string(seq);
}

SessionStreams::SessionStreams(std::string session_id, EventLog* log)
    : session_id_(std::move(session_id)), store_(log) {
  // After a restart, ids go on from the last stored event.
  if (store_) last_seq_ = store_->last_seq(session_id_);
  // A plain GET after a restart starts with what comes next; what came
  // before is there for a client that names it with Last-Event-ID.
  standalone_delivered_ = last_seq_;
}

std::uint64_t SessionStreams::take_seq() {
  if (store_ && store_->shared()) {
    if (const std::uint64_t seq = store_->next_seq(session_id_); seq > 0) {
      last_seq_ = std::max(last_seq_, seq);
      return seq;
    }
  }
  return ++last_seq_;
}

std::uint64_t SessionStreams::append_event(std::uint64_t stream, const std::string& data,
                                           bool final) {
  const std::uint64_t seq = take_seq();
  StoredEvent event{seq, stream, data, final};
  if (store_) {
    store_->append_event(session_id_, event);
    if (event.seq % 256 == 0 && event.seq > kStoredEvents) {
      store_->trim_events(session_id_, event.seq - kStoredEvents);
    }
  }
  recent_bytes_ += event.data.size();
  recent_.push_back(std::move(event));
  while (recent_.size() > kRecentEvents ||
         (store_ && recent_.size() > 1 && recent_bytes_ > kRecentBytes)) {
    recent_bytes_ -= recent_.front().data.size();
    recent_.pop_front();
  }
  return seq;
}

void SessionStreams::switch_to_sse(Exchange& exchange) {
  // The stream's id is a seq of its own, so ids stay unique after a restart.
  exchange.stream = take_seq();
  exchange.mode = Exchange::Mode::sse;
  bool ended = false;
  for (auto& [text, final] : exchange.pending) {
    append_event(exchange.stream, text, final);
    ended |= final;
  }
  exchange.pending.clear();
  if (!ended) live_streams_[exchange.stream] = exchanges_[jsonrpc::id_key(exchange.request_id)];
  ++writers_;
}

void SessionStreams::send(const json& message, const json& related_request) {
  const std::string text = json_text(message);
  const bool final = !related_request.is_null() && !message.contains("method") &&
                     message.contains("id") && message["id"] == related_request;
  std::shared_ptr<Exchange> woken;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    if (!related_request.is_null()) {
      auto it = exchanges_.find(jsonrpc::id_key(related_request));
      if (it != exchanges_.end()) {
        woken = it->second;
        if (final) {
          auto error = message.find("error");
          if (error != message.end() && error->is_object()) {
            auto code = error->find("code");
            if (code != error->end() && code->is_number_integer()) {
              woken->error_code = code->get<int>();
            }
          }
        }
        if (woken->mode == Exchange::Mode::undecided) {
          woken->pending.emplace_back(text, final);
        } else if (woken->mode == Exchange::Mode::sse) {
          append_event(woken->stream, text, final);
          if (final) live_streams_.erase(woken->stream);
        }
        if (final) exchanges_.erase(it);
      } else if (final) {
        return;  // a response whose POST has gone (its client stopped waiting)
      }
    }
    if (!woken) append_event(0, text, false);
  }
  // Notified after unlocking, so the woken thread does not block on the mutex.
  if (woken) woken->changed.notify_all();
  changed_.notify_all();
}

void SessionStreams::request_finished(const json& request_id) {
  std::shared_ptr<Exchange> woken;
  {
    std::lock_guard lock(mutex_);
    auto it = exchanges_.find(jsonrpc::id_key(request_id));
    if (it == exchanges_.end()) return;
    woken = it->second;
    Exchange& exchange = *woken;
    if (exchange.mode == Exchange::Mode::undecided && !exchange.pending.empty()) {
      switch_to_sse(exchange);
    }
    if (exchange.mode == Exchange::Mode::sse) {
      live_streams_.erase(exchange.stream);
    } else {
      exchange.mode = Exchange::Mode::ended;
    }
    exchanges_.erase(it);
  }
  woken->changed.notify_all();
  changed_.notify_all();
}

void SessionStreams::close_request_stream(const json& request_id) {
  std::shared_ptr<Exchange> woken;
  {
    std::lock_guard lock(mutex_);
    auto it = exchanges_.find(jsonrpc::id_key(request_id));
    if (it == exchanges_.end()) return;
    woken = it->second;
    if (woken->mode == Exchange::Mode::undecided) switch_to_sse(*woken);
    if (woken->mode == Exchange::Mode::sse) close_at_[woken->stream] = last_seq_;
  }
  woken->changed.notify_all();
  changed_.notify_all();
}

std::shared_ptr<Exchange> SessionStreams::open_exchange(const json& id) {
  std::lock_guard lock(mutex_);
  auto exchange = std::make_shared<Exchange>();
  exchange->request_id = id;
  if (!exchanges_.emplace(jsonrpc::id_key(id), exchange).second) return nullptr;
  return exchange;
}

SessionStreams::Decision SessionStreams::await_decision(const std::shared_ptr<Exchange>& exchange) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (closed_ || exchange->mode == Exchange::Mode::ended) break;
    if (exchange->mode == Exchange::Mode::sse) {
      return {Decision::Kind::sse, {}, 0, {exchange->stream, exchange->stream}};
    }
    if (!exchange->pending.empty()) {
      if (exchange->pending.front().second) {
        exchange->mode = Exchange::Mode::json_body;
        return {Decision::Kind::json_body,
                std::move(exchange->pending.front().first),
                exchange->error_code,
                {}};
      }
      switch_to_sse(*exchange);
      return {Decision::Kind::sse, {}, 0, {exchange->stream, exchange->stream}};
    }
    // Every change of the exchange notifies it (send, request_finished,
    // close_request_stream, session_ended).
    exchange->changed.wait(lock);
  }
  auto it = exchanges_.find(jsonrpc::id_key(exchange->request_id));
  if (it != exchanges_.end() && it->second == exchange) exchanges_.erase(it);
  return {};
}

std::optional<StreamCursor> SessionStreams::attach_standalone() {
  std::lock_guard lock(mutex_);
  if (standalone_attached_ || closed_) return std::nullopt;
  standalone_attached_ = true;
  ++writers_;
  return StreamCursor{0, standalone_delivered_};
}

std::optional<StreamCursor> SessionStreams::resume(const std::string& last_event_id) {
  auto cursor = parse_event_id(last_event_id);
  std::lock_guard lock(mutex_);
  // Another instance may have sent events since this one last did.
  if (store_ && store_->shared()) last_seq_ = std::max(last_seq_, store_->last_seq(session_id_));
  if (!cursor || closed_ || cursor->stream > last_seq_ || cursor->after_seq > last_seq_ ||
      (cursor->stream != 0 && cursor->after_seq < cursor->stream)) {
    return std::nullopt;
  }
  if (cursor->stream == 0) standalone_attached_ = true;
  ++writers_;
  return cursor;
}

bool SessionStreams::stream_live(std::uint64_t stream) const {
  return stream == 0 || live_streams_.count(stream) > 0;
}

SessionStreams::Next SessionStreams::next(const StreamCursor& cursor,
                                          std::chrono::milliseconds wait,
                                          const std::stop_token& stopping) {
  const auto give_up = std::chrono::steady_clock::now() + wait;
  // Before the lock: a stop requested already runs this at once, here.
  const std::stop_callback on_stop(stopping, [this] {
    std::lock_guard lock(mutex_);  // so a writer between its look and its wait cannot miss it
    changed_.notify_all();
  });
  std::unique_lock lock(mutex_);
  for (;;) {
    Next out;
    if (closed_ || stopping.stop_requested()) {
      out.end = true;
      return out;
    }
    const auto close_it = close_at_.find(cursor.stream);
    const std::uint64_t limit = close_it == close_at_.end() ? UINT64_MAX : close_it->second;
    auto take = [&](const StoredEvent& e) {
      if (e.stream != cursor.stream || e.seq <= cursor.after_seq || e.seq > limit) return;
      out.events.push_back(e);
      out.end |= e.final;
    };
    const std::uint64_t first_in_memory = recent_.empty() ? last_seq_ + 1 : recent_.front().seq;
    // A shared log holds other instances' events too, which this one's
    // memory does not.
    const bool shared = store_ && store_->shared();
    if (!shared && (cursor.after_seq + 1 >= first_in_memory || !store_)) {
      for (const auto& e : recent_) take(e);
    } else if (shared) {
      for (const auto& e :
           store_->stream_events_after(session_id_, cursor.stream, cursor.after_seq))
        take(e);
    } else {
      for (const auto& e : store_->events_after(session_id_, cursor.after_seq)) take(e);
    }
    const std::uint64_t reached = out.events.empty() ? cursor.after_seq : out.events.back().seq;
    if (close_it != close_at_.end() && reached >= limit) {
      close_at_.erase(close_it);  // a resumed connection goes on
      out.end = true;
    }
    if (!out.events.empty() || out.end) return out;
    const bool timed_out = std::chrono::steady_clock::now() >= give_up;
    if (!stream_live(cursor.stream) && (!shared || timed_out)) {
      // Its request has ended here, or runs on no instance this one knows of
      // (a shared log: another instance may be running it, so its events are
      // waited for until give_up): nothing more will come; a client that
      // wants more resumes again.
      out.end = true;
      return out;
    }
    if (timed_out) return out;
    // Another instance's events wake nobody here: look again soon.
    changed_.wait_until(
        lock,
        shared ? std::min(give_up, std::chrono::steady_clock::now() + kSharedLogPoll) : give_up);
  }
}

void SessionStreams::delivered(const StreamCursor& cursor) {
  std::lock_guard lock(mutex_);
  if (cursor.stream == 0) {
    standalone_delivered_ = std::max(standalone_delivered_, cursor.after_seq);
  }
}

void SessionStreams::detach(std::uint64_t stream) {
  std::lock_guard lock(mutex_);
  if (writers_ > 0) --writers_;
  if (stream == 0) standalone_attached_ = false;
}

void SessionStreams::session_ended() {
  std::vector<std::shared_ptr<Exchange>> waiting;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    for (const auto& [id, exchange] : exchanges_) waiting.push_back(exchange);
  }
  for (const auto& exchange : waiting) exchange->changed.notify_all();
  changed_.notify_all();
}

void SessionStreams::look_again() {
  {
    std::lock_guard lock(mutex_);  // so that a writer between its look and its wait cannot miss it
  }
  changed_.notify_all();
}

std::size_t SessionStreams::open_writers() const {
  std::lock_guard lock(mutex_);
  return writers_;
}

}  // namespace toolmux
