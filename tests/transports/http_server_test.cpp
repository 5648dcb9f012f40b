#include "transports/http_server.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using toolmux::parse_tokens;
using Tokens = std::map<std::string, std::string>;

namespace {

// parse_tokens on `text`; `error` gets its error.
bool parse(const std::string& text, Tokens& tokens, std::string& error) {
  tokens.clear();
  error.clear();
  return parse_tokens(text, tokens, error);
}

}  // namespace

TEST_CASE("parse_tokens reads principal=token entries by line or comma, with comments") {
  Tokens tokens;
  std::string error;
  REQUIRE(
      parse("# who may call\n"
            "alice=aaaaaaaaaaaaaaaa\n"
            "\n"
            "  bob = bbbbbbbbbbbbbbbb  # trailing comment\r\n"
            "carol=cccccccccccccccc,dave=dddddddddddddddd,",
            tokens, error));
  CHECK(error.empty());
  CHECK(tokens == Tokens{{"aaaaaaaaaaaaaaaa", "alice"},
                         {"bbbbbbbbbbbbbbbb", "bob"},
                         {"cccccccccccccccc", "carol"},
                         {"dddddddddddddddd", "dave"}});
}

TEST_CASE("a comment runs to the end of its line, commas in it included") {
  Tokens tokens;
  std::string error;
  REQUIRE(
      parse("# alice, bob and carol\nalice=aaaaaaaaaaaaaaaa # alice, for now\n"
            "bob=bbbbbbbbbbbbbbbb",
            tokens, error));
  CHECK(tokens == Tokens{{"aaaaaaaaaaaaaaaa", "alice"}, {"bbbbbbbbbbbbbbbb", "bob"}});
}

TEST_CASE("parse_tokens accepts an empty text, and two tokens for one principal") {
  Tokens tokens;
  std::string error;
  CHECK(parse("", tokens, error));
  CHECK(tokens.empty());
  CHECK(parse("  \n# nothing\n,", tokens, error));
  CHECK(tokens.empty());
  REQUIRE(parse("ci=1111111111111111\nci=2222222222222222", tokens, error));
  CHECK(tokens.size() == 2);
}

TEST_CASE("a token may contain '=' after the first one") {
  Tokens tokens;
  std::string error;
  REQUIRE(parse("alice=abc=def=ghi=jklmnop", tokens, error));
  CHECK(tokens.at("abc=def=ghi=jklmnop") == "alice");
}

TEST_CASE("parse_tokens refuses malformed entries, naming the entry") {
  Tokens tokens;
  std::string error;
  CHECK_FALSE(parse("alice=aaaaaaaaaaaaaaaa\njust-a-token-no-principal", tokens, error));
  CHECK(error == "token entry 2 is not principal=token");
  CHECK_FALSE(parse("=aaaaaaaaaaaaaaaa", tokens, error));
  CHECK(error == "token entry 1 is not principal=token");
  CHECK_FALSE(parse("alice=", tokens, error));
  CHECK(error == "token entry 1 is not principal=token");
}

TEST_CASE("parse_tokens refuses tokens shorter than 16 characters") {
  Tokens tokens;
  std::string error;
  CHECK_FALSE(parse("alice=123456789012345", tokens, error));
  CHECK(error == "the token of \"alice\" is shorter than 16 characters");
  CHECK(parse("alice=1234567890123456", tokens, error));
}

TEST_CASE("parse_tokens refuses a token that two principals share") {
  Tokens tokens;
  std::string error;
  CHECK_FALSE(parse("alice=ssssssssssssssss\nbob=ssssssssssssssss", tokens, error));
  CHECK(error == "the token of \"bob\" is also another principal's");
}
