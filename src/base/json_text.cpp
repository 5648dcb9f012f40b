#include "src/base/json_text.h"

#include <array>
#include <charconv>
#include <cmath>

#include "src/base/utf8.h"

namespace toolmux {

namespace {

// The bytes a JSON string holds as they are: printable ASCII but '"' and '\\'.
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
  return plain;
}();

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  std::size_t i = 0;
  while (i < text.size()) {
    // A run of plain bytes goes in with one append: most text is all plain.
    std::size_t end = i;
    while (end < text.size() && kPlain[static_cast<unsigned char>(text[end])]) ++end;
    out.append(text.data() + i, end - i);
    i = end;
    if (i == text.size()) break;
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out += '\\';
      switch (c) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '\n':
          out += 'n';
          break;
        case '\r':
          out += 'r';
          break;
        case '\t':
          out += 't';
          break;
        default:
          out += "u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
      }
      ++i;
    } else {
      const Utf8Char ch = decode_utf8(text, i);
      if (ch.valid) {
        out.append(text.substr(i, ch.length));
      } else {
        out += kUtf8Replacement;
      }
      i += ch.length;
    }
  }
  out += '"';
}

void append_json_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, ec == std::errc() ? end : buf);
}

namespace {
template <typename Integer>
void append_integer(std::string& out, Integer value) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, ec == std::errc() ? end : buf);
}
}  // namespace

void append_json_number(std::string& out, std::int64_t value) { append_integer(out, value); }
void append_json_number(std::string& out, std::uint64_t value) { append_integer(out, value); }

double to_the_microsecond(double ms) { return std::round(ms * 1000.0) / 1000.0; }

void append_json_milliseconds(std::string& out, double ms) {
  constexpr double kLargest = 9007199254740992.0;  // 2^53 microseconds
  if (!std::isfinite(ms) || std::fabs(ms) * 1000.0 >= kLargest) {
    append_json_number(out, ms);
    return;
  }
  const std::int64_t signed_us = std::llround(ms * 1000.0);
  if (signed_us < 0) out += '-';
  const auto us = static_cast<std::uint64_t>(signed_us < 0 ? -signed_us : signed_us);
  append_integer(out, us / 1000);
  const auto fraction = static_cast<unsigned>(us % 1000);
  if (fraction == 0) return;
  char digits[4] = {'.', static_cast<char>('0' + fraction / 100),
                    static_cast<char>('0' + fraction / 10 % 10),
                    static_cast<char>('0' + fraction % 10)};
  std::size_t length = 4;
  while (digits[length - 1] == '0') --length;
  out.append(digits, length);
}

}  // namespace toolmux
