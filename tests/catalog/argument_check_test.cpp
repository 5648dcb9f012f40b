#include "catalog/argument_check.h"

#include <string>

#include <catch2/catch.hpp>

#include "tests/support/fixtures.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;
using namespace std::chrono_literals;
using Strings = std::vector<std::string>;

namespace {

const RegisteredTool& tool() {
  static ToolRegistry registry = [] {
    ToolRegistry r;
    ToolSpec spec;
    spec.name = "copy";
    spec.description = "Copies.";
    spec.input_schema = load_schema("tool_input.json");
    spec.side_effect = "local_mutation";
    spec.timeout = 1000ms;
    const Problems problems =
        r.add(spec, [](const json&, CallContext&) { return ToolResult::text("ok"); });
    if (!problems.empty()) throw std::runtime_error(format_problems(problems));
    return r;
  }();
  return *registry.find("copy");
}

const RegisteredTool& open_tool() {
  static ToolRegistry registry = [] {
    ToolRegistry r;
    ToolSpec spec;
    spec.name = "open";
    spec.description = "Takes anything.";
    spec.input_schema = json{{"type", "object"}};
    spec.side_effect = "read_only";
    spec.timeout = 1000ms;
    r.add(spec, [](const json&, CallContext&) { return ToolResult::text("ok"); });
    return r;
  }();
  return *registry.find("open");
}

}  // namespace

TEST_CASE("valid arguments pass through") {
  const ArgumentCheck check = check_arguments(tool(), R"({"path":"a.txt","count":3})");
  CHECK(check.ok());
  CHECK(check.arguments == json::parse(R"({"path":"a.txt","count":3})"));
}

TEST_CASE("empty, blank or null arguments mean {}") {
  for (const char* text : {"", "  \n", "null"}) {
    INFO(text);
    const ArgumentCheck check = check_arguments(open_tool(), text);
    CHECK(check.ok());
    CHECK(check.arguments == json::object());
  }
  // ... and {} is then checked against the schema like anything else.
  CHECK(check_arguments(tool(), "").problems ==
        Strings{"argument /: missing required property \"path\""});
}

TEST_CASE("arguments must be an object") {
  const ArgumentCheck check = check_arguments(tool(), "[1,2]");
  CHECK(check.problems == Strings{"arguments must be a JSON object, got array"});
  CHECK(check_arguments(tool(), "\"x\"").problems ==
        Strings{"arguments must be a JSON object, got string"});
  CHECK(check.message("copy") ==
        "Invalid arguments for tool \"copy\": arguments must be a JSON object, got array");
}

TEST_CASE("not JSON") {
  CHECK(check_arguments(tool(), R"({"path":)").problems ==
        Strings{"arguments are not JSON: unexpected end of input at byte 8"});
}

TEST_CASE("boundary violations are reported and the schema is not run") {
  SECTION("repeated key") {
    const ArgumentCheck check =
        check_arguments(tool(), R"({"path":"a","path":"/etc/passwd","count":"x"})");
    CHECK(check.problems == Strings{"argument /path: repeated object key \"path\""});
    CHECK(check.message("copy") ==
          "Invalid arguments for tool \"copy\": argument /path: repeated object key \"path\"");
  }
  SECTION("lone high surrogate") {
    CHECK(check_arguments(tool(), R"({"path":"a\uD800"})").problems ==
          Strings{"argument /path: escaped lone surrogate \\uD800"});
  }
  SECTION("lone low surrogate") {
    CHECK(check_arguments(tool(), R"({"path":"\uDFFFa"})").problems ==
          Strings{"argument /path: escaped lone surrogate \\uDFFF"});
  }
  SECTION("invalid UTF-8") {
    CHECK(check_arguments(tool(), "{\"path\":\"a\xC3\x28\"}").problems ==
          Strings{"argument /path: invalid UTF-8 in string"});
  }
  SECTION("depth 257 is rejected, 256 accepted") {
    // The arguments object is level 1, so "nested" adds 255 or 256 levels.
    const ArgumentCheck ok =
        check_arguments(tool(), "{\"path\":\"a\",\"nested\":" + nested_arrays(255) + "}");
    CHECK(ok.ok());
    const ArgumentCheck deep =
        check_arguments(tool(), "{\"path\":\"a\",\"nested\":" + nested_arrays(256) + "}");
    REQUIRE(deep.problems.size() == 1);
    std::string pointer = "/nested";
    for (int i = 0; i < 255; ++i) pointer += "/0";
    CHECK(deep.problems[0] == "argument " + pointer + ": nested deeper than 256 levels");
  }
  SECTION("several at once") {
    CHECK(check_arguments(tool(), R"({"a":1,"a":2,"b":"\uD800"})").problems ==
          Strings{"argument /a: repeated object key \"a\"",
                  "argument /b: escaped lone surrogate \\uD800"});
  }
}

TEST_CASE("schema violations name the argument and the rule") {
  CHECK(check_arguments(tool(), R"({"path":"a","count":"5"})").problems ==
        Strings{"argument /count: expected integer, got string"});
  CHECK(check_arguments(tool(), R"({"count":5})").problems ==
        Strings{"argument /: missing required property \"path\""});
  CHECK(check_arguments(tool(), R"({"path":"a","force":true})").problems ==
        Strings{"argument /: property \"force\" is not allowed"});
  const ArgumentCheck two = check_arguments(tool(), R"({"path":7,"count":1000})");
  CHECK(two.problems == Strings{"argument /count: must be at most 100, got 1000",
                                "argument /path: expected string, got integer"});
  CHECK(two.message("copy") ==
        "Invalid arguments for tool \"copy\": argument /count: must be at most 100, got 1000; "
        "argument /path: expected string, got integer");
}

TEST_CASE("from a value already read at the boundary") {
  const ParsedJson message = parse_untrusted_json(
      R"({"id":1,"params":{"name":"copy","arguments":{"path":"a","path":"b"}}})");
  ParsedJson arguments;
  arguments.value = message.value["params"]["arguments"];
  arguments.violations = violations_under(message.violations, "/params/arguments");
  CHECK(check_arguments(tool(), arguments).problems ==
        Strings{"argument /path: repeated object key \"path\""});
  ParsedJson absent;
  CHECK(check_arguments(open_tool(), absent).arguments == json::object());
}
