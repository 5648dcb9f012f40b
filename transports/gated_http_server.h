// cpp-httplib's Server with its connections kept in a ConnectionGate while
// they owe a request head, and served on ElasticThreads once it is there: a
// thread is taken by a request, never by a client slow to send one. A
// request's body must arrive within body_timeout of its head, however long
// the client pauses within it (cpp-httplib's read timeout plays no part); a
// read past that fails (the handler sees an unreadable body; body_timed_out()
// says why, and body_timeouts() counts it).
//
// After each response the connection's thread waits briefly for its next
// request (Limits::next_request_wait), then the connection goes back to the
// gate for it, unless it must close: the client or the server said so, or the
// request left part of its body unread (a handler that answers without
// reading it, e.g. a refusal, or a body too slow to arrive). Then the
// response carries "Connection: close" and the gate drains what the client
// still sends before closing, so the client reads the response, not a reset.
//
// A handler that throws gets a 500 whose body is a JSON-RPC error that says
// only that (cpp-httplib's own answer would quote the exception's text in an
// EXCEPTION_WHAT header); the text goes to on_handler_exception instead.
//
// Threads: handlers run on the pool's threads, one request at a time per
// connection; the static members speak of the request the calling thread serves.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transports/connection_gate.h"

namespace toolmux {

class ElasticThreads;

class GatedHttpServer : public httplib::Server {
 public:
  struct Limits {
    GateLimits gate;
    std::chrono::milliseconds body_timeout{60000};
    // How long the thread that wrote a response waits for the connection's
    // next request before handing it back to the gate (never past
    // gate.idle_timeout): a client that sends its requests back to back has
    // them served on one thread, with no hand-off to the gate and back. The
    // wait holds a thread, not a place: the pool allows a thread per
    // connection (gate.max_connections). It is taken only while at most
    // `wait_while_open` connections are open (a client or two): with more,
    // the gate serves each connection's requests in the order they came,
    // which keeps the slowest answers close to the rest (bench/README.md,
    // "HTTP throughput", has what waiting with many connections did to them).
    std::chrono::milliseconds next_request_wait{50};
    std::size_t wait_while_open = 4;
  };

  // `threads` serve the requests; it should allow gate.max_connections threads.
  GatedHttpServer(Limits limits, std::shared_ptr<ElasticThreads> threads);
  ~GatedHttpServer() override;

  // Told the text of an exception a handler threw (for the log). Before listening.
  void on_handler_exception(std::function<void(const std::string& what)> listener) {
    on_handler_exception_ = std::move(listener);
  }

  // Starts the gate (ConnectionGate::start). Before listening.
  Status start();

  GateStats gate_stats() const { return gate_.stats(); }
  std::uint64_t body_timeouts() const { return body_timeouts_.load(); }
  const Limits& limits() const { return limits_; }

  // The handler read the request's body to its end. Needed for a chunked
  // body, whose end only its reader sees; a Content-Length is counted.
  static void note_body_read();
  // The request's body did not arrive within body_timeout.
  static bool body_timed_out();
  // The socket of the connection the request came on (-1 when the calling
  // thread serves none): to watch for the client going away, not to read or
  // write (cpp-httplib does).
  static int current_socket();
  // Every value of the header `name` (matched in any case) in the request's
  // head, as the client sent it: around it the spaces and tabs trimmed,
  // nothing else changed (cpp-httplib's Request percent-decodes header
  // values: "a%20b" comes out "a b"). Empty when absent.
  static std::vector<std::string> header_as_sent(std::string_view name);

 private:
  bool process_and_close_socket(socket_t sock) override;
  void serve(std::shared_ptr<GatedConnection> connection);

  const Limits limits_;
  std::shared_ptr<ElasticThreads> threads_;
  std::atomic<std::uint64_t> body_timeouts_{0};
  std::function<void(const std::string&)> on_handler_exception_;
  ConnectionGate gate_;  // last: stopped (its thread joined) before the rest goes
};

}  // namespace toolmux
