// The Streamable HTTP side of one session: which stream each outgoing message
// goes on, and the SSE events that make the streams resumable.
//
// Streams: each POST that carries a request gets an exchange. Its answer is
// one application/json body when the response is the first message for it;
// when something else comes first (progress, a log message, a request to the
// client), the POST becomes an SSE stream that ends with the response. Stream
// 0 is the session's own stream (GET), for messages not related to a request
// (list_changed). Messages that go on an SSE stream are events with ids
// "<stream>-<seq>", seq counting up per session; they are kept in memory
// (recent ones) and in the EventLog, so a client that reconnects with
// Last-Event-ID gets what it missed on that stream, after a restart too.
//
// Thread-safe. Waiters (await_decision, next) are woken by the change they
// wait for, never by a clock: every change notifies, and a server that stops
// requests stop on the token its writers wait with.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>

#include <nlohmann/json.hpp>

#include "transports/event_log.h"
#include "transports/server_transport.h"

namespace toolmux {

struct Exchange;

// Where an SSE writer is, on which stream.
struct StreamCursor {
  std::uint64_t stream = 0;
  std::uint64_t after_seq = 0;
};

// Parses "<stream>-<seq>"; nullopt when malformed.
std::optional<StreamCursor> parse_event_id(const std::string& id);
std::string format_event_id(std::uint64_t stream, std::uint64_t seq);

class SessionStreams final : public MessageSink {
 public:
  // `log` may be null (events kept in memory only); it must outlive this.
  SessionStreams(std::string session_id, EventLog* log);

  void send(const nlohmann::json& message, const nlohmann::json& related_request) override;
  void request_finished(const nlohmann::json& request_id) override;
  void close_request_stream(const nlohmann::json& request_id) override;

  // A POST carrying request `id`: null when a request with that id is already open.
  std::shared_ptr<Exchange> open_exchange(const nlohmann::json& id);

  // Waits until the exchange's answer takes shape. json: the response text
  // (one body); sse: the stream to write from; none: the request ended
  // without a response (cancelled) or the session was closed. A server
  // that is stopping still waits: its calls finish or are cancelled.
  struct Decision {
    enum class Kind { json_body, sse, none } kind = Kind::none;
    std::string body;     // json
    int error_code = 0;   // json: the response's error code; 0 for a result
    StreamCursor cursor;  // sse: from the stream's start
  };
  Decision await_decision(const std::shared_ptr<Exchange>& exchange);

  // GET without Last-Event-ID: the session's own stream, from the first event
  // not yet delivered. Null when another GET already holds it.
  std::optional<StreamCursor> attach_standalone();
  // GET with Last-Event-ID: nullopt when the id names no stream of this session.
  std::optional<StreamCursor> resume(const std::string& last_event_id);

  // What an SSE writer does next.
  struct Next {
    std::deque<StoredEvent> events;  // to write, in order
    bool end = false;                // after them, end the stream
  };
  // Waits up to `wait` for events after `cursor` on its stream; ends the
  // stream as soon as stop is requested on `stopping` (the server stops).
  // A request's stream that is not running here ends when nothing is left to
  // write, at once, or with a shared log (another instance may be running
  // it) after `wait`; events stored elsewhere are looked for when
  // look_again() says so, and every 2 s without it.
  Next next(const StreamCursor& cursor, std::chrono::milliseconds wait,
            const std::stop_token& stopping);
  // A writer wrote events up to `seq` (stream 0: the client has them).
  void delivered(const StreamCursor& cursor);
  // A writer of `stream` went away (its connection ended).
  void detach(std::uint64_t stream);

  // The session ended: every writer and waiting POST stops.
  void session_ended() override;
  void look_again() override;
  std::size_t open_writers() const;

 private:
  std::uint64_t append_event(std::uint64_t stream, const std::string& data, bool final);
  // The next seq: from a shared log when it can give one, else counted here.
  std::uint64_t take_seq();
  std::shared_ptr<Exchange> find_exchange(const nlohmann::json& id);
  void switch_to_sse(Exchange& exchange);
  bool stream_live(std::uint64_t stream) const;

  const std::string session_id_;
  EventLog* const store_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool closed_ = false;
  std::uint64_t last_seq_ = 0;
  std::deque<StoredEvent> recent_;  // the newest events, for writers and short resumes
  std::size_t recent_bytes_ = 0;    // of their data
  std::map<std::string, std::shared_ptr<Exchange>> exchanges_;       // key: jsonrpc::id_key
  std::map<std::uint64_t, std::shared_ptr<Exchange>> live_streams_;  // sse exchanges not ended
  std::map<std::uint64_t, std::uint64_t> close_at_;  // stream -> last seq before it closes
  bool standalone_attached_ = false;
  std::uint64_t standalone_delivered_ = 0;
  std::size_t writers_ = 0;
};

}  // namespace toolmux
