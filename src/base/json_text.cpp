#include "src/base/json_text.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "src/base/scratch_vector.h"
#include "src/base/utf8.h"

namespace toolmux {

namespace {

// The bytes a JSON string holds as they are: printable ASCII but '"' and '\\'.
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
  return plain;
}();

// Whether any of the 8 bytes in `word` is not plain (kPlain): below 0x20, '"',
// '\\' or from 0x80 up. Exact for the word as a whole, whichever byte it is.
constexpr bool any_not_plain(std::uint64_t word) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  // A byte of `v` is zero (or, with the subtraction from 0x20s, below 0x20).
  const auto below = [](std::uint64_t v, std::uint64_t n) { return (v - kOnes * n) & ~v & kHigh; };
  return ((word & kHigh) | below(word, 0x20) | below(word ^ (kOnes * '"'), 1) |
          below(word ^ (kOnes * '\\'), 1)) != 0;
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  std::size_t i = 0;
  while (i < text.size()) {
    // A run of plain bytes goes in with one append: most text is all plain.
    // Eight bytes at a time while they are, then byte by byte.
    std::size_t end = i;
    while (end + 8 <= text.size()) {
      std::uint64_t word = 0;
      std::memcpy(&word, text.data() + end, 8);
      if (any_not_plain(word)) break;
      end += 8;
    }
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
        case '\b':
          out += 'b';
          break;
        case '\f':
          out += 'f';
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

namespace {

using nlohmann::json;

// A scalar (or an empty container) as text.
void append_scalar(std::string& out, const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      out += "null";
      return;
    case json::value_t::boolean:
      out += value.get_ref<const json::boolean_t&>() ? "true" : "false";
      return;
    case json::value_t::string:
      append_json_string(out, value.get_ref<const json::string_t&>());
      return;
    case json::value_t::number_integer:
      append_integer(out, value.get_ref<const json::number_integer_t&>());
      return;
    case json::value_t::number_unsigned:
      append_integer(out, value.get_ref<const json::number_unsigned_t&>());
      return;
    case json::value_t::object:
      out += "{}";
      return;
    case json::value_t::array:
      out += "[]";
      return;
    default:  // a double, binary, discarded: rare, and nlohmann's own form
      out += value.dump(-1, ' ', false, json::error_handler_t::replace);
      return;
  }
}

// A container being written: where in it the writer is.
struct Open {
  const json* container;
  json::object_t::const_iterator member;  // objects
  std::size_t index = 0;                  // arrays
};

}  // namespace

void append_json(std::string& out, const json& value) {
  const auto open = [&out](std::vector<Open>& stack, const json& v) {
    if (v.is_object() && !v.empty()) {
      out += '{';
      stack.push_back(Open{&v, v.get_ref<const json::object_t&>().begin()});
    } else if (v.is_array() && !v.empty()) {
      out += '[';
      stack.push_back(Open{&v, {}});
    } else {
      append_scalar(out, v);
    }
  };
  thread_local std::vector<Open> storage;
  ScratchVector<Open> scratch(storage);
  std::vector<Open>& stack = *scratch;
  open(stack, value);
  while (!stack.empty()) {
    Open& top = stack.back();
    if (top.container->is_object()) {
      const auto& object = top.container->get_ref<const json::object_t&>();
      if (top.member == object.end()) {
        out += '}';
        stack.pop_back();
        continue;
      }
      if (top.member != object.begin()) out += ',';
      const auto& [key, member] = *top.member++;
      append_json_string(out, key);
      out += ':';
      open(stack, member);  // may move `top`: not used after this
    } else {
      const auto& array = top.container->get_ref<const json::array_t&>();
      if (top.index == array.size()) {
        out += ']';
        stack.pop_back();
        continue;
      }
      if (top.index != 0) out += ',';
      open(stack, array[top.index++]);
    }
  }
}

std::string json_text(const json& value) {
  std::string out;
  append_json(out, value);
  return out;
}

}  // namespace toolmux
