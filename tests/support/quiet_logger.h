// A Logger whose lines go nowhere, for tests that do not look at the log.
#pragma once

#include <cstdio>

#include "src/base/logger.h"

namespace toolmux::testing {

struct QuietLogger {
  std::FILE* sink = std::fopen("/dev/null", "w");
  Logger logger{sink};
  QuietLogger() = default;
  QuietLogger(const QuietLogger&) = delete;
  QuietLogger& operator=(const QuietLogger&) = delete;
  ~QuietLogger() { std::fclose(sink); }
};

}  // namespace toolmux::testing
