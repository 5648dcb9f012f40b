#include "transports/closure_watch.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "tests/support/eventually.h"

using toolmux::ClosureWatch;
using toolmux::testing::eventually;
using namespace std::chrono_literals;

namespace {

// A connected pair of stream sockets: [0] the server's side, [1] the client's.
struct Pair {
  Pair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0); }
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;
  ~Pair() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  void close_client() {
    ::close(fd[1]);
    fd[1] = -1;
  }
  int fd[2] = {-1, -1};
};

}  // namespace

TEST_CASE("on_close runs once the client closes, not while it only sends") {
  ClosureWatch watch;
  Pair pair;
  std::atomic<int> closed{0};
  auto watched = watch.watch(pair.fd[0], [&] { ++closed; });
  REQUIRE(watched);
  // Data (a pipelined request) is not a closure.
  REQUIRE(::write(pair.fd[1], "GET / HTTP/1.1\r\n\r\n", 18) == 18);
  std::this_thread::sleep_for(100ms);
  CHECK(closed.load() == 0);
  pair.close_client();
  CHECK(eventually([&] { return closed.load() == 1; }, 5s));
  std::this_thread::sleep_for(50ms);
  CHECK(closed.load() == 1);
}

TEST_CASE("a client gone before the watch began is told at once") {
  ClosureWatch watch;
  Pair pair;
  pair.close_client();
  std::atomic<int> closed{0};
  auto watched = watch.watch(pair.fd[0], [&] { ++closed; });
  CHECK(eventually([&] { return closed.load() == 1; }, 5s));
}

TEST_CASE("a watch reset before the client closes never runs on_close") {
  ClosureWatch watch;
  Pair pair;
  std::atomic<int> closed{0};
  auto watched = watch.watch(pair.fd[0], [&] { ++closed; });
  watched.reset();
  pair.close_client();
  // Another watch, closed after, shows that the thread has looked since.
  Pair other;
  std::atomic<int> other_closed{0};
  auto second = watch.watch(other.fd[0], [&] { ++other_closed; });
  other.close_client();
  REQUIRE(eventually([&] { return other_closed.load() == 1; }, 5s));
  CHECK(closed.load() == 0);
}

TEST_CASE("resetting a watch whose on_close runs waits for it to return") {
  ClosureWatch watch;
  Pair pair;
  std::atomic<bool> running{false};
  std::atomic<bool> returned{false};
  auto watched = watch.watch(pair.fd[0], [&] {
    running = true;
    std::this_thread::sleep_for(300ms);
    returned = true;
  });
  pair.close_client();
  REQUIRE(eventually([&] { return running.load(); }, 5s));
  watched.reset();
  CHECK(returned.load());
}

TEST_CASE("a socket that cannot be watched gives an empty watch") {
  ClosureWatch watch;
  auto watched = watch.watch(-1, [] {});
  CHECK_FALSE(watched);
}
