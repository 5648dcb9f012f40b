// UTF-8, the one module: decoding one character, validating, making text
// valid by replacing what is not, counting and cutting by characters. Every
// other place that reads UTF-8 byte by byte calls these.
//
// Well-formed means Unicode's table of well-formed byte sequences (Unicode
// 15, table 3-7): no overlong forms, no surrogates (U+D800..U+DFFF), nothing
// above U+10FFFF. Pure functions of their arguments: no state, no exceptions,
// any bytes may be given unless a function says otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace toolmux {

// U+FFFD REPLACEMENT CHARACTER, encoded: what stands for bytes that are not
// valid UTF-8.
inline constexpr std::string_view kUtf8Replacement = "\xEF\xBF\xBD";

// The character that starts at byte `pos` (pos < text.size()).
struct Utf8Char {
  bool valid = false;
  // When valid: the code point. Otherwise 0.
  std::uint32_t code_point = 0;
  // When valid: the character's bytes (1-4). Otherwise the length of the
  // maximal ill-formed subpart starting at pos (at least 1): the bytes that
  // Unicode's "substitution of maximal subparts" replaces with one U+FFFD.
  std::size_t length = 1;
};
Utf8Char decode_utf8(std::string_view text, std::size_t pos);

// True for a continuation byte (10xxxxxx): one that starts no character.
inline bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The length of the character whose first byte is `lead`, in valid UTF-8
// (1-4); for stepping through text already checked, without checking again.
inline std::size_t utf8_lead_length(char lead) {
  const auto b = static_cast<unsigned char>(lead);
  return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
}

// True when `text` is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

// `text` with every byte that starts no well-formed character replaced by
// U+FFFD, one replacement per byte; well-formed characters are kept. Text
// safe to put in a JSON string.
std::string lossy_utf8(std::string_view text);

// Appends code point `cp` (at most U+10FFFF) encoded as UTF-8.
void append_utf8(std::string& out, std::uint32_t cp);

// The number of characters of valid UTF-8 `text` (for invalid text: the
// number of bytes that are not continuation bytes).
std::size_t utf8_length(std::string_view text);

// The byte offset where character number `chars` starts (text.size() when the
// text has no more characters than that). Never inside a character.
std::size_t utf8_byte_offset(std::string_view text, std::size_t chars);

// The longest start of `text` of at most `max_bytes` bytes that does not end
// inside a character.
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

// `text` without a last character that was cut short (a lead byte whose
// continuation bytes are missing at the end), for output that a byte cap
// stopped in the middle of a character. Text that ends on a whole character
// comes back as it is.
std::string_view utf8_without_cut_tail(std::string_view text);

// For quoting text that came from a caller in a message: at most `max_bytes`
// of it, cut at a character boundary, with "…" when cut. Whatever the input's
// size, a message that quotes it stays short. Any bytes may be given.
constexpr std::size_t kMessageQuoteBytes = 200;
std::string clip_for_message(std::string_view text, std::size_t max_bytes = kMessageQuoteBytes);
// " (N bytes)" when clip_for_message cuts `text`, else "": to follow the quote.
std::string clipped_size_note(std::string_view text, std::size_t max_bytes = kMessageQuoteBytes);

}  // namespace toolmux
