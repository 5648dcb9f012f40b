// LogRateLimit: the token bucket over an upstream's log messages, on a clock
// the test moves.
#include "src/base/log_rate_limit.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace toolmux;
using namespace std::chrono_literals;
using Clock = LogRateLimit::Clock;

TEST_CASE("a burst passes, then the rate, and the rest are dropped and counted") {
  LogRateLimit limit(10, 5, 10s);
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < 5; ++i) {
    auto verdict = limit.admit(t0);
    CHECK(verdict.pass);
    CHECK(verdict.report == 0);
  }
  // Over the burst: dropped, and counted.
  for (int i = 0; i < 3; ++i) CHECK_FALSE(limit.admit(t0).pass);
  // 0.5 s later five more have been earned.
  for (int i = 0; i < 5; ++i) {
    auto verdict = limit.admit(t0 + 500ms);
    CHECK(verdict.pass);
    CHECK(verdict.report == 0);  // not before the period is over
  }
  CHECK_FALSE(limit.admit(t0 + 500ms).pass);
  CHECK(limit.flush() == 4);
  CHECK(limit.flush() == 0);
  // Quiet for a while: the bucket is full again.
  for (int i = 0; i < 5; ++i) CHECK(limit.admit(t0 + 20s).pass);
  CHECK_FALSE(limit.admit(t0 + 20s).pass);
}

TEST_CASE("a flood that goes on is reported once per period while it lasts") {
  LogRateLimit limit(1, 1, 10s);
  const Clock::time_point t0 = Clock::now();
  CHECK(limit.admit(t0).pass);
  // A thousand a second for 25 s; one a second passes.
  std::uint64_t reported = 0;
  std::vector<int> reported_at;
  std::uint64_t passed = 1;
  for (int ms = 1; ms <= 25000; ++ms) {
    auto verdict = limit.admit(t0 + std::chrono::milliseconds(ms));
    passed += verdict.pass ? 1 : 0;
    if (verdict.report > 0) {
      reported += verdict.report;
      reported_at.push_back(ms);
    }
  }
  // The first drop (at 1 ms) starts the period: reports at 10.001 s and
  // 20.002 s, and the rest when flushed.
  CHECK(reported_at == std::vector<int>{10001, 20002});
  reported += limit.flush();
  CHECK(passed + reported == 25001);
  CHECK(passed >= 25);
  CHECK(passed <= 26);
}

TEST_CASE("log rate limit: the summary names the count, what was dropped and the limits",
          "[log_rate_limit]") {
  LogRateLimit limit(50, 200, std::chrono::seconds(10));
  CHECK(limit.drop_summary(7, "stderr lines from upstream \"git\"") ==
        "dropped 7 stderr lines from upstream \"git\" (over 50 a second, in bursts of 200)");
}
