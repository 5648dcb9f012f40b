#include "src/base/base64.h"

#include <cstring>

namespace toolmux {
namespace {

constexpr char kStandard[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kUrl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string encode(std::string_view bytes, const char* alphabet, bool pad) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  unsigned buffer = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += alphabet[(buffer >> bits) & 0x3F];
    }
  }
  if (bits > 0) out += alphabet[(buffer << (6 - bits)) & 0x3F];
  while (pad && out.size() % 4 != 0) out += '=';
  return out;
}

}  // namespace

std::string base64_encode(std::string_view bytes) { return encode(bytes, kStandard, true); }
std::string base64url_encode(std::string_view bytes) { return encode(bytes, kUrl, false); }

std::optional<std::string> base64url_decode(std::string_view text) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : text) {
    const char* pos = c == '\0' ? nullptr : std::strchr(kUrl, c);
    if (!pos) return std::nullopt;
    buffer = (buffer << 6) | static_cast<unsigned>(pos - kUrl);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

}  // namespace toolmux
