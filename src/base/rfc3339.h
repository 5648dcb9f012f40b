// A time as the protocol and the command line print it: RFC 3339 in UTC with
// milliseconds ("2026-12-01T10:00:00.123Z"). Reading one back is
// src/app/time_text.h's. Pure; never throws.
#pragma once

#include <chrono>
#include <string>

namespace toolmux {

std::string format_rfc3339(std::chrono::system_clock::time_point t);

}  // namespace toolmux
