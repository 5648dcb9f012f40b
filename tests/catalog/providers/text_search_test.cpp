#include "catalog/providers/text_search.h"

#include <catch2/catch.hpp>
#include <string>

#include "tests/support/test_context.h"

using toolmux::LineMatcher;
using toolmux::LineSearch;
using toolmux::testing::TestContext;

namespace {

LineMatcher make(const std::string& query, bool regex, bool case_sensitive = true) {
  toolmux::Result<LineMatcher> matcher = LineMatcher::create(query, regex, case_sensitive);
  INFO(matcher.message());
  REQUIRE(matcher.ok());
  return *matcher;
}

LineMatcher::Match match(const LineMatcher& matcher, std::string_view line) {
  bool window_cut = false;
  return matcher.matches(line, window_cut);
}

}  // namespace

TEST_CASE("a literal query is a substring, ASCII case folded on request", "[text_search]") {
  const LineMatcher exact = make("a.b", false);
  CHECK(match(exact, "x a.b y") == LineMatcher::Match::hit);
  CHECK(match(exact, "aXb") == LineMatcher::Match::miss);  // not a pattern
  const LineMatcher folded = make("HeLLo", false, false);
  CHECK(match(folded, "say hello") == LineMatcher::Match::hit);
  CHECK(match(folded, "SAY HELLO") == LineMatcher::Match::hit);
  CHECK(match(make("HeLLo", false), "say hello") == LineMatcher::Match::miss);
}

TEST_CASE("a regex query is PCRE2, and an invalid one is refused naming it", "[text_search]") {
  const LineMatcher regex = make("^int\\b", true, false);
  CHECK(match(regex, "INT z = 1;") == LineMatcher::Match::hit);
  CHECK(match(regex, "print x") == LineMatcher::Match::miss);
  const toolmux::Result<LineMatcher> bad = LineMatcher::create("(unclosed", true, true);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().is_invalid_argument());
  CHECK(bad.message() == "invalid regex \"(unclosed\": missing closing parenthesis at offset 9");
}

TEST_CASE("a regex sees a 16 KiB window of a long line, cut at a character", "[text_search]") {
  const LineMatcher regex = make("z$", true);
  std::string line;
  for (std::size_t i = 0; i < LineMatcher::kRegexWindowBytes / 2 + 1; ++i) line += "\xC3\xA9";
  bool window_cut = false;
  CHECK(regex.matches(line + "z", window_cut) == LineMatcher::Match::miss);
  CHECK(window_cut);
  window_cut = false;
  CHECK(make("z$", false).matches(line + "z", window_cut) == LineMatcher::Match::miss);
  CHECK_FALSE(window_cut);  // a literal query sees the whole line
  CHECK(make("\xC3\xA9z", false).matches(line + "z", window_cut) == LineMatcher::Match::hit);
}

TEST_CASE("a line past the regex's matching limit is unchecked", "[text_search]") {
  const LineMatcher regex = make("^(a+)+$", true);
  CHECK(match(regex, std::string(3000, 'a').append("b")) == LineMatcher::Match::unchecked);
  CHECK(match(regex, "aaa") == LineMatcher::Match::hit);
}

TEST_CASE("search_lines numbers lines, drops carriage returns and cuts long lines",
          "[text_search]") {
  TestContext context;
  LineSearch search;
  const std::string text = "one\r\nhello there\r\n\nhello " + std::string(400, 'x') + "\nhello";
  CHECK(search_lines(text, "f.txt", make("hello", false), context, search));
  REQUIRE(search.hits.size() == 3);
  CHECK(search.hits[0].path == "f.txt");
  CHECK(search.hits[0].line == 2);
  CHECK(search.hits[0].text == "hello there");
  CHECK(search.hits[1].line == 4);
  CHECK(search.hits[1].text == "hello " + std::string(294, 'x') + "\xE2\x80\xA6");
  CHECK(search.hits[2].line == 5);
  CHECK(search.hits[2].text == "hello");
  CHECK_FALSE(search.capped);
}

TEST_CASE("search_lines stops at max_results and when cancelled", "[text_search]") {
  TestContext context;
  LineSearch search;
  search.max_results = 2;
  CHECK_FALSE(search_lines("x\nx\nx\nx\n", "a", make("x", false), context, search));
  CHECK(search.hits.size() == 2);
  CHECK(search.capped);

  // Hits accumulate across texts, up to the same cap.
  LineSearch across;
  across.max_results = 3;
  CHECK(search_lines("x\nx\n", "a", make("x", false), context, across));
  CHECK_FALSE(search_lines("x\nx\n", "b", make("x", false), context, across));
  CHECK(across.hits.size() == 3);
  CHECK(across.hits[2].path == "b");

  context.cancel = true;
  LineSearch cancelled;
  std::string many;
  for (int i = 0; i < 100; ++i) many += "line\n";
  CHECK_FALSE(search_lines(many, "a", make("x", true), context, cancelled));
  CHECK(cancelled.cancelled);
}
