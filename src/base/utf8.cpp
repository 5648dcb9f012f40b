#include "src/base/utf8.h"

namespace toolmux {

Utf8Char decode_utf8(std::string_view text, std::size_t pos) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return {true, lead, 1};
  std::size_t length = 0;
  std::uint32_t cp = 0;
  // The allowed range of the second byte: narrower after E0 and F0 (no
  // overlongs), ED (no surrogates) and F4 (nothing above U+10FFFF).
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    cp = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    cp = lead & 0x0Fu;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    cp = lead & 0x07u;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return {false, 0, 1};
  }
  for (std::size_t i = 1; i < length; ++i) {
    const std::size_t at = pos + i;
    if (at >= text.size()) return {false, 0, i};
    const unsigned char c = byte(at);
    const unsigned char lo = i == 1 ? low : 0x80;
    const unsigned char hi = i == 1 ? high : 0xBF;
    if (c < lo || c > hi) return {false, 0, i};
    cp = (cp << 6) | (c & 0x3Fu);
  }
  return {true, cp, length};
}

bool is_valid_utf8(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const Utf8Char c = decode_utf8(text, pos);
    if (!c.valid) return false;
    pos += c.length;
  }
  return true;
}

std::string lossy_utf8(std::string_view text) {
  if (is_valid_utf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    const Utf8Char c = decode_utf8(text, pos);
    if (c.valid) {
      out.append(text.substr(pos, c.length));
      pos += c.length;
    } else {
      out += kUtf8Replacement;
      ++pos;
    }
  }
  return out;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::size_t utf8_length(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += is_utf8_continuation(c) ? 0 : 1;
  return n;
}

std::size_t utf8_byte_offset(std::string_view text, std::size_t chars) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_utf8_continuation(text[i])) {
      if (seen == chars) return i;
      ++seen;
    }
  }
  return text.size();
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  while (cut > 0 && is_utf8_continuation(text[cut])) --cut;
  return text.substr(0, cut);
}

std::string_view utf8_without_cut_tail(std::string_view text) {
  // The last byte that is no continuation byte, within a character's length
  // of the end: the lead byte of the last character.
  for (std::size_t back = 0; back < 4 && back < text.size(); ++back) {
    const auto byte = static_cast<unsigned char>(text[text.size() - 1 - back]);
    if ((byte & 0xC0) == 0x80) continue;
    // The length its lead byte announces; 1 for a byte that leads nothing.
    const std::size_t length = byte < 0x80           ? 1
                               : (byte >> 5) == 0x6  ? 2
                               : (byte >> 4) == 0xE  ? 3
                               : (byte >> 3) == 0x1E ? 4
                                                     : 1;
    return length > back + 1 ? text.substr(0, text.size() - 1 - back) : text;
  }
  return text;
}

std::string clip_for_message(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  return std::string(utf8_prefix(text, max_bytes)) + "\xE2\x80\xA6";
}

std::string clipped_size_note(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return "";
  return " (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace toolmux
