#include "transports/connection_gate.h"

#include <dirent.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/eventually.h"
#include "tests/support/tcp.h"

using toolmux::ConnectionGate;
using toolmux::GatedConnection;
using toolmux::GateLimits;
using toolmux::testing::eventually;
using toolmux::testing::TcpClient;
using toolmux::testing::TcpListener;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view kHead = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";

// A gate on a listening socket, and the connections it handed over.
struct Gate {
  explicit Gate(GateLimits limits)
      : gate(limits, [this](std::shared_ptr<GatedConnection> c) {
          std::lock_guard lock(mutex);
          ready.push_back(std::move(c));
          changed.notify_all();
        }) {
    const toolmux::Status started = gate.start();
    INFO(started.message());
    REQUIRE(started.ok());
  }

  // Connects from `from` and gives the server side to the gate.
  std::unique_ptr<TcpClient> connect(const char* from = "127.0.0.1") {
    auto client = std::make_unique<TcpClient>(listener.port(), from);
    REQUIRE(client->fd() >= 0);
    gate.admit(listener.accept());
    return client;
  }

  // The next connection handed over, or null after `timeout`.
  std::shared_ptr<GatedConnection> next(std::chrono::milliseconds timeout = 3s) {
    std::unique_lock lock(mutex);
    if (!changed.wait_for(lock, timeout, [this] { return !ready.empty(); })) return nullptr;
    auto c = std::move(ready.front());
    ready.pop_front();
    return c;
  }

  TcpListener listener;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::shared_ptr<GatedConnection>> ready;
  ConnectionGate gate;
};

// All `size` bytes from a handed-over connection (its read-ahead first).
std::string read_exactly(GatedConnection& c, std::size_t size) {
  std::string out(size, '\0');
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = c.read(out.data() + got, size - got, GatedConnection::Clock::now() + 3s);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

std::size_t thread_count() {
  std::size_t n = 0;
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (const dirent* entry = ::readdir(dir)) n += entry->d_name[0] != '.';
    ::closedir(dir);
  }
  return n;
}

}  // namespace

TEST_CASE("a connection is handed over only once its whole request head has arrived") {
  Gate g(GateLimits{});
  auto client = g.connect();
  REQUIRE(client->send("GET / HTTP/1.1\r\nHost: loc"));
  CHECK(g.next(300ms) == nullptr);
  REQUIRE(client->send("alhost\r\n"));
  CHECK(g.next(300ms) == nullptr);
  REQUIRE(client->send("\r\nbody"));
  auto c = g.next();
  REQUIRE(c);
  CHECK(c->has_complete_head());
  CHECK(c->client() == "127.0.0.1");
  CHECK(read_exactly(*c, kHead.size() + 4) == std::string(kHead).append("body"));
  CHECK(g.gate.stats().open == 1);
  CHECK(g.gate.stats().waiting == 0);
  c.reset();  // dropped: closed
  CHECK(client->receive(3s).empty());
  CHECK(client->closed);
  CHECK(eventually([&] { return g.gate.stats().open == 0; }));
}

TEST_CASE("many connections sending their heads slowly hold no thread") {
  Gate g(GateLimits{});
  const std::size_t before = thread_count();
  std::vector<std::unique_ptr<TcpClient>> slow;
  for (int i = 0; i < 200; ++i) slow.push_back(g.connect());
  for (int round = 0; round < 3; ++round) {
    for (auto& client : slow) REQUIRE(client->send("X"));
    std::this_thread::sleep_for(50ms);
  }
  CHECK(eventually([&] { return g.gate.stats().waiting == 200; }));
  CHECK(thread_count() == before);
  // And a client with a whole head is handed over among them.
  auto quick = g.connect();
  REQUIRE(quick->send(kHead));
  CHECK(g.next());
}

TEST_CASE("a head not complete within header_timeout gets 408, a silent connection is closed") {
  GateLimits limits;
  limits.header_timeout = 300ms;
  Gate g(limits);
  auto partial = g.connect();
  auto silent = g.connect();
  REQUIRE(partial->send("POST /mcp HTTP/1.1\r\n"));
  const auto start = std::chrono::steady_clock::now();
  const std::string answer = partial->receive(5s);
  CHECK(std::chrono::steady_clock::now() - start < 3s);
  CHECK(answer.rfind("HTTP/1.1 408 Request Timeout\r\n", 0) == 0);
  CHECK_THAT(answer, Catch::Contains("the request head did not arrive within 300 ms"));
  CHECK(partial->closed);
  CHECK(silent->receive(5s).empty());
  CHECK(silent->closed);
  CHECK(g.gate.stats().header_timeouts == 2);
  CHECK(eventually([&] { return g.gate.stats().open == 0; }));
  CHECK(g.next(10ms) == nullptr);
}

TEST_CASE("a head over max_head_bytes gets 431") {
  GateLimits limits;
  limits.max_head_bytes = 1024;
  Gate g(limits);
  auto client = g.connect();
  REQUIRE(client->send("GET / HTTP/1.1\r\nX-Pad: " + std::string(2000, 'x')));
  const std::string answer = client->receive(3s);
  CHECK(answer.rfind("HTTP/1.1 431 Request Header Fields Too Large\r\n", 0) == 0);
  CHECK_THAT(answer, Catch::Contains("the request head is over 1024 bytes"));
  CHECK(g.gate.stats().heads_too_large == 1);
  // A head of exactly the limit passes.
  auto fits = g.connect();
  const std::string start = "GET / HTTP/1.1\r\nX-Pad: ";
  REQUIRE(fits->send(start + std::string(1024 - start.size() - 4, 'x') + "\r\n\r\n"));
  CHECK(g.next());
}

TEST_CASE("past max_connections_per_client a client's connection gets 503, other clients do not") {
  GateLimits limits;
  limits.max_connections_per_client = 2;
  Gate g(limits);
  auto first = g.connect();
  auto second = g.connect();
  auto third = g.connect();
  const std::string refused = third->receive(3s);
  CHECK(refused.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0);
  CHECK_THAT(refused, Catch::Contains("Retry-After: 1\r\n"));
  CHECK_THAT(refused,
             Catch::Contains("2 connections from 127.0.0.1 are open (the limit per client)"));
  CHECK(third->closed);
  CHECK(g.gate.stats().refused_client_connections == 1);

  auto other = g.connect("127.0.0.2");
  REQUIRE(other->send(kHead));
  auto c = g.next();
  REQUIRE(c);
  CHECK(c->client() == "127.0.0.2");

  // A place freed is a place again.
  first.reset();
  CHECK(eventually([&] { return g.gate.stats().open == 2; }));
  auto again = g.connect();
  REQUIRE(again->send(kHead));
  CHECK(g.next());
  CHECK(g.gate.stats().refused_client_connections == 1);
}

TEST_CASE("past max_connections any new connection gets 503") {
  GateLimits limits;
  limits.max_connections = 2;
  Gate g(limits);
  auto a = g.connect();
  auto b = g.connect("127.0.0.2");
  auto c = g.connect("127.0.0.3");
  const std::string refused = c->receive(3s);
  CHECK(refused.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0);
  CHECK_THAT(refused, Catch::Contains("2 connections are open (the limit)"));
  CHECK(g.gate.stats().refused_connections == 1);
}

TEST_CASE(
    "a connection handed back waits for its next head, and idle past idle_timeout is closed") {
  GateLimits limits;
  limits.idle_timeout = 400ms;
  limits.header_timeout = 5s;
  Gate g(limits);
  auto client = g.connect();
  REQUIRE(client->send(kHead));
  auto c = g.next();
  REQUIRE(c);
  CHECK(read_exactly(*c, kHead.size()) == kHead);
  g.gate.wait_for_request(std::move(c));
  REQUIRE(client->send(kHead));
  c = g.next();
  REQUIRE(c);
  CHECK(read_exactly(*c, kHead.size()) == kHead);

  // Two heads at once (pipelined): handed over at once, the second still there after the first.
  REQUIRE(client->send(std::string(kHead) + std::string(kHead)));
  REQUIRE(eventually([&] { return c->readable(0ms); }));
  CHECK(read_exactly(*c, kHead.size()) == kHead);
  g.gate.wait_for_request(std::move(c));
  c = g.next();
  REQUIRE(c);
  CHECK(read_exactly(*c, kHead.size()) == kHead);

  // Idle: closed quietly (no 408) after idle_timeout.
  g.gate.wait_for_request(std::move(c));
  CHECK(client->receive(3s).empty());
  CHECK(client->closed);
  CHECK(g.gate.stats().header_timeouts == 0);
}

TEST_CASE(
    "linger: the client reads the response while it still sends, then the connection closes") {
  Gate g(GateLimits{});
  auto client = g.connect();
  REQUIRE(client->send("POST / HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n"));
  auto c = g.next();
  REQUIRE(c);
  const std::string response = "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\n\r\n";
  REQUIRE(c->write(response.data(), response.size(), 1s) == static_cast<ssize_t>(response.size()));
  g.gate.linger(std::move(c));
  // The body the server never read goes on arriving; it is drained, not refused.
  for (int i = 0; i < 10; ++i) REQUIRE(client->send(std::string(100000, 'x')));
  CHECK(client->receive(3s, "\r\n\r\n") == response);
  ::shutdown(client->fd(), SHUT_WR);
  CHECK(client->receive(3s).empty());
  CHECK(client->closed);
  CHECK(eventually([&] { return g.gate.stats().open == 0; }));
}

TEST_CASE("stop closes the connections waiting in the gate") {
  Gate g(GateLimits{});
  auto client = g.connect();
  REQUIRE(eventually([&] { return g.gate.stats().waiting == 1; }));
  g.gate.stop();
  CHECK(client->receive(3s).empty());
  CHECK(client->closed);
  CHECK(g.gate.stats().open == 0);
}
