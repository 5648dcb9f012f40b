#include "src/base/untrusted_json.h"

#include <cmath>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/fixtures.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

TEST_CASE("well-formed JSON parses to the same value as nlohmann") {
  const std::string text =
      R"({"a":[1,-2,3.5,-0.25e2,1E3,true,false,null],"b":{"c":"d\n\t\"\\\/\u00e9\ud83d\ude00"},"e":""})";
  const ParsedJson parsed = parse_untrusted_json(text);
  REQUIRE(parsed.ok());
  CHECK(parsed.value == json::parse(text));
  CHECK(parsed.value["b"]["c"] == "d\n\t\"\\/\xC3\xA9\xF0\x9F\x98\x80");
}

TEST_CASE("numbers: integers stay integers, the rest are doubles") {
  CHECK(parse_untrusted_json("42").value.is_number_integer());
  CHECK(parse_untrusted_json("-9223372036854775808").value.get<std::int64_t>() == INT64_MIN);
  const json big = parse_untrusted_json("18446744073709551615").value;
  CHECK(big.is_number_unsigned());
  CHECK(big.get<std::uint64_t>() == UINT64_MAX);
  const json bigger = parse_untrusted_json("18446744073709551616").value;
  CHECK(bigger.is_number_float());
  CHECK(bigger.get<double>() == Approx(1.8446744073709552e19));
  CHECK(parse_untrusted_json("-9223372036854775809").value.is_number_float());
  CHECK(parse_untrusted_json("1.0").value.is_number_float());
  CHECK(parse_untrusted_json("1e2").value.get<double>() == 100.0);
  CHECK(parse_untrusted_json("1e-400").value.get<double>() == 0.0);
  CHECK(parse_untrusted_json("  0  ").value == 0);
}

TEST_CASE("a number too small for a double reads as zero and one too large as infinity") {
  // Found by tests/fuzz/untrusted_json_fuzz: the sign of the exponent alone
  // decided, so 0.000...1 without an exponent read as infinity.
  const std::string zeros(400, '0');
  const json tiny = parse_untrusted_json("0." + zeros + "1").value;
  REQUIRE(tiny.is_number_float());
  CHECK(tiny.get<double>() == 0.0);
  CHECK_FALSE(std::signbit(tiny.get<double>()));
  const json negative_tiny = parse_untrusted_json("-0." + zeros + "1e+5").value;
  CHECK(negative_tiny.get<double>() == 0.0);
  CHECK(std::signbit(negative_tiny.get<double>()));
  const json huge = parse_untrusted_json("1" + zeros + "e-5").value;
  CHECK(huge.get<double>() == std::numeric_limits<double>::infinity());
  CHECK(parse_untrusted_json("-0.00001e400").value.get<double>() ==
        -std::numeric_limits<double>::infinity());
  CHECK(parse_untrusted_json("1e99999999999999999999999").value.get<double>() ==
        std::numeric_limits<double>::infinity());
  CHECK(parse_untrusted_json("1e-99999999999999999999999").value.get<double>() == 0.0);
}

TEST_CASE("syntax errors name what and the byte offset") {
  const auto error = [](std::string_view text) {
    const ParsedJson parsed = parse_untrusted_json(text);
    CHECK(parsed.value.is_null());
    return parsed.syntax_error.value_or("<none>");
  };
  CHECK(error("") == "not JSON: unexpected end of input at byte 0");
  CHECK(error("   ") == "not JSON: unexpected end of input at byte 3");
  CHECK(error("{\"a\":1} x") == "not JSON: unexpected character 'x' after the value at byte 8");
  CHECK(error("[1,]") == "not JSON: unexpected character ']' at byte 3");
  CHECK(error("{\"a\" 1}") ==
        "not JSON: expected ':' after an object key, found character '1' at byte 5");
  CHECK(error("{'a':1}") == "not JSON: expected a string key, found character ''' at byte 1");
  CHECK(error("[1 2]") ==
        "not JSON: expected ',' or ']' in an array, found character '2' at byte 3");
  CHECK(error("\"abc") == "not JSON: unterminated string at byte 0");
  CHECK(error("\"a\\qb\"") == "not JSON: invalid escape sequence at byte 2");
  CHECK(error("\"\\u12G4\"") == "not JSON: invalid \\u escape (expected 4 hex digits) at byte 1");
  CHECK(error("\"a\nb\"") == "not JSON: unescaped control character U+000A in a string at byte 2");
  CHECK(error("01") == "not JSON: invalid number (leading zero) at byte 1");
  CHECK(error("-") == "not JSON: invalid number (expected a digit) at byte 1");
  CHECK(error("1.") == "not JSON: invalid number (expected a digit after '.') at byte 2");
  CHECK(error("1e+") == "not JSON: invalid number (expected a digit in the exponent) at byte 3");
  CHECK(error("tru") == "not JSON: invalid literal at byte 0");
  CHECK(error("NaN") == "not JSON: unexpected character 'N' at byte 0");
  CHECK(error("[\xC3\xA9]") ==
        "not JSON: unexpected non-ASCII character outside a string at byte 1");
  CHECK(error("[\xFF]") == "not JSON: unexpected invalid UTF-8 outside a string at byte 1");
  CHECK(error("{\"a\":1}}") == "not JSON: unexpected character '}' after the value at byte 7");
}

TEST_CASE("nesting beyond hard_depth is a syntax error") {
  const ParsedJson parsed = parse_untrusted_json(nested_arrays(5000));
  REQUIRE(parsed.syntax_error);
  CHECK(*parsed.syntax_error == "not JSON: nested deeper than 1024 levels at byte 1024");
  JsonLimits limits;
  limits.max_depth = 2;
  limits.hard_depth = 3;
  CHECK(parse_untrusted_json("[[[]]]", limits).syntax_error == std::nullopt);
  CHECK(parse_untrusted_json("[[[[]]]]", limits).syntax_error ==
        "not JSON: nested deeper than 3 levels at byte 3");
}

// `count` zeros in one array: count + 1 JSON values.
std::string array_of_zeros(std::size_t count) {
  std::string text = "[";
  for (std::size_t i = 0; i < count; ++i) text += i == 0 ? "0" : ",0";
  return text + "]";
}

TEST_CASE("a text of more JSON values than the limit is refused, naming the limit and where") {
  // The default limit is a million values: the array and 999,999 zeros pass.
  const ParsedJson fits = parse_untrusted_json(array_of_zeros(999'999));
  REQUIRE(fits.ok());
  CHECK(fits.value.size() == 999'999);
  // One more: the 1,000,000th zero (at byte 1 + 2 * 999,999) is one value too many.
  const ParsedJson over = parse_untrusted_json(array_of_zeros(1'000'000));
  CHECK(over.value.is_null());
  CHECK(over.syntax_error ==
        "too large: more than 1000000 JSON values (the limit) at byte 1999999");
  CHECK_FALSE(over.ok());

  JsonLimits limits;
  limits.max_values = 3;
  CHECK(parse_untrusted_json(R"({"a":[1]})", limits).ok());
  CHECK(parse_untrusted_json(R"({"a":[1,2]})", limits).syntax_error ==
        "too large: more than 3 JSON values (the limit) at byte 8");
  // Keys are not values; a value being discarded (a repeated key's) still counts.
  CHECK(parse_untrusted_json(R"({"a":1,"b":2})", limits).ok());
  CHECK(parse_untrusted_json(R"({"a":1,"a":2,"b":3})", limits).syntax_error);
}

TEST_CASE("a 16 MiB string is one value: it passes the value limit") {
  const std::string text = "{\"content\":\"" + std::string(std::size_t{16} << 20, 'x') + "\"}";
  const ParsedJson parsed = parse_untrusted_json(text);
  REQUIRE(parsed.ok());
  CHECK(parsed.value["content"].get_ref<const std::string&>().size() == std::size_t{16} << 20);
}

TEST_CASE("repeated object key: first kept, violation names key and pointer") {
  const ParsedJson parsed =
      parse_untrusted_json(R"({"params":{"arguments":{"name":"a","name":"b","x/y~":1,"x/y~":2}}})");
  REQUIRE_FALSE(parsed.syntax_error);
  CHECK(parsed.value["params"]["arguments"]["name"] == "a");
  REQUIRE(parsed.violations.size() == 2);
  CHECK(parsed.violations[0].pointer == "/params/arguments/name");
  CHECK(parsed.violations[0].message == "repeated object key \"name\"");
  CHECK(parsed.violations[1].pointer == "/params/arguments/x~1y~0");
  CHECK_FALSE(parsed.ok());
}

TEST_CASE("invalid UTF-8 in a string becomes U+FFFD and is reported") {
  const ParsedJson parsed = parse_untrusted_json(
      "{\"s\":\"a\xFF"
      "b\xC0\xAF"
      "c\xE0\x80\"}");
  REQUIRE_FALSE(parsed.syntax_error);
  CHECK(parsed.value["s"] ==
        "a\xEF\xBF\xBD"
        "b\xEF\xBF\xBD\xEF\xBF\xBD"
        "c\xEF\xBF\xBD\xEF\xBF\xBD");
  REQUIRE(parsed.violations.size() == 1);
  CHECK(parsed.violations[0].pointer == "/s");
  CHECK(parsed.violations[0].message == "invalid UTF-8 in string");

  SECTION("truncated sequence is one replacement") {
    const ParsedJson p = parse_untrusted_json("[\"\xE2\x82\"]");
    CHECK(p.value[0] == "\xEF\xBF\xBD");
  }
  SECTION("keys too") {
    const ParsedJson p = parse_untrusted_json("{\"k\xFF\":1}");
    REQUIRE(p.violations.size() == 1);
    CHECK(p.violations[0].pointer == "/k\xEF\xBF\xBD");
    CHECK(p.value.contains("k\xEF\xBF\xBD"));
  }
}

TEST_CASE("escaped lone surrogates become U+FFFD and are named") {
  const ParsedJson high = parse_untrusted_json(R"({"a":["x\uD800y"]})");
  REQUIRE(high.violations.size() == 1);
  CHECK(high.violations[0].pointer == "/a/0");
  CHECK(high.violations[0].message == "escaped lone surrogate \\uD800");
  CHECK(high.value["a"][0] == "x\xEF\xBF\xBDy");

  const ParsedJson low = parse_untrusted_json(R"("\udc00")");
  REQUIRE(low.violations.size() == 1);
  CHECK(low.violations[0].pointer == "");
  CHECK(low.violations[0].message == "escaped lone surrogate \\uDC00");

  const ParsedJson high_then_other = parse_untrusted_json(R"("\uD800\u0041")");
  CHECK(high_then_other.value ==
        "\xEF\xBF\xBD"
        "A");
  CHECK(high_then_other.violations.size() == 1);

  const ParsedJson pair = parse_untrusted_json(R"("\uD83D\uDE00")");
  CHECK(pair.ok());
}

TEST_CASE("depth: 256 nested containers are fine, 257 are a violation") {
  CHECK(parse_untrusted_json(nested_arrays(256, "1")).ok());
  const ParsedJson deep = parse_untrusted_json("{\"ok\":1,\"x\":" + nested_arrays(257) + "}");
  REQUIRE_FALSE(deep.syntax_error);
  REQUIRE(deep.violations.size() == 1);
  std::string pointer = "/x";
  for (int i = 0; i < 255; ++i) pointer += "/0";
  CHECK(deep.violations[0].pointer == pointer);
  CHECK(deep.violations[0].message == "nested deeper than 256 levels");
  CHECK(deep.value["ok"] == 1);
  CHECK(json_depth(deep.value) <= 256);

  SECTION("contents of a too-deep value are still checked for syntax") {
    CHECK(parse_untrusted_json(nested_arrays(257, "1,")).syntax_error);
  }
  SECTION("each too-deep subtree is reported") {
    const ParsedJson two =
        parse_untrusted_json("[" + nested_arrays(300) + "," + nested_arrays(300) + "]");
    CHECK(two.violations.size() == 2);
  }
}

TEST_CASE("violations_under cuts the prefix") {
  const ParsedJson parsed = parse_untrusted_json(
      R"({"params":{"arguments":{"a":1,"a":2},"argumentsX":{"b":1,"b":2}},"id":1,"id":2})");
  const auto under = violations_under(parsed.violations, "/params/arguments");
  REQUIRE(under.size() == 1);
  CHECK(under[0].pointer == "/a");
  CHECK(violations_under(parsed.violations, "").size() == 3);
}

TEST_CASE("is_valid_utf8 is strict") {
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8("plain"));
  CHECK(is_valid_utf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF"));
  CHECK_FALSE(is_valid_utf8("\xC0\x80"));          // overlong NUL
  CHECK_FALSE(is_valid_utf8("\xE0\x80\xAF"));      // overlong
  CHECK_FALSE(is_valid_utf8("\xED\xA0\x80"));      // UTF-16 surrogate
  CHECK_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // > U+10FFFF
  CHECK_FALSE(is_valid_utf8("\xE2\x82"));          // truncated
  CHECK_FALSE(is_valid_utf8("\x80"));
}

TEST_CASE("json_depth") {
  CHECK(json_depth(json(1)) == 0);
  CHECK(json_depth(json::array()) == 1);
  CHECK(json_depth(json::object()) == 1);
  CHECK(json_depth(json::parse("[[1]]")) == 2);
  CHECK(json_depth(json::parse(R"({"a":[1,{"b":{}}],"c":2})")) == 4);
}

TEST_CASE("unserializable_json names what cannot be written and where, by JSON pointer") {
  CHECK_FALSE(unserializable_json(json::parse(R"({"a":[1,2.5,"x",{"b":null}],"c":true})")));
  CHECK(*unserializable_json(json(std::nan(""))) == "a number that is not finite at /");
  json deep = json::parse(R"({"a/b":[0,{"t~x":[1,2,3]}],"ok":"fine"})");
  deep["a/b"][1]["t~x"][2] = std::numeric_limits<double>::infinity();
  CHECK(*unserializable_json(deep) == "a number that is not finite at /a~1b/1/t~0x/2");
  json text = json::parse(R"({"content":[{"type":"text","text":"ok"},{"type":"text"}]})");
  text["content"][1]["text"] = std::string("bad \xff");
  CHECK(*unserializable_json(text) == "a string that is not valid UTF-8 at /content/1/text");
  json key = json::parse(R"({"outer":{"inner":{}}})");
  key["outer"]["inner"][std::string("k\xfe")] = 1;
  CHECK(*unserializable_json(key) == "a key that is not valid UTF-8 in /outer/inner");
}
