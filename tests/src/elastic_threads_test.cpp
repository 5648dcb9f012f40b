#include "src/elastic_threads.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
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
    pool.post([&] {
      if (gate.arrive_and_wait(5000ms)) ++met;
    });
  }
  REQUIRE(wait_for([&] { return met.load() == kJobs; }, 10000ms));
  REQUIRE(pool.shutdown(5000ms));
}

TEST_CASE("an idle pool reuses its threads, and idle threads end after the timeout") {
  ElasticThreads pool(16, 200ms);
  for (int round = 0; round < 20; ++round) {
    std::atomic<bool> ran{false};
    pool.post([&] { ran = true; });
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
    pool.post([&] {
      const int now = ++running;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(20ms);
      --running;
      ++done;
    });
  }
  REQUIRE(wait_for([&] { return done.load() == 10; }, 5000ms));
  CHECK(most.load() <= 2);
  CHECK(pool.shutdown(2000ms));
}
