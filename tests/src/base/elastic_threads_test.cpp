#include "src/base/elastic_threads.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>

#include <catch2/catch.hpp>

using namespace toolmux;
using namespace std::chrono_literals;

namespace {

// Waits until `count` parties have arrived, or `timeout` passes.
class Gate {
 public:
  explicit Gate(int count) : left_(count) {}
  bool arrive_and_wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (--left_ <= 0) changed_.notify_all();
    return changed_.wait_for(lock, timeout, [this] { return left_ <= 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int left_;
};

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

}  // namespace

TEST_CASE("jobs that wait for each other all run at once: none waits behind another") {
  ElasticThreads pool;
  constexpr int kJobs = 50;
  Gate gate(kJobs);
  std::atomic<int> met{0};
  for (int i = 0; i < kJobs; ++i) {
    REQUIRE(pool.post([&] {
      if (gate.arrive_and_wait(5000ms)) ++met;
    }));
  }
  REQUIRE(wait_for([&] { return met.load() == kJobs; }, 10000ms));
  REQUIRE(pool.shutdown(5000ms));
}

TEST_CASE("an idle pool reuses its threads, and idle threads end after the timeout") {
  ElasticThreads pool(16, 200ms);
  for (int round = 0; round < 20; ++round) {
    std::atomic<bool> ran{false};
    REQUIRE(pool.post([&] { ran = true; }));
    REQUIRE(wait_for([&] { return ran.load(); }, 2000ms));
    REQUIRE(wait_for([&] { return pool.threads() <= 1; }, 2000ms));
  }
  CHECK(pool.threads() == 1);
  REQUIRE(wait_for([&] { return pool.threads() == 0; }, 3000ms));
}

TEST_CASE("past max_threads jobs wait their turn, and every one runs") {
  ElasticThreads pool(2, 1000ms);
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::atomic<int> done{0};
  for (int i = 0; i < 10; ++i) {
    REQUIRE(pool.post([&] {
      const int now = ++running;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(20ms);
      --running;
      ++done;
    }));
  }
  REQUIRE(wait_for([&] { return done.load() == 10; }, 5000ms));
  CHECK(most.load() <= 2);
  CHECK(pool.shutdown(2000ms));
}

namespace {

// A ThreadStarter that starts `allowed` threads, then fails as the system does
// when it refuses one (std::thread throws std::system_error, EAGAIN).
ElasticThreads::ThreadStarter starter_allowing(int allowed, std::atomic<int>& started) {
  return [allowed, &started](std::function<void()> body) {
    if (started.load() >= allowed) {
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                              "thread");
    }
    ++started;
    std::thread(std::move(body)).detach();
  };
}

}  // namespace

TEST_CASE("a post that cannot start a thread, with none alive, returns false and drops the job") {
  std::atomic<int> started{0};
  ElasticThreads pool(8, 1000ms, starter_allowing(0, started));
  std::atomic<bool> ran{false};
  CHECK_FALSE(pool.post([&] { ran = true; }));
  CHECK(pool.threads() == 0);
  std::this_thread::sleep_for(50ms);
  CHECK_FALSE(ran.load());
  CHECK(pool.shutdown(1000ms));
}

TEST_CASE("a post that cannot start a thread waits for a thread that is alive") {
  std::atomic<int> started{0};
  ElasticThreads pool(8, 1000ms, starter_allowing(1, started));
  Gate release(2);
  std::atomic<int> done{0};
  REQUIRE(pool.post([&] {
    release.arrive_and_wait(5000ms);
    ++done;
  }));
  // The first thread is busy and no second one can be started: the job
  // waits its turn on the first.
  REQUIRE(pool.post([&] { ++done; }));
  CHECK(started.load() == 1);
  std::this_thread::sleep_for(50ms);
  CHECK(done.load() == 0);
  release.arrive_and_wait(5000ms);
  REQUIRE(wait_for([&] { return done.load() == 2; }, 5000ms));
  CHECK(pool.threads() == 1);
  CHECK(pool.shutdown(2000ms));
}

TEST_CASE("a lowered cap ends the idle threads above it") {
  ElasticThreads pool(8, 5000ms);
  constexpr int kJobs = 6;
  Gate gate(kJobs);
  std::atomic<int> done{0};
  for (int i = 0; i < kJobs; ++i) {
    REQUIRE(pool.post([&] {
      gate.arrive_and_wait(5000ms);
      ++done;
    }));
  }
  REQUIRE(wait_for([&] { return done.load() == kJobs; }, 5000ms));
  CHECK(pool.threads() == kJobs);
  pool.set_max_threads(2);
  REQUIRE(wait_for([&] { return pool.threads() == 2; }, 2000ms));
  CHECK(pool.shutdown(2000ms));
}

TEST_CASE("a job a failed post drops is let go outside the pool's lock: its owner may post again") {
  std::atomic<int> started{0};
  ElasticThreads pool(8, 1000ms, starter_allowing(0, started));
  // What a dropped call holds: its place, whose release starts the next call.
  struct PostsWhenGone {
    ElasticThreads& pool;
    std::atomic<int>& reposts;
    ~PostsWhenGone() {
      if (!pool.post([] {})) ++reposts;
    }
  };
  std::atomic<int> reposts{0};
  auto owner = std::make_shared<PostsWhenGone>(pool, reposts);
  CHECK_FALSE(pool.post([owner = std::move(owner)] {}));
  CHECK(reposts.load() == 1);
}
