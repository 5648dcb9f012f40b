#include "src/base/log_rate_limit.h"

#include <algorithm>

namespace toolmux {

LogRateLimit::LogRateLimit(double per_second, double burst, Clock::duration summary_every)
    : per_second_(per_second), burst_(burst), summary_every_(summary_every), tokens_(burst) {}

LogRateLimit::Verdict LogRateLimit::admit(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (last_refill_ && now > *last_refill_) {
    const double seconds = std::chrono::duration<double>(now - *last_refill_).count();
    tokens_ = std::min(burst_, tokens_ + seconds * per_second_);
  }
  if (!last_refill_ || now > *last_refill_) last_refill_ = now;
  Verdict verdict;
  verdict.pass = tokens_ >= 1;
  if (verdict.pass) {
    tokens_ -= 1;
  } else if (unreported_++ == 0) {
    period_start_ = now;
  }
  // Not at each message that passes between drops: a steady flood lets one
  // through at every token, and a summary each time would be a flood again.
  if (unreported_ > 0 && now - period_start_ >= summary_every_) {
    verdict.report = unreported_;
    unreported_ = 0;
  }
  return verdict;
}

std::uint64_t LogRateLimit::flush() {
  std::lock_guard lock(mutex_);
  const std::uint64_t count = unreported_;
  unreported_ = 0;
  return count;
}

std::string LogRateLimit::drop_summary(std::uint64_t dropped, const std::string& what) const {
  return "dropped " + std::to_string(dropped) + " " + what + " (over " +
         std::to_string(static_cast<int>(per_second_)) + " a second, in bursts of " +
         std::to_string(static_cast<int>(burst_)) + ")";
}

}  // namespace toolmux
