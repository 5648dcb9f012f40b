// Reads a text/event-stream (the WHATWG "event stream interpretation") from
// bytes as they arrive, in pieces of any size: lines end with CRLF, LF or CR;
// "data" lines are joined with "\n"; a line starting with ':' is a comment;
// "id" sets the last event id (kept across events, as a browser's EventSource
// keeps it, so a client can resume with Last-Event-ID); "retry" sets the
// reconnection delay. An event whose data is empty is not dispatched (a
// server primes a stream with one that carries only an id).
//
// Not thread-safe: one parser per stream, fed by one thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace toolmux {

struct SseEvent {
  std::string type;  // "event" field; empty means "message"
  std::string data;
  std::string id;  // the last event id when the event was dispatched
};

class SseParser {
 public:
  // `max_event_bytes` bounds one event's data, and (with room for a field
  // name) any one line.
  explicit SseParser(std::size_t max_event_bytes) : max_event_bytes_(max_event_bytes) {}

  // Feeds the next bytes; calls on_event for each event they complete. False
  // (and the stream is no longer usable) when an event or a line is over the
  // bound, or when on_event returns false.
  bool feed(std::string_view bytes, const std::function<bool(const SseEvent&)>& on_event);

  const std::string& last_event_id() const { return last_event_id_; }
  // The delay the server asked for before reconnecting, when it sent one.
  std::optional<std::chrono::milliseconds> retry() const { return retry_; }

 private:
  std::size_t max_line_bytes() const { return max_event_bytes_ + 64; }
  bool line(std::string_view text, const std::function<bool(const SseEvent&)>& on_event);

  const std::size_t max_event_bytes_;
  std::string line_;
  bool after_cr_ = false;   // the last byte was CR: a LF right after it ends nothing
  bool first_line_ = true;  // a UTF-8 byte order mark at the very start is skipped
  std::string type_;
  std::string data_;
  std::string last_event_id_;
  std::optional<std::chrono::milliseconds> retry_;
};

}  // namespace toolmux
