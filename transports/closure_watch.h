// Tells when the client of an HTTP connection goes away while the server is
// still answering it (the 2026-07-28 protocol: closing a request's response
// stream cancels the request). One thread waits on every watched socket at
// once (epoll, for the peer's FIN or a reset: EPOLLRDHUP, EPOLLHUP,
// EPOLLERR, never for data), so a watched request costs a registration, not
// a thread; the thread starts with the first watch.
//
// A client that half-closes its side after sending the request (shutdown
// SHUT_WR) reads as gone: HTTP/1.1 clients keep the connection open while
// they wait for an answer.
//
// Thread-safe. on_close runs on the watch's thread, at most once, and must
// not block for long (every other closure waits behind it). A Watch is
// movable; destroying it (or reset()) stops the watch and, when on_close is
// running, waits for it to return (unless called from on_close itself), so
// what on_close uses may go once it has. When the thread or the epoll set
// cannot be had, watch() returns an empty Watch: the closure is then seen
// only when a write to the socket fails.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace toolmux {

class ClosureWatch {
 public:
  struct State;

  class Watch {
   public:
    Watch() = default;
    Watch(std::shared_ptr<State> state, std::uint64_t id) : state_(std::move(state)), id_(id) {}
    Watch(Watch&& other) noexcept;
    Watch& operator=(Watch&& other) noexcept;
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;
    ~Watch() { reset(); }
    void reset();
    explicit operator bool() const { return state_ != nullptr; }

   private:
    std::shared_ptr<State> state_;
    std::uint64_t id_ = 0;
  };

  ClosureWatch();
  ClosureWatch(const ClosureWatch&) = delete;
  ClosureWatch& operator=(const ClosureWatch&) = delete;
  // Ends the thread; on_close of the watches left is not called.
  ~ClosureWatch();

  // Calls `on_close` when the peer of socket `fd` closes the connection, for
  // as long as the returned Watch lives. `fd` must stay open until then, and
  // be watched once at a time.
  Watch watch(int fd, std::function<void()> on_close);

 private:
  std::shared_ptr<State> state_;
};

}  // namespace toolmux
