#include "catalog/string_formats.h"

#include <cstddef>

namespace toolmux {

namespace {

// Reads `count` ASCII digits at `at` into `value`; false when there are fewer.
bool digits(std::string_view text, std::size_t at, std::size_t count, int& value) {
  if (at + count > text.size()) return false;
  value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + (text[i] - '0');
  }
  return true;
}

bool leap(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

// full-date = date-fullyear "-" date-month "-" date-mday; `end` is past it.
bool date_at(std::string_view text, std::size_t& end) {
  int year = 0;
  int month = 0;
  int day = 0;
  if (!digits(text, 0, 4, year) || text.size() < 10 || text[4] != '-' ||
      !digits(text, 5, 2, month) || text[7] != '-' || !digits(text, 8, 2, day)) {
    return false;
  }
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1) return false;
  const int last = month == 2 && leap(year) ? 29 : kDays[month - 1];
  if (day > last) return false;
  end = 10;
  return true;
}

// full-time = partial-time time-offset, from `at` to the end of `text`.
bool time_from(std::string_view text, std::size_t at) {
  int hour = 0;
  int minute = 0;
  int second = 0;
  if (!digits(text, at, 2, hour) || at + 8 > text.size() || text[at + 2] != ':' ||
      !digits(text, at + 3, 2, minute) || text[at + 5] != ':' || !digits(text, at + 6, 2, second)) {
    return false;
  }
  if (hour > 23 || minute > 59 || second > 60) return false;
  std::size_t i = at + 8;
  if (i < text.size() && text[i] == '.') {
    const std::size_t first = ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    if (i == first) return false;
  }
  if (i >= text.size()) return false;
  if (text[i] == 'Z' || text[i] == 'z') return i + 1 == text.size();
  if (text[i] != '+' && text[i] != '-') return false;
  int offset_hour = 0;
  int offset_minute = 0;
  if (!digits(text, i + 1, 2, offset_hour) || i + 6 != text.size() || text[i + 3] != ':' ||
      !digits(text, i + 4, 2, offset_minute)) {
    return false;
  }
  return offset_hour <= 23 && offset_minute <= 59;
}

}  // namespace

bool is_rfc3339_date(std::string_view text) {
  std::size_t end = 0;
  return date_at(text, end) && end == text.size();
}

bool is_rfc3339_time(std::string_view text) { return time_from(text, 0); }

bool is_rfc3339_date_time(std::string_view text) {
  std::size_t end = 0;
  if (!date_at(text, end) || end >= text.size()) return false;
  if (text[end] != 'T' && text[end] != 't') return false;
  return time_from(text, end + 1);
}

}  // namespace toolmux
