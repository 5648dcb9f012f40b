#include "catalog/utf8.h"

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

}  // namespace toolmux
