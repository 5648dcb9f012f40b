// Where HTTP connections wait while they owe a request head: one thread
// watches every such socket (epoll), so a client that sends its head slowly,
// or nothing at all, holds a file descriptor and a small buffer, never a
// thread. A connection whose head has arrived (the blank line after its
// headers) goes to `on_ready`, which serves it on a thread of its own and then
// hands it back: wait_for_request() for its next request (keep-alive),
// linger() to close it once the client has stopped sending (a body the server
// did not read), or drops it, which closes it.
//
// The limits it keeps (GateLimits): connections open at once, waiting here or
// being served, in all and per client address (an IPv6 client by its /64
// prefix); a connection over either is answered 503 with Retry-After and
// closed at once. A head must be complete within header_timeout of its first
// byte (of the connection opening, for a new connection) and within
// max_head_bytes, else it gets 408 or 431 and the connection is closed. A
// connection idle between requests is closed after idle_timeout.
//
// Threads: every member may be called from any thread; on_ready runs on the
// gate's thread and must not block. Nothing throws: a socket that fails is
// closed. A GatedConnection has one owner at a time (the gate, or the thread
// serving it), though it is passed by shared_ptr.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace toolmux {

struct GateLimits {
  std::size_t max_connections = 1024;
  std::size_t max_connections_per_client = 256;
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds idle_timeout{30000};
  // How long linger() drains what a client still sends before closing anyway.
  std::chrono::milliseconds linger_timeout{5000};
  std::size_t max_head_bytes = std::size_t{32} * 1024;
};

// What the gate counted since it started (open and waiting: now).
struct GateStats {
  std::size_t open = 0;                          // connections open, waiting here or being served
  std::size_t waiting = 0;                       // of them, waiting here for a request head
  std::uint64_t refused_connections = 0;         // over max_connections
  std::uint64_t refused_client_connections = 0;  // over max_connections_per_client
  std::uint64_t header_timeouts = 0;             // closed for a head not there in time
  std::uint64_t heads_too_large = 0;             // 431
};

// A client's TCP connection and the bytes read from it ahead of its reader.
class GatedConnection {
 public:
  using Clock = std::chrono::steady_clock;
  struct Tally;

  GatedConnection(const GatedConnection&) = delete;
  GatedConnection& operator=(const GatedConnection&) = delete;
  // Closes the socket; the connection's place under the limits is free again.
  ~GatedConnection();

  int socket() const { return fd_; }
  // The client's address as the limits count it ("127.0.0.1", "2001:db8:1:2::/64").
  const std::string& client() const { return client_; }

  // Up to `size` bytes: read ahead ones first, else from the socket, waiting
  // for data until `deadline` (however long the client pauses before it). 0
  // at the end of the stream; -1 on an error, or when the deadline passed
  // (timed_out() then says so).
  // cpp-httplib reads a request's head a byte at a time: those reads, served
  // from what was read ahead, cost a few instructions here, not a call.
  ssize_t read(char* out, std::size_t size, Clock::time_point deadline) {
    if (ahead_pos_ >= ahead_.size() || size == 0) return read_more(out, size, deadline);
    timed_out_ = false;
    const std::size_t n = std::min(size, ahead_.size() - ahead_pos_);
    if (n == 1) {
      *out = ahead_[ahead_pos_];
    } else {
      std::memcpy(out, ahead_.data() + ahead_pos_, n);
    }
    ahead_pos_ += n;
    consumed_ += n;
    return static_cast<ssize_t>(n);
  }
  // Sends up to `size` bytes, waiting at most `timeout` for room; -1 on an error.
  ssize_t write(const char* data, std::size_t size, std::chrono::milliseconds timeout);
  // True when a write can go out within `timeout` and the client has not closed.
  bool writable(std::chrono::milliseconds timeout) const;
  // True when bytes can be read within `timeout` (read ahead ones count).
  bool readable(std::chrono::milliseconds timeout) const;
  // Bytes read() has returned since the connection opened.
  std::uint64_t consumed() const { return consumed_; }
  bool timed_out() const { return timed_out_; }
  // The bytes read ahead hold a whole request head.
  bool has_complete_head() const;
  // After a response, on the thread that wrote it: waits up to `wait` for the
  // client's next request head, reading it ahead as it comes. True when a
  // whole head of at most `max_head_bytes` is there. False when none came in
  // time, it is not whole or too large, or the client closed or failed: then
  // what was read stays read ahead, for the gate to go on from.
  bool await_head(std::chrono::milliseconds wait, std::size_t max_head_bytes);
  // That head, as the client sent it (up to its blank line), while no read()
  // has taken its bytes yet; empty when it is not all there.
  std::string_view head() const;

 private:
  friend class ConnectionGate;
  GatedConnection(int fd, std::string client, std::shared_ptr<Tally> tally);
  // Where the head ends in the bytes read ahead (past its blank line), or npos.
  std::size_t head_end() const;
  void drop_consumed();
  // read() once what was read ahead is used up: from the socket.
  ssize_t read_more(char* out, std::size_t size, Clock::time_point deadline);

  int fd_;
  std::string client_;
  std::shared_ptr<Tally> tally_;
  std::string ahead_;  // read from the socket, not yet returned by read(): from ahead_pos_
  std::size_t ahead_pos_ = 0;
  mutable std::size_t searched_ = 0;  // no head ends before this offset of ahead_
  std::uint64_t consumed_ = 0;
  bool timed_out_ = false;
  Clock::time_point opened_ = Clock::now();
  bool served_ = false;  // has been handed over for a request before
};

class ConnectionGate {
 public:
  using Ready = std::function<void(std::shared_ptr<GatedConnection>)>;

  ConnectionGate(GateLimits limits, Ready on_ready);
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;
  ~ConnectionGate();  // stop()

  // Starts the gate's thread; io_error saying why when it cannot.
  Status start();
  // A socket just accepted: the gate owns it from now on.
  void admit(int fd);
  // After a response on `connection`: it waits here for its next request.
  void wait_for_request(std::shared_ptr<GatedConnection> connection);
  // Closes `connection` for sending, reads and drops what the client still
  // sends (its unread body) until it closes or linger_timeout passes, then
  // closes it, so that the client reads the response rather than a reset.
  void linger(std::shared_ptr<GatedConnection> connection);
  // Closes every connection waiting here and ends the thread; connections
  // handed back later are closed. on_ready is not called once stop() returns.
  void stop();

  GateStats stats() const;
  // Connections open now, waiting here or being served (stats().open).
  std::size_t open_connections() const;
  const GateLimits& limits() const { return limits_; }

  struct State;

 private:
  const GateLimits limits_;
  std::shared_ptr<State> state_;
};

}  // namespace toolmux
