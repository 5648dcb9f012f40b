// LogRateLimit: the token bucket over an upstream's log messages, on a clock
// the test moves.
#include "src/log_rate_limit.h"

#include <catch2/catch.hpp>

using namespace toolmux;
using namespace std::chrono_literals;
using Clock = LogRateLimit::Clock;

TEST_CASE("a burst passes, then the rate; the rest are dropped and reported now and then") {
  LogRateLimit limit(10, 5, 10s);
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < 5; ++i) {
    auto verdict = limit.admit(t0);
    CHECK(verdict.pass);
    CHECK(verdict.report == 0);
  }
  // Over the burst: dropped, and counted.
  for (int i = 0; i < 3; ++i) CHECK_FALSE(limit.admit(t0).pass);
  // 0.5 s later five more have been earned; the first one passing reports
  // the three dropped before it.
  auto resumed = limit.admit(t0 + 500ms);
  CHECK(resumed.pass);
  CHECK(resumed.report == 3);
  for (int i = 0; i < 4; ++i) CHECK(limit.admit(t0 + 500ms).pass);
  CHECK_FALSE(limit.admit(t0 + 500ms).pass);
  CHECK(limit.flush() == 1);
  CHECK(limit.flush() == 0);
}

TEST_CASE("a flood that goes on is reported once per period while it lasts") {
  LogRateLimit limit(1, 1, 10s);
  const Clock::time_point t0 = Clock::now();
  CHECK(limit.admit(t0).pass);
  // A thousand a second for 25 s, less the one a second that passes.
  std::uint64_t reported = 0;
  int reports = 0;
  std::uint64_t passed = 0;
  for (int ms = 0; ms < 25000; ++ms) {
    auto verdict = limit.admit(t0 + std::chrono::milliseconds(ms));
    passed += verdict.pass ? 1 : 0;
    if (verdict.report > 0) {
      reported += verdict.report;
      ++reports;
    }
  }
  reported += limit.flush();
  CHECK(passed + reported == 25000);
  CHECK(passed <= 26);
  CHECK(reports >= 2);
  CHECK(reports <= 30);  // one per period, and one per message that passed after drops
}
