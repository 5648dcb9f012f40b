#include "src/tool_list_cursor.h"

#include <charconv>

namespace toolmux {
namespace {

constexpr std::string_view kPrefix = "toolmux-list:";
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string base64url(std::string_view in) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (unsigned char c : in) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(buffer >> bits) & 0x3F];
    }
  }
  if (bits > 0) out += kAlphabet[(buffer << (6 - bits)) & 0x3F];
  return out;
}

std::optional<std::string> unbase64url(std::string_view in) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : in) {
    const char* pos = std::char_traits<char>::find(kAlphabet, 64, c);
    if (!pos) return std::nullopt;
    buffer = (buffer << 6) | static_cast<unsigned>(pos - kAlphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

}  // namespace

std::string encode_tool_list_cursor(std::size_t offset) {
  return base64url(std::string(kPrefix) + std::to_string(offset));
}

std::optional<std::size_t> decode_tool_list_cursor(std::string_view cursor) {
  if (cursor.size() > 64) return std::nullopt;
  auto text = unbase64url(cursor);
  if (!text || text->rfind(kPrefix, 0) != 0) return std::nullopt;
  std::string_view digits = std::string_view(*text).substr(kPrefix.size());
  std::size_t offset = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), offset);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
    return std::nullopt;
  }
  // Only canonical text decodes, so each page has exactly one cursor.
  if (encode_tool_list_cursor(offset) != cursor) return std::nullopt;
  return offset;
}

}  // namespace toolmux
