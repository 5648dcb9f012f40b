// Where the Streamable HTTP transport keeps the SSE events it sent, so that a
// client reconnecting with Last-Event-ID gets what it missed, after a restart
// of the server too. The transport defines what it needs; a store implements
// it (src/store/session_store.h keeps the events in RocksDB).
//
// Events are numbered per session by the transport (seq counts up); one
// session's events form one ordered range. A shared log (several instances
// write one session's events: shared() is true) numbers them itself
// (next_seq), and the transport reads what it delivers from the log rather
// than from what this process remembers. Every member may be called from
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
  // Those of one stream only (a shared log reads just them).
  virtual std::vector<StoredEvent> stream_events_after(std::string_view session,
                                                       std::uint64_t stream,
                                                       std::uint64_t after_seq) const {
    std::vector<StoredEvent> out = events_after(session, after_seq);
    std::erase_if(out, [stream](const StoredEvent& e) { return e.stream != stream; });
    return out;
  }
  // The highest seq stored for the session; 0 when none.
  virtual std::uint64_t last_seq(std::string_view session) const = 0;
  // Deletes the session's events with seq < below_seq.
  virtual void trim_events(std::string_view session, std::uint64_t below_seq) = 0;

  // Whether other processes write the same sessions' events.
  virtual bool shared() const { return false; }
  // A shared log's next seq for the session, above every seq handed out
  // before by any process; 0 when none can be had (the session is gone or
  // the store cannot be reached).
  virtual std::uint64_t next_seq(std::string_view /*session*/) { return 0; }
};

}  // namespace toolmux
