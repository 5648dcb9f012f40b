#include "catalog/text_analysis.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "catalog/default_synonyms.h"

using namespace toolmux;
using text::TextAnalyzer;

namespace {

std::vector<std::string> analyze(const TextAnalyzer& analyzer, std::string_view text,
                                 bool is_name) {
  std::vector<std::string> terms;
  analyzer.analyze(text, is_name, [&](std::string_view t) { terms.emplace_back(t); });
  return terms;
}

// (lower-case word, term) pairs of a query.
std::vector<std::pair<std::string, std::string>> query(const TextAnalyzer& analyzer,
                                                       std::string_view text) {
  std::vector<std::pair<std::string, std::string>> words;
  analyzer.analyze_query(
      text, [&](std::string_view word, std::string_view term) { words.emplace_back(word, term); });
  return words;
}

bool contains(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

const TextAnalyzer kDefault{};

}  // namespace

TEST_CASE("names are split on case, separators and digits, and joined too") {
  CHECK(analyze(kDefault, "getHTTPResponse", true) ==
        std::vector<std::string>{"get", "http", "respons", "gethttprespons"});
  CHECK(analyze(kDefault, "list_issues", true) ==
        std::vector<std::string>{"list", "issu", "listissu"});
  CHECK(analyze(kDefault, "kebab-case.name", true) ==
        std::vector<std::string>{"kebab", "case", "name", "kebabcasenam"});
  CHECK(analyze(kDefault, "v2beta", true) == std::vector<std::string>{"v", "2", "beta", "v2beta"});
  CHECK(analyze(kDefault, "PascalCase", true) ==
        std::vector<std::string>{"pascal", "case", "pascalcas"});
  CHECK(analyze(kDefault, "read", true) == std::vector<std::string>{"read"});
}

TEST_CASE("running text: lower case, stop words dropped, stemmed, non-ASCII letters kept") {
  CHECK(analyze(kDefault, "creating", false) == std::vector<std::string>{"creat"});
  CHECK(analyze(kDefault, "Take a screenshot of the page", false) ==
        std::vector<std::string>{"take", "screenshot", "page"});
  CHECK(analyze(kDefault, "list_issues", false) == std::vector<std::string>{"list", "issu"});
  CHECK(analyze(kDefault, "Café – über", false) == std::vector<std::string>{"café", "über"});
}

TEST_CASE("stop words are kept in names") {
  CHECK(contains(analyze(kDefault, "get_the_file", true), "the"));
  CHECK(analyze(kDefault, "to", true) == std::vector<std::string>{"to"});
  CHECK(analyze(kDefault, "to", false).empty());
}

TEST_CASE("without stemming and name splitting, '_' joins a word and nothing is stemmed") {
  const TextAnalyzer plain{false, false};
  CHECK(analyze(plain, "list_issues", true) == std::vector<std::string>{"list_issues"});
  CHECK(analyze(plain, "Creating issues", false) == std::vector<std::string>{"creating", "issues"});
  CHECK(query(plain, "the list_issues") ==
        std::vector<std::pair<std::string, std::string>>{{"list_issues", "list_issues"}});
}

TEST_CASE("invalid UTF-8 separates words instead of failing") {
  CHECK(analyze(kDefault,
                "alpha\xff"
                "beta\xc3",
                false) == std::vector<std::string>{"alpha", "beta"});
  CHECK(analyze(kDefault, "\xe2\x82", true).empty());
}

TEST_CASE("a query is split like a name, and only a one-part stop word is dropped") {
  CHECK(query(kDefault, "Find the open_issues") ==
        std::vector<std::pair<std::string, std::string>>{
            {"find", "find"}, {"open", "open"}, {"issues", "issu"}, {"openissues", "openissu"}});
  // "to" is a stop word alone, but a part of a name it is kept.
  CHECK(query(kDefault, "to").empty());
  CHECK(query(kDefault, "to_do") == std::vector<std::pair<std::string, std::string>>{
                                        {"to", "to"}, {"do", "do"}, {"todo", "todo"}});
}

TEST_CASE("a word longer than 64 bytes is not stemmed") {
  const std::string id(65, 'a');
  std::string out;
  text::stem_english(id + "ing", out);
  CHECK(out == id + "ing");
  text::stem_english("running", out);
  CHECK(out == "run");
}

TEST_CASE("synonyms are keyed by term, and an own entry replaces the built-in one of that term") {
  REQUIRE(default_synonyms().count("remove") == 1);
  const SynonymMap own{{"Removing", {"erase"}}, {"removes", {"wipe"}}, {"fetch", {"get"}}};
  const auto merged = text::synonyms_by_term(kDefault, own, true);
  // "Removing" and "removes" stem to the built-in "remove": they replace it, together.
  REQUIRE(merged.count("remov") == 1);
  CHECK(merged.at("remov") == std::vector<std::string_view>{"erase", "wipe"});
  REQUIRE(merged.count("fetch") == 1);
  CHECK(std::find(merged.at("fetch").begin(), merged.at("fetch").end(), "get") !=
        merged.at("fetch").end());

  const auto own_only = text::synonyms_by_term(kDefault, own, false);
  CHECK(own_only.size() == 2);
  CHECK(own_only.at("fetch") == std::vector<std::string_view>{"get"});

  const auto unstemmed = text::synonyms_by_term(TextAnalyzer{false, true}, own, false);
  CHECK(unstemmed.count("removing") == 1);
  CHECK(unstemmed.count("removes") == 1);
}
