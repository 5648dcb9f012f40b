#include "src/base/terminal_text.h"

#include <algorithm>
#include <cstdint>

#include "src/base/utf8.h"

namespace toolmux {

namespace {

bool acted_on(std::uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 || cp == 0x061C ||
         cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

void append_escape(std::string& out, std::uint32_t cp) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (cp) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
  }
}

}  // namespace

std::string terminal_text(std::string_view text, Unprintable how) {
  const std::string valid = lossy_utf8(text);
  std::string out;
  out.reserve(valid.size());
  for (std::size_t i = 0; i < valid.size();) {
    const Utf8Char c = decode_utf8(valid, i);
    if (!acted_on(c.code_point)) {
      out.append(valid, i, c.length);
    } else if (how == Unprintable::space) {
      out += ' ';
    } else {
      append_escape(out, c.code_point);
    }
    i += c.length;
  }
  return out;
}

std::string terminal_json(std::string_view json_text) {
  std::string out;
  out.reserve(json_text.size());
  for (std::size_t start = 0; start <= json_text.size();) {
    const std::size_t end = std::min(json_text.find('\n', start), json_text.size());
    out += terminal_text(json_text.substr(start, end - start));
    if (end == json_text.size()) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace toolmux
