// Where the Streamable HTTP transport keeps the SSE events it sent, so that a
// client reconnecting with Last-Event-ID gets what it missed, after a restart
// of the server too. The transport defines what it needs; a store implements
// it (src/store/session_store.h keeps the events in RocksDB).
//
// Events are numbered per session by the transport (seq counts up); one
// session's events form one ordered range. Every member may be called from
// any thread, concurrently; none throws. The transport owns nothing of the
// log: whoever made it keeps it alive for as long as the transport runs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toolmux {

struct StoredEvent {
  std::uint64_t seq = 0;
  std::uint64_t stream = 0;
  std::string data;
  bool final = false;  // the response that ends its request's stream
};

class EventLog {
 public:
  virtual ~EventLog() = default;

  virtual void append_event(std::string_view session, const StoredEvent& event) = 0;
  // The session's events with seq > after_seq, in order (all streams).
  virtual std::vector<StoredEvent> events_after(std::string_view session,
                                                std::uint64_t after_seq) const = 0;
  // The highest seq stored for the session; 0 when none.
  virtual std::uint64_t last_seq(std::string_view session) const = 0;
  // Deletes the session's events with seq < below_seq.
  virtual void trim_events(std::string_view session, std::uint64_t below_seq) = 0;
};

}  // namespace toolmux
