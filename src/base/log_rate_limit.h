// A token bucket over the log messages of one source (an upstream MCP
// server's notifications/message): up to `burst` messages at once and
// `per_second` on average pass; the rest are dropped and counted, so a flood
// costs a counter, not a log line or a client notification each.
//
// The counts come back to be reported in one summary line, at most once
// every `summary_every` (the first period starting with the first drop), and
// the rest when flush() is called (at the end of the call the flood came
// with). Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace toolmux {

class LogRateLimit {
 public:
  using Clock = std::chrono::steady_clock;

  struct Verdict {
    bool pass = false;         // relay this message
    std::uint64_t report = 0;  // > 0: report now that this many were dropped
  };

  LogRateLimit(double per_second, double burst, Clock::duration summary_every);

  Verdict admit(Clock::time_point now = Clock::now());
  // The dropped messages not reported yet (0 when none), which count as
  // reported from now on.
  std::uint64_t flush();

  double per_second() const { return per_second_; }
  double burst() const { return burst_; }

  // The summary line for `dropped` of them: "dropped N <what> (over R a
  // second, in bursts of B)", e.g. what = "stderr lines from upstream \"x\"".
  std::string drop_summary(std::uint64_t dropped, const std::string& what) const;

 private:
  const double per_second_;
  const double burst_;
  const Clock::duration summary_every_;
  std::mutex mutex_;
  double tokens_;
  std::optional<Clock::time_point> last_refill_;
  std::uint64_t unreported_ = 0;
  Clock::time_point period_start_{};  // of the summary period: the first drop since a report
};

}  // namespace toolmux
