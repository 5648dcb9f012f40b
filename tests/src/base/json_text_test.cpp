#include "src/base/json_text.h"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "src/base/scratch_vector.h"

using nlohmann::json;
using toolmux::append_json_string;

namespace {

std::string as_json_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

// What nlohmann writes for the same text (its bad UTF-8 replaced), read back.
std::string as_nlohmann_reads_it(const std::string& text) {
  return json::parse(json(text).dump(-1, ' ', false, json::error_handler_t::replace))
      .get<std::string>();
}

}  // namespace

TEST_CASE("a JSON string is written with quotes, escapes and replaced bad UTF-8, nothing else") {
  CHECK(as_json_string("") == R"("")");
  CHECK(as_json_string("plain text, 100% ASCII ~") == R"("plain text, 100% ASCII ~")");
  CHECK(as_json_string("say \"hi\" \\ bye") == R"("say \"hi\" \\ bye")");
  CHECK(as_json_string("a\nb\rc\td\be\ff") == R"("a\nb\rc\td\be\ff")");
  CHECK(as_json_string(std::string("\x01\x1f\x7f", 3)) == "\"\\u0001\\u001f\x7f\"");
  CHECK(as_json_string("caf\xc3\xa9 \xe2\x98\x83 \xf0\x9d\x84\x9e") ==
        "\"caf\xc3\xa9 \xe2\x98\x83 \xf0\x9d\x84\x9e\"");
  CHECK(as_json_string("bad \xff byte, cut \xe2\x98") ==
        "\"bad \xef\xbf\xbd byte, cut \xef\xbf\xbd\"");
  CHECK(as_json_string(std::string("nul\0inside", 10)) == R"("nul\u0000inside")");
}

TEST_CASE("a byte that needs escaping is found wherever it sits among eight-byte words") {
  // Plain bytes are taken eight at a time: one special byte at every offset of
  // a 24-byte text, each kind, is escaped exactly as nlohmann escapes it.
  const std::string specials[] = {"\"",      "\\", "\n", "\x01", "\x1f", std::string(1, '\0'),
                                  "\xc3\xa9"};
  for (const std::string& special : specials) {
    for (std::size_t at = 0; at + special.size() <= 24; ++at) {
      std::string text(24, 'a');
      text.replace(at, special.size(), special);
      INFO(at);
      CHECK(as_json_string(text) == json(text).dump());
    }
  }
  // Every byte from 0x20 to 0x7f but '"' and '\\' is plain, in a run of each.
  for (int c = 0x20; c < 0x80; ++c) {
    const std::string text(17, static_cast<char>(c));
    INFO(c);
    CHECK(as_json_string(text) == json(text).dump());
  }
}

TEST_CASE("any bytes written as a JSON string read back as nlohmann reads its own text") {
  std::mt19937 random(20261206);
  // Mostly plain runs, with quotes, controls, multi-byte and broken bytes among them.
  const std::string pieces[] = {
      "abc",  "\"",       "\\",   "\n", "\x02", "\xc3\xa9", "\xe2\x98\x83", "\xf0\x9d\x84\x9e",
      "\xff", "\xe2\x98", "\xc3", " ",  "\x7f"};
  for (int n = 0; n < 2000; ++n) {
    std::string text;
    const int parts = static_cast<int>(random() % 12);
    for (int p = 0; p < parts; ++p) {
      const auto pick = static_cast<std::uint32_t>(random());
      text += pick % 3 == 0 ? std::string(pick % 40, 'x')
                            : pieces[pick % (sizeof pieces / sizeof pieces[0])];
    }
    const std::string written = as_json_string(text);
    const json read = json::parse(written, nullptr, false);
    REQUIRE(read.is_string());
    CHECK(read.get<std::string>() == as_nlohmann_reads_it(text));
  }
}

TEST_CASE("a duration is written to the microsecond, as the shortest form of that double") {
  auto written = [](double ms) {
    std::string out;
    toolmux::append_json_milliseconds(out, ms);
    return out;
  };
  CHECK(written(0) == "0");
  CHECK(written(12.5) == "12.5");
  CHECK(written(0.031) == "0.031");
  CHECK(written(3) == "3");
  CHECK(written(1.0004) == "1");
  CHECK(written(1.0006) == "1.001");
  CHECK(written(-2.25) == "-2.25");
  CHECK(written(1e300) == "1e+300");
  CHECK(written(std::numeric_limits<double>::quiet_NaN()) == "null");
  // Any duration rounded to the microsecond reads back as the same double, in
  // the text append_json_number writes for it (its shortest form): an audit
  // record's two forms agree.
  std::mt19937_64 random(20261206);
  for (int n = 0; n < 5000; ++n) {
    const double ms = toolmux::to_the_microsecond(
        static_cast<double>(random() % 100'000'000'000ULL) / 1e6 * (n % 2 ? 1 : 1000));
    const std::string text = written(ms);
    CHECK(json::parse(text).get<double>() == ms);
    std::string shortest;
    toolmux::append_json_number(shortest, ms);
    CHECK(text == shortest);
  }
}

TEST_CASE("a tree is written as the compact text nlohmann's dump writes, without recursion") {
  const nlohmann::json values[] = {
      nullptr,
      true,
      -7,
      std::numeric_limits<std::uint64_t>::max(),
      1.0,
      0.1,
      -2.5e-300,
      "text with \"quotes\", \\, \n, \t, \x01 and é",
      nlohmann::json::object(),
      nlohmann::json::array(),
      nlohmann::json::parse(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text",)"
                            R"("text":"hi"}],"isError":false,"structuredContent":{"a":[1,[],)"
                            R"({},[{"b":null}]],"z":{"y":{"x":0.5}}}}})"),
  };
  for (const auto& value : values) {
    INFO(value.dump());
    CHECK(toolmux::json_text(value) == value.dump());
  }
  const nlohmann::json controls = "a\bb\fc\x1f";
  CHECK(toolmux::json_text(controls) == R"("a\bb\fc\u001f")");
  CHECK(toolmux::json_text(controls) == controls.dump());
  // Bad UTF-8 replaced, where dump() without a handler would throw.
  CHECK(toolmux::json_text(nlohmann::json{{"k", "a\xff"}}) == "{\"k\":\"a\xEF\xBF\xBD\"}");

  // 100,000 levels: a writer that recursed would overflow the stack here.
  nlohmann::json deep = nlohmann::json::array();
  nlohmann::json* innermost = &deep;
  for (int i = 0; i < 100'000; ++i) {
    innermost->push_back(nlohmann::json::object());
    innermost = &(*innermost)[0]["k"];
    *innermost = nlohmann::json::array();
  }
  const std::string text = toolmux::json_text(deep);
  CHECK(text.size() ==
        1 + 100'000 * std::string(R"({"k":[)").size() + 1 + 100'000 * std::string("]}").size());
  CHECK(text.substr(0, 13) == R"([{"k":[{"k":[)");
  // The writer's working storage outlives the deep value only up to its bound;
  // the next small tree is written right with what is left.
  CHECK(toolmux::json_text(values[10]) == values[10].dump());
}

TEST_CASE("scratch storage is lent empty, given back empty, and kept only up to its bound") {
  std::vector<int> storage{1, 2, 3};
  {
    toolmux::ScratchVector<int, 16> scratch(storage);
    CHECK((*scratch).empty());
    for (int i = 0; i < 10; ++i) (*scratch).push_back(i);
  }
  CHECK(storage.empty());
  CHECK(storage.capacity() >= 10);  // kept for the next borrower: within the bound
  {
    toolmux::ScratchVector<int, 16> scratch(storage);
    CHECK((*scratch).empty());
    for (int i = 0; i < 1000; ++i) (*scratch).push_back(i);
  }
  CHECK(storage.empty());
  CHECK(storage.capacity() == 0);  // past the bound: released
}
