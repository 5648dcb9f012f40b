// Counting and cutting UTF-8 text by Unicode characters (code points), for
// limits that speak in characters. The text must be valid UTF-8
// (is_valid_utf8 in untrusted_json.h).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace toolmux {

std::size_t utf8_length(std::string_view text);

// The byte offset where character number `chars` starts (text.size() when the
// text has no more characters than that). Never inside a character.
std::size_t utf8_byte_offset(std::string_view text, std::size_t chars);

// For quoting text that came from a caller in a message: at most `max_bytes`
// of it, cut at a character boundary, with "…" when cut. Whatever the input's
// size, a message that quotes it stays short. Any bytes may be given.
constexpr std::size_t kMessageQuoteBytes = 200;
// The longest start of `text` of at most `max_bytes` bytes that does not end
// inside a character.
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

std::string clip_for_message(std::string_view text, std::size_t max_bytes = kMessageQuoteBytes);
// " (N bytes)" when clip_for_message cuts `text`, else "": to follow the quote.
std::string clipped_size_note(std::string_view text, std::size_t max_bytes = kMessageQuoteBytes);

}  // namespace toolmux
