#include "src/base/utf8.h"

namespace toolmux {
namespace {

// Continuation bytes are 10xxxxxx; every other byte starts a character.
bool starts_character(char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }

}  // namespace

std::size_t utf8_length(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += starts_character(c) ? 1 : 0;
  return n;
}

std::size_t utf8_byte_offset(std::string_view text, std::size_t chars) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (starts_character(text[i])) {
      if (seen == chars) return i;
      ++seen;
    }
  }
  return text.size();
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  while (cut > 0 && !starts_character(text[cut])) --cut;
  return text.substr(0, cut);
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
