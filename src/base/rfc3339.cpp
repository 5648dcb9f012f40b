#include "src/base/rfc3339.h"

#include <cstdio>

namespace toolmux {

std::string format_rfc3339(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::floor<std::chrono::milliseconds>(t);
  const auto day = std::chrono::floor<std::chrono::days>(ms);
  const std::chrono::year_month_day date{day};
  const std::chrono::hh_mm_ss<std::chrono::milliseconds> time{ms - day};
  char out[40];
  std::snprintf(out, sizeof out, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ",
                static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()), static_cast<int>(time.hours().count()),
                static_cast<int>(time.minutes().count()), static_cast<int>(time.seconds().count()),
                static_cast<int>(time.subseconds().count()));
  return out;
}

}  // namespace toolmux
