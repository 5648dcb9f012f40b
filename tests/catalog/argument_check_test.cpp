#include "catalog/argument_check.h"
#include "catalog/direct_call.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

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

namespace {

ToolSpec spec_with(json input_schema) {
  ToolSpec spec;
  spec.name = "reader";
  spec.description = "Reads.";
  spec.input_schema = std::move(input_schema);
  spec.side_effect = "read_only";
  spec.timeout = 1000ms;
  return spec;
}

const RegisteredTool& defaults_tool() {
  static ToolRegistry registry = [] {
    ToolRegistry r;
    const Problems problems =
        r.add(spec_with(load_schema("with_defaults.json")),
              [](const json&, CallContext&) { return ToolResult::text("ok"); });
    if (!problems.empty()) throw std::runtime_error(format_problems(problems));
    return r;
  }();
  return *registry.find("reader");
}

}  // namespace

TEST_CASE("the schema's top-level defaults fill the arguments a call left out, and say which") {
  const ArgumentCheck sparse = check_arguments(defaults_tool(), R"({"path":"a.txt"})");
  REQUIRE(sparse.ok());
  CHECK(sparse.arguments == json{{"path", "a.txt"}, {"limit", 20}, {"mode", "safe"}});
  CHECK(sparse.filled == json{{"limit", 20}, {"mode", "safe"}});

  // What the caller sent is kept, a default equal to it or not; nested
  // objects' defaults are not filled.
  const ArgumentCheck full =
      check_arguments(defaults_tool(), R"({"path":"a.txt","limit":20,"mode":"fast","options":{}})");
  REQUIRE(full.ok());
  CHECK(full.arguments ==
        json{{"path", "a.txt"}, {"limit", 20}, {"mode", "fast"}, {"options", json::object()}});
  CHECK(full.filled.is_null());

  // Arguments that fail the schema are not filled in.
  const ArgumentCheck bad = check_arguments(defaults_tool(), R"({"limit":0})");
  CHECK(bad.problems == Strings{"argument /limit: must be at least 1, got 0",
                                "argument /: missing required property \"path\""});
  CHECK(bad.filled.is_null());
}

TEST_CASE("a default its own schema refuses is the tool's problem, named as such") {
  json schema = load_schema("with_defaults.json");
  schema["properties"]["limit"]["default"] = "twenty";
  const ArgumentCheck check = check_arguments(spec_with(schema), R"({"path":"a.txt"})");
  CHECK(check.problems == Strings{"the tool's own default breaks its input schema: argument "
                                  "/limit: expected integer, got string"});
}

TEST_CASE("arguments checked from a spec alone, without a registry") {
  const ToolSpec spec = spec_with(load_schema("tool_input.json"));
  const ArgumentCheck good = check_arguments(spec, R"({"path":"a.txt","count":3})");
  CHECK(good.ok());
  CHECK(good.arguments == json{{"path", "a.txt"}, {"count", 3}});
  CHECK(check_arguments(spec, R"({"path":"a","count":"5"})").problems ==
        Strings{"argument /count: expected integer, got string"});
  CHECK(check_arguments(spec, R"({"path":"a","path":"b"})").problems ==
        Strings{"argument /path: repeated object key \"path\""});
  CHECK(check_arguments(spec, "[1]").problems ==
        Strings{"arguments must be a JSON object, got array"});
  CHECK(check_arguments(spec_with(load_schema("with_defaults.json")), R"({"path":"p"})").filled ==
        json{{"limit", 20}, {"mode", "safe"}});

  CHECK(check_arguments(spec_with(nullptr), "{}").problems ==
        Strings{"the tool declares no input schema (a JSON object) to check them with"});
  const ArgumentCheck broken = check_arguments(
      spec_with(json{{"type", "object"}, {"properties", {{"n", {{"$ref", "other.json"}}}}}}), "{}");
  REQUIRE(broken.problems.size() == 1);
  CHECK_THAT(broken.problems[0],
             Catch::StartsWith("the tool's input schema does not compile: /properties/n/$ref: "));
}

TEST_CASE("checks from a spec stay right while its compiled schema is evicted and compiled again") {
  const ToolSpec spec = spec_with(load_schema("tool_input.json"));
  REQUIRE(check_arguments(spec, R"({"path":"a"})").ok());
  // More schemas than the cache keeps, each with its own bound.
  for (int i = 1; i <= 100; ++i) {
    json schema = {{"type", "object"},
                   {"properties", {{"n", {{"type", "integer"}, {"maximum", i}}}}}};
    const ToolSpec other = spec_with(schema);
    INFO(i);
    CHECK(check_arguments(other, json{{"n", i}}.dump()).ok());
    CHECK(check_arguments(other, json{{"n", i + 1}}.dump()).problems ==
          Strings{"argument /n: must be at most " + std::to_string(i) + ", got " +
                  std::to_string(i + 1)});
  }
  CHECK(check_arguments(spec, R"({"path":"a"})").ok());
  CHECK(check_arguments(spec, R"({})").problems ==
        Strings{"argument /: missing required property \"path\""});
}

TEST_CASE("one compiled schema checks arguments from many threads at once") {
  const ToolSpec spec = spec_with(load_schema("with_defaults.json"));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&wrong, &spec, t] {
      for (int i = 0; i < 300; ++i) {
        const int limit = (i % 7) + 1;
        const std::string good = json{{"path", "f" + std::to_string(t)}, {"limit", limit}}.dump();
        // Registered (ToolSchema) and from the spec (the cache): both share
        // one compiled schema across the threads.
        const ArgumentCheck a = check_arguments(defaults_tool(), good);
        const ArgumentCheck b = check_arguments(spec, good);
        const char* bad = R"({"path":1,"mode":"x"})";
        const ArgumentCheck c =
            i % 2 ? check_arguments(spec, bad) : check_arguments(defaults_tool(), bad);
        if (!a.ok() || a.arguments["limit"] != limit || a.filled != json{{"mode", "safe"}}) ++wrong;
        if (!b.ok() || b.arguments != a.arguments) ++wrong;
        if (c.problems.size() != 2) ++wrong;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(wrong == 0);
}

// call_registered_tool (catalog/direct_call.h): the same check, then the
// handler, in a program's own process.
TEST_CASE("a registered tool called directly: its result and duration, or its failure as chosen") {
  ToolRegistry registry;
  ToolSpec spec = spec_with(load_schema("with_defaults.json"));
  REQUIRE(registry
              .add(spec,
                   [](const json& args, CallContext& context) {
                     if (args["path"] == "boom") throw std::runtime_error("disk on fire");
                     if (args["path"] == "missing") return ToolResult::error("no such file");
                     std::this_thread::sleep_for(std::chrono::milliseconds(20));
                     CHECK_FALSE(context.cancelled());
                     return ToolResult::text(args["path"].get<std::string>() + " x" +
                                             std::to_string(args["limit"].get<int>()));
                   })
              .empty());
  const RegisteredTool& reader = *registry.find("reader");

  const DirectCallResult ok = call_registered_tool(reader, R"({"path":"a.txt"})");
  CHECK_FALSE(ok.result.is_error);
  CHECK(ok.result.content[0]["text"] == "a.txt x20");  // the schema's default filled in
  CHECK(ok.duration >= std::chrono::milliseconds(20));
  CHECK(ok.duration < std::chrono::seconds(5));

  SECTION("result mode: each failure is an isError result") {
    CHECK(call_registered_tool(reader, R"({"path":7})").result.content[0]["text"] ==
          "Invalid arguments for tool \"reader\": argument /path: expected string, got integer");
    CHECK(call_registered_tool(reader, R"({"path":"boom"})").result.content[0]["text"] ==
          "Tool \"reader\" failed: disk on fire");
    const DirectCallResult said = call_registered_tool(reader, R"({"path":"missing"})");
    CHECK(said.result.is_error);
    CHECK(said.result.content[0]["text"] == "no such file");
  }
  SECTION("raise mode: each failure throws, with the result it would have been") {
    auto thrown = [&reader](const char* arguments) -> std::string {
      try {
        call_registered_tool(reader, arguments, FailureMode::raise);
      } catch (const ToolCallFailed& failed) {
        CHECK(failed.result().is_error);
        CHECK(failed.duration() > std::chrono::nanoseconds(0));
        return failed.what();
      }
      return "(nothing thrown)";
    };
    CHECK(thrown(R"({"path":7})") ==
          "Invalid arguments for tool \"reader\": argument /path: expected string, got integer");
    CHECK(thrown(R"({"path":"boom"})") == "Tool \"reader\" failed: disk on fire");
    CHECK(thrown(R"({"path":"missing"})") == "no such file");
    // A success returns as in result mode.
    CHECK(call_registered_tool(reader, R"({"path":"b"})", FailureMode::raise)
              .result.content[0]["text"] == "b x20");
  }
}
