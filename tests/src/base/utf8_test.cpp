#include <catch2/catch.hpp>

#include <string>

#include "src/base/utf8.h"

using toolmux::decode_utf8;
using toolmux::is_valid_utf8;
using toolmux::lossy_utf8;
using toolmux::Utf8Char;

namespace {

const std::string kFffd = "\xEF\xBF\xBD";

}  // namespace

TEST_CASE("decode_utf8 reads one character of each length with its code point") {
  Utf8Char a = decode_utf8("a", 0);
  CHECK((a.valid && a.code_point == 0x61 && a.length == 1));
  Utf8Char e = decode_utf8("\xC3\xA9", 0);  // é
  CHECK((e.valid && e.code_point == 0xE9 && e.length == 2));
  Utf8Char euro = decode_utf8("x\xE2\x82\xAC", 1);  // €, read from the middle of a text
  CHECK((euro.valid && euro.code_point == 0x20AC && euro.length == 3));
  Utf8Char emoji = decode_utf8("\xF0\x9F\x98\x80", 0);  // U+1F600
  CHECK((emoji.valid && emoji.code_point == 0x1F600 && emoji.length == 4));
  Utf8Char last = decode_utf8("\xF4\x8F\xBF\xBF", 0);  // U+10FFFF
  CHECK((last.valid && last.code_point == 0x10FFFF));
}

TEST_CASE("decode_utf8 refuses truncated sequences, giving the bytes read so far") {
  Utf8Char cut = decode_utf8("\xE2\x82", 0);
  CHECK_FALSE(cut.valid);
  CHECK(cut.length == 2);
  Utf8Char interrupted = decode_utf8(
      "\xF0\x9F"
      "A",
      0);
  CHECK_FALSE(interrupted.valid);
  CHECK(interrupted.length == 2);
  Utf8Char lone = decode_utf8("\x80", 0);
  CHECK_FALSE(lone.valid);
  CHECK(lone.length == 1);
}

TEST_CASE("decode_utf8 refuses overlong forms, surrogates and code points above U+10FFFF") {
  for (const char* bad : {"\xC0\xAF", "\xC1\xBF", "\xE0\x80\xAF", "\xF0\x80\x80\xAF",  // overlong
                          "\xED\xA0\x80", "\xED\xBF\xBF",                              // surrogates
                          "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF"}) {
    INFO(bad);
    Utf8Char c = decode_utf8(bad, 0);
    CHECK_FALSE(c.valid);
    CHECK(c.length == 1);
    CHECK_FALSE(is_valid_utf8(bad));
  }
  // The last code points before a surrogate and after them are characters.
  CHECK(decode_utf8("\xED\x9F\xBF", 0).code_point == 0xD7FF);
  CHECK(decode_utf8("\xEE\x80\x80", 0).code_point == 0xE000);
}

TEST_CASE("is_valid_utf8 accepts well-formed text and refuses a truncated end") {
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8("plain ascii"));
  CHECK(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  CHECK_FALSE(is_valid_utf8("caf\xC3"));
  CHECK_FALSE(is_valid_utf8("\xE2\x82\xAC\xE2\x82"));
}

TEST_CASE("lossy_utf8 keeps characters and replaces each byte that starts none with U+FFFD") {
  CHECK(lossy_utf8("caf\xC3\xA9") == "caf\xC3\xA9");
  CHECK(lossy_utf8("a\xFF"
                   "b") == "a" + kFffd + "b");
  // A truncated three-byte sequence: both of its bytes are replaced.
  CHECK(lossy_utf8("x\xE2\x82"
                   "y") == "x" + kFffd + kFffd + "y");
  CHECK(lossy_utf8("\xED\xA0\x80") == kFffd + kFffd + kFffd);
  CHECK(is_valid_utf8(lossy_utf8("\xC0\xAF\xF0\x9F\x98")));
}

TEST_CASE("append_utf8 encodes what decode_utf8 decodes") {
  for (std::uint32_t cp : {0x24u, 0xA2u, 0x7FFu, 0x800u, 0x20ACu, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
    std::string text;
    toolmux::append_utf8(text, cp);
    Utf8Char c = decode_utf8(text, 0);
    CHECK(c.valid);
    CHECK(c.code_point == cp);
    CHECK(c.length == text.size());
  }
}

TEST_CASE("utf8_prefix never ends inside a character") {
  const std::string text =
      "a\xE2\x82\xAC"
      "b";  // a € b
  CHECK(toolmux::utf8_prefix(text, 10) == text);
  CHECK(toolmux::utf8_prefix(text, 4) == "a\xE2\x82\xAC");
  CHECK(toolmux::utf8_prefix(text, 3) == "a");
  CHECK(toolmux::utf8_prefix(text, 2) == "a");
  CHECK(toolmux::utf8_prefix(text, 0).empty());
}

TEST_CASE("utf8_without_cut_tail drops a last character a byte cap cut short, and only that") {
  CHECK(toolmux::utf8_without_cut_tail("ab\xE2\x82") == "ab");
  CHECK(toolmux::utf8_without_cut_tail("ab\xF0") == "ab");
  CHECK(toolmux::utf8_without_cut_tail("ab\xE2\x82\xAC") == "ab\xE2\x82\xAC");
  CHECK(toolmux::utf8_without_cut_tail("abc") == "abc");
  CHECK(toolmux::utf8_without_cut_tail("").empty());
}

TEST_CASE("utf8_length and utf8_byte_offset count characters, not bytes") {
  const std::string text = "\xC3\xA9t\xC3\xA9";  // été
  CHECK(toolmux::utf8_length(text) == 3);
  CHECK(toolmux::utf8_byte_offset(text, 1) == 2);
  CHECK(toolmux::utf8_byte_offset(text, 2) == 3);
  CHECK(toolmux::utf8_byte_offset(text, 9) == text.size());
}

TEST_CASE("clip_for_message cuts long text at a character boundary and says how long it was") {
  const std::string long_text = std::string(199, 'a') + "\xC3\xA9" + "tail";
  CHECK(toolmux::clip_for_message(long_text) == std::string(199, 'a') + "\xE2\x80\xA6");
  CHECK(toolmux::clipped_size_note(long_text) == " (205 bytes)");
  CHECK(toolmux::clip_for_message("short") == "short");
  CHECK(toolmux::clipped_size_note("short").empty());
}
