// ASCII helpers for protocol tokens (src/base/ascii.h).
#include "src/base/ascii.h"

#include <catch2/catch.hpp>

using namespace toolmux;

TEST_CASE("ascii_lower lowers A-Z only, whatever the locale") {
  CHECK(ascii_lower("Bearer MCP-Param-Region") == "bearer mcp-param-region");
  CHECK(ascii_lower("ÉTÉ") == "\xc3\x89t\xc3\x89");  // UTF-8 bytes untouched
  CHECK(ascii_lower("") == "");
}

TEST_CASE("HTTP token characters are RFC 9110's tchar") {
  for (char c : std::string("Region-1_x.~!#$%&'*+^`|")) CHECK(is_http_token_char(c));
  for (char c : std::string(" :;,\"()/[]{}=?@\t\r\n\x7f\x80\xc3"))
    CHECK_FALSE(is_http_token_char(c));
}

TEST_CASE("ascii_iequals ignores the case of ASCII letters only") {
  CHECK(ascii_iequals("MCP-Protocol-Version", "mcp-protocol-version"));
  CHECK(ascii_iequals("", ""));
  CHECK_FALSE(ascii_iequals("Host", "Hosts"));
  CHECK_FALSE(ascii_iequals("Host", "Hast"));
  // '@' and '`' sit next to 'A' and 'a' in ASCII: no letters, no match.
  CHECK_FALSE(ascii_iequals("@", "`"));
  CHECK_FALSE(ascii_iequals("[", "{"));
  CHECK_FALSE(ascii_iequals("\xc3\x89", "\xc3\xa9"));  // É and é: not ASCII
}
