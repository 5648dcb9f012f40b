#include "src/app/time_text.h"

#include <charconv>
#include <cstdint>
#include <cstdio>

#include "catalog/string_formats.h"

namespace toolmux {

namespace {

using std::chrono::system_clock;

// The number in text[at, at + count): the caller has checked the digits.
int number_at(std::string_view text, std::size_t at, std::size_t count) {
  int value = 0;
  for (std::size_t i = at; i < at + count; ++i) value = value * 10 + (text[i] - '0');
  return value;
}

}  // namespace

std::optional<system_clock::time_point> parse_rfc3339(std::string_view text) {
  // Checked first, so that the fields below are where the grammar puts them:
  // YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM).
  if (!is_rfc3339_date_time(text)) return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year(number_at(text, 0, 4)),
                                         std::chrono::month(number_at(text, 5, 2)),
                                         std::chrono::day(number_at(text, 8, 2))};
  auto t = system_clock::time_point(std::chrono::sys_days(date)) +
           std::chrono::hours(number_at(text, 11, 2)) +
           std::chrono::minutes(number_at(text, 14, 2)) +
           std::chrono::seconds(number_at(text, 17, 2));
  std::size_t i = 19;
  if (text[i] == '.') {
    // Nanoseconds: the first nine digits count, the rest are below them.
    std::int64_t nanos = 0;
    std::int64_t scale = 100'000'000;
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      nanos += (text[i] - '0') * scale;
      scale /= 10;
    }
    t += std::chrono::duration_cast<system_clock::duration>(std::chrono::nanoseconds(nanos));
  }
  if (text[i] == '+' || text[i] == '-') {
    // Local time = UTC + offset.
    const auto offset = std::chrono::hours(number_at(text, i + 1, 2)) +
                        std::chrono::minutes(number_at(text, i + 4, 2));
    t += text[i] == '+' ? -offset : offset;
  }
  return t;
}

std::optional<std::chrono::seconds> parse_duration_back(std::string_view text) {
  if (text.size() < 2) return std::nullopt;
  std::int64_t unit = 0;
  switch (text.back()) {
    case 's':
      unit = 1;
      break;
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    default:
      return std::nullopt;
  }
  const std::string_view digits = text.substr(0, text.size() - 1);
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  constexpr std::int64_t kMostSeconds = 36500LL * 86400;
  if (ec != std::errc() || end != digits.data() + digits.size() || n < 0 ||
      n > kMostSeconds / unit) {
    return std::nullopt;
  }
  return std::chrono::seconds(n * unit);
}

}  // namespace toolmux
