#include "src/app/time_text.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

using std::chrono::system_clock;
using toolmux::format_rfc3339;
using toolmux::parse_duration_back;
using toolmux::parse_rfc3339;

namespace {

system_clock::time_point epoch_plus(std::chrono::nanoseconds d) {
  return system_clock::time_point(std::chrono::duration_cast<system_clock::duration>(d));
}

}  // namespace

TEST_CASE("time text: RFC 3339 times are read in UTC, with fractions and offsets") {
  using namespace std::chrono;
  // 2026-12-01T10:00:00Z is 1796119200 seconds after the epoch.
  const auto ten = epoch_plus(seconds(1'796'119'200));
  CHECK(parse_rfc3339("2026-12-01T10:00:00Z") == ten);
  CHECK(parse_rfc3339("2026-12-01t10:00:00z") == ten);
  CHECK(parse_rfc3339("2026-12-01T12:00:00+02:00") == ten);
  CHECK(parse_rfc3339("2026-12-01T04:30:00-05:30") == ten);
  CHECK(parse_rfc3339("2026-12-01T10:00:00.25Z") == ten + milliseconds(250));
  CHECK(parse_rfc3339("2026-12-01T10:00:00.123456789123Z") == ten + nanoseconds(123'456'789));
  CHECK(parse_rfc3339("1970-01-01T00:00:00Z") == epoch_plus(seconds(0)));
  CHECK(parse_rfc3339("2024-02-29T00:00:00Z") == epoch_plus(seconds(1'709'164'800)));
  for (const char* bad : {"", "2026-12-01", "2026-12-01T10:00:00", "2026-12-01 10:00:00Z",
                          "2026-13-01T10:00:00Z", "2025-02-29T00:00:00Z", "2026-12-01T24:00:00Z",
                          "2026-12-01T10:00:00+2:00", "7d", "yesterday"}) {
    INFO(bad);
    CHECK_FALSE(parse_rfc3339(bad));
  }
}

TEST_CASE("time text: durations back from now") {
  using namespace std::chrono;
  CHECK(parse_duration_back("90s") == seconds(90));
  CHECK(parse_duration_back("15m") == minutes(15));
  CHECK(parse_duration_back("2h") == hours(2));
  CHECK(parse_duration_back("7d") == hours(7 * 24));
  CHECK(parse_duration_back("0s") == seconds(0));
  CHECK(parse_duration_back("36500d") == hours(36500 * 24));
  for (const char* bad : {"", "s", "7", "7w", "-5m", "+5m", "1.5h", "1h30m", " 5m", "36501d",
                          "99999999999999999999s"}) {
    INFO(bad);
    CHECK_FALSE(parse_duration_back(bad));
  }
}

TEST_CASE("time text: times are printed in UTC with milliseconds, and read back") {
  using namespace std::chrono;
  const auto t = epoch_plus(seconds(1'796'119'200) + milliseconds(7) + microseconds(900));
  CHECK(format_rfc3339(t) == "2026-12-01T10:00:00.007Z");
  CHECK(format_rfc3339(epoch_plus(seconds(0))) == "1970-01-01T00:00:00.000Z");
  CHECK(parse_rfc3339(format_rfc3339(t)) == epoch_plus(seconds(1'796'119'200) + milliseconds(7)));
}
