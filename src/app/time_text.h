// Times as the command line reads and prints them: RFC 3339 in UTC, and
// durations back from now ("90s", "15m", "2h", "7d"), for `toolmux audit
// --since` and the times `toolmux journal` and `toolmux audit` print.
// Pure functions; no input makes them throw.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "src/base/rfc3339.h"  // format_rfc3339, for those who read and print

namespace toolmux {

// The time an RFC 3339 date-time names ("2026-12-01T10:00:00Z",
// "2026-12-01T12:00:00.5+02:00"); nullopt when `text` is not one. A leap
// second (:60) counts as the next second's start.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);

// A whole number and a unit, s, m, h or d ("90s", "15m", "2h", "7d"), at most
// 36500 days; nullopt otherwise.
std::optional<std::chrono::seconds> parse_duration_back(std::string_view text);

}  // namespace toolmux
