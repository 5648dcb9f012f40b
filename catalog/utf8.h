// Counting and cutting UTF-8 text by Unicode characters (code points), for
// limits that speak in characters. The text must be valid UTF-8
// (is_valid_utf8 in untrusted_json.h).
#pragma once

#include <cstddef>
#include <string_view>

namespace toolmux {

std::size_t utf8_length(std::string_view text);

// The byte offset where character number `chars` starts (text.size() when the
// text has no more characters than that). Never inside a character.
std::size_t utf8_byte_offset(std::string_view text, std::size_t chars);

}  // namespace toolmux
