#include "transports/gated_http_server.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "src/base/elastic_threads.h"
#include "tests/support/tcp.h"

using namespace toolmux;

// libcpp-httplib was built with OpenSSL support, which adds members to
// httplib::Client and httplib::Request: code that includes httplib.h without
// the same macros sizes them too small, and the library's constructor writes
// past the end (under ThreadSanitizer it overwrote a std::thread on the stack
// next to a Client, and joining it crashed).
TEST_CASE("httplib.h is compiled with the macros the library was built with") {
  constexpr std::size_t slack = 64;
  alignas(httplib::Client) unsigned char buffer[sizeof(httplib::Client) + slack];
  std::fill(std::begin(buffer), std::end(buffer), 0xAB);
  auto* client = new (buffer) httplib::Client("127.0.0.1", 1);
  const bool past_end_untouched =
      std::all_of(std::begin(buffer) + sizeof(httplib::Client), std::end(buffer),
                  [](unsigned char b) { return b == 0xAB; });
  client->~Client();
  CHECK(past_end_untouched);
}

TEST_CASE("a handler that throws gets a 500 JSON-RPC error that does not quote the exception") {
  auto threads = std::make_shared<ElasticThreads>(8);
  GatedHttpServer server(GatedHttpServer::Limits{}, threads);
  // Written on the server's thread, read here once the response has come: the
  // TCP connection orders the two, but ThreadSanitizer does not model sockets.
  std::mutex logged_mutex;
  std::string logged;
  server.on_handler_exception([&](const std::string& what) {
    const std::lock_guard lock(logged_mutex);
    logged = what;
  });
  server.Get("/boom", [](const httplib::Request&, httplib::Response&) {
    throw std::runtime_error("secret path /home/alice/token.txt");
  });
  const toolmux::Status started = server.start();
  INFO(started.message());
  REQUIRE(started.ok());
  const int port = server.bind_to_any_port("127.0.0.1");
  REQUIRE(port > 0);
  std::thread listening([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  httplib::Client client("127.0.0.1", port);
  auto res = client.Get("/boom");
  REQUIRE(res);
  CHECK(res->status == 500);
  CHECK_FALSE(res->has_header("EXCEPTION_WHAT"));
  CHECK(res->get_header_value("Content-Type") == "application/json");
  CHECK(
      nlohmann::json::parse(res->body) ==
      nlohmann::json::parse(
          R"({"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error: toolmux failed to answer this request; its log says why"}})"));
  CHECK(res->body.find("secret") == std::string::npos);
  {
    const std::lock_guard lock(logged_mutex);
    CHECK(logged == "secret path /home/alice/token.txt");
  }

  server.stop();
  listening.join();
}

TEST_CASE("a body that stalls has until body_timeout, however short cpp-httplib's read timeout") {
  // The stream read with cpp-httplib's read timeout (5 s by default) as well
  // as the deadline: a body that paused that long was cut off as unreadable
  // (400), before its body_timeout and without counting as a body timeout.
  GatedHttpServer::Limits limits;
  limits.body_timeout = std::chrono::milliseconds(2500);
  GatedHttpServer server(limits, std::make_shared<ElasticThreads>(8));
  server.set_read_timeout(1, 0);
  // The answer says how many body timeouts the server counted when it was
  // written: the count (its /health figure) must not lag the 408 a client saw.
  server.Post("/body", [&server](const httplib::Request&, httplib::Response& res,
                                 const httplib::ContentReader& read) {
    const bool whole = read([](const char*, std::size_t) { return true; });
    res.set_content(whole ? "whole"
                    : GatedHttpServer::body_timed_out()
                        ? "timed out " + std::to_string(server.body_timeouts())
                        : "unreadable",
                    "text/plain");
  });
  REQUIRE(server.start().ok());
  const int port = server.bind_to_any_port("127.0.0.1");
  REQUIRE(port > 0);
  std::thread listening([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  toolmux::testing::TcpClient client(port);
  REQUIRE(client.fd() >= 0);
  REQUIRE(client.send("POST /body HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\nx"));
  const auto start = std::chrono::steady_clock::now();
  // Past the read timeout, nothing yet.
  CHECK(client.receive(std::chrono::milliseconds(2000)).empty());
  const std::string answer = client.receive(std::chrono::milliseconds(3000), "timed out 1");
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK_THAT(answer, Catch::EndsWith("\r\n\r\ntimed out 1"));
  CHECK(waited >= std::chrono::milliseconds(2400));
  CHECK(waited < std::chrono::milliseconds(4000));
  CHECK(server.body_timeouts() == 1);

  server.stop();
  listening.join();
}

namespace {

// A GatedHttpServer listening on 127.0.0.1 with GET /n answering "n".
struct Serving {
  explicit Serving(GatedHttpServer::Limits limits)
      : server(limits, std::make_shared<ElasticThreads>(8)) {
    server.Get("/n", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("n", "text/plain");
    });
    REQUIRE(server.start().ok());
    port = server.bind_to_any_port("127.0.0.1");
    REQUIRE(port > 0);
    listening = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~Serving() {
    server.stop();
    listening.join();
  }
  Serving(const Serving&) = delete;
  Serving& operator=(const Serving&) = delete;

  // The gate's count of connections waiting in it stays `waiting` for `d`.
  bool waiting_stays(std::size_t waiting, std::chrono::milliseconds d) const {
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) {
      if (server.gate_stats().waiting != waiting) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }
  // It becomes `waiting` within `d`.
  bool waiting_becomes(std::size_t waiting, std::chrono::milliseconds d) const {
    const auto end = std::chrono::steady_clock::now() + d;
    while (server.gate_stats().waiting != waiting) {
      if (std::chrono::steady_clock::now() >= end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  GatedHttpServer server;
  int port = 0;
  std::thread listening;
};

constexpr char kGetN[] = "GET /n HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

// Sends GET /n on `client`: whether "n" came back.
bool got_n(toolmux::testing::TcpClient& client) {
  if (!client.send(kGetN)) return false;
  const std::string answer = client.receive(std::chrono::seconds(3), "\r\n\r\nn");
  return answer.size() >= 5 && answer.compare(answer.size() - 5, 5, "\r\n\r\nn") == 0;
}

}  // namespace

TEST_CASE(
    "a request sent soon after the last response is served by the same thread, not the gate") {
  // Before, the connection went back to the gate after every response: one
  // more thread woken and two more hand-offs for each request of a client
  // that sends them back to back.
  GatedHttpServer::Limits limits;
  limits.next_request_wait = std::chrono::milliseconds(1500);
  Serving s(limits);
  toolmux::testing::TcpClient client(s.port);
  REQUIRE(client.fd() >= 0);
  CHECK(got_n(client));
  // The thread that answered holds the connection: it is not waiting in the gate.
  CHECK(s.waiting_stays(0, std::chrono::milliseconds(300)));
  CHECK(s.server.gate_stats().open == 1);
  CHECK(got_n(client));
  // Once next_request_wait passes with nothing sent, the gate has it, and
  // serves its next request as before.
  CHECK(s.waiting_becomes(1, std::chrono::seconds(3)));
  CHECK(got_n(client));
}

TEST_CASE("with more connections open than wait_while_open, a connection goes back to the gate") {
  // With many connections, waiting on each made the slowest answers several
  // times slower (bench/README.md): the gate serves them in turn instead.
  GatedHttpServer::Limits limits;
  limits.next_request_wait = std::chrono::seconds(10);
  limits.wait_while_open = 1;
  Serving s(limits);
  toolmux::testing::TcpClient idle(s.port);
  REQUIRE(idle.fd() >= 0);
  CHECK(s.waiting_becomes(1, std::chrono::seconds(3)));  // the idle one, in the gate
  toolmux::testing::TcpClient client(s.port);
  CHECK(got_n(client));
  // Back in the gate long before the 10 s a wait would take.
  CHECK(s.waiting_becomes(2, std::chrono::seconds(3)));
  CHECK(got_n(client));
}

TEST_CASE("a head sent in parts, or too large, while the thread waits goes to the gate's limits") {
  GatedHttpServer::Limits limits;
  limits.next_request_wait = std::chrono::milliseconds(200);
  limits.gate.max_head_bytes = 1024;
  Serving s(limits);

  SECTION("in parts: the gate waits for the rest, with what was read kept") {
    toolmux::testing::TcpClient client(s.port);
    CHECK(got_n(client));
    REQUIRE(client.send("GET /n HTTP/1.1\r\n"));
    CHECK(s.waiting_becomes(1, std::chrono::seconds(3)));
    REQUIRE(client.send("Host: 127.0.0.1\r\n\r\n"));
    CHECK_THAT(client.receive(std::chrono::seconds(3), "\r\n\r\nn"), Catch::EndsWith("\r\n\r\nn"));
  }
  SECTION("whole but over max_head_bytes: 431, as from the gate") {
    toolmux::testing::TcpClient client(s.port);
    CHECK(got_n(client));
    REQUIRE(client.send("GET /n HTTP/1.1\r\nX-Pad: " + std::string(2000, 'x') + "\r\n\r\n"));
    const std::string answer = client.receive(std::chrono::seconds(3), "bytes");
    CHECK(answer.rfind("HTTP/1.1 431 Request Header Fields Too Large\r\n", 0) == 0);
    CHECK(s.server.gate_stats().heads_too_large == 1);
  }
  SECTION("not whole and over max_head_bytes already: 431 at once, not 408 at header_timeout") {
    toolmux::testing::TcpClient client(s.port);
    CHECK(got_n(client));
    REQUIRE(client.send("GET /n HTTP/1.1\r\nX-Pad: " + std::string(2000, 'x')));
    const std::string answer = client.receive(std::chrono::seconds(2), "bytes");
    CHECK(answer.rfind("HTTP/1.1 431 Request Header Fields Too Large\r\n", 0) == 0);
  }
}
