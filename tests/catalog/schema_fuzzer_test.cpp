#include "catalog/schema_fuzzer.h"

#include <string>

#include <catch2/catch.hpp>

#include "catalog/json_schema.h"
#include "tests/support/fixtures.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

std::shared_ptr<const CompiledSchema> compiled(const json& schema) {
  Problems problems;
  auto out = CompiledSchema::compile(schema, problems);
  INFO(format_problems(problems));
  REQUIRE(out);
  return out;
}

// Whether one of `messages` names `pointer`: "<pointer>: ...", or for a
// property reported at its object, "<parent>: ..." quoting its name.
bool names(const std::vector<std::string>& messages, const std::string& pointer) {
  const std::string self = (pointer.empty() ? "/" : pointer) + ":";
  const std::size_t slash = pointer.rfind('/');
  const std::string parent = slash == std::string::npos ? "" : pointer.substr(0, slash);
  const std::string name = slash == std::string::npos ? "" : pointer.substr(slash + 1);
  for (const std::string& m : messages) {
    if (m.rfind(self, 0) == 0) return true;
    if (!name.empty() && m.rfind((parent.empty() ? "/" : parent) + ":", 0) == 0 &&
        m.find(json(name).dump()) != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::size_t depth_of(const json& value) {
  std::size_t deepest = 0;
  if (value.is_structured()) {
    for (const json& child : value) deepest = std::max(deepest, depth_of(child));
    return deepest + 1;
  }
  return 0;
}

std::size_t nodes_of(const json& value) {
  std::size_t count = 1;
  if (value.is_structured()) {
    for (const json& child : value) count += nodes_of(child);
  }
  return count;
}

bool has_miss(const FuzzCases& cases, const std::string& pointer, const std::string& rule) {
  return std::any_of(cases.near_misses.begin(), cases.near_misses.end(), [&](const auto& m) {
    return m.pointer == pointer && m.rule.find(rule) != std::string::npos;
  });
}

}  // namespace

TEST_CASE("fuzzer: valid cases pass the schema and every near miss is refused naming its pointer",
          "[schema_fuzzer]") {
  for (const char* file : {"fuzz_keywords.json", "tool_input.json", "recursive_definitions.json"}) {
    const json schema = load_schema(file);
    const auto validator = compiled(schema);
    for (std::uint64_t seed : {1, 2, 3, 99}) {
      const FuzzCases cases = generate_fuzz_cases(schema, seed, 25);
      INFO(file << " seed " << seed);
      REQUIRE(cases.valid.size() == 25);
      CHECK(cases.impossible.empty());
      for (const FuzzValidCase& valid : cases.valid) {
        INFO(valid.arguments.dump());
        CHECK(valid.exact);
        CHECK(validator->validate(valid.arguments).empty());
      }
      REQUIRE(!cases.near_misses.empty());
      for (const FuzzNearMiss& miss : cases.near_misses) {
        INFO(miss.pointer << " (" << miss.rule << "): " << miss.arguments.dump());
        const auto messages = validator->validate(miss.arguments);
        REQUIRE(!messages.empty());
        INFO(messages.front());
        CHECK(names(messages, miss.pointer));
      }
    }
  }
}

TEST_CASE("fuzzer: near misses cover each rule the schema states, and only those",
          "[schema_fuzzer]") {
  const FuzzCases cases = generate_fuzz_cases(load_schema("fuzz_keywords.json"), 1, 20);
  CHECK(has_miss(cases, "/name", "missing required property"));
  CHECK(has_miss(cases, "/name", "under minLength 2"));
  CHECK(has_miss(cases, "/name", "over maxLength 8"));
  CHECK(has_miss(cases, "/name", "wrong type (expected string)"));
  CHECK(has_miss(cases, "/branch", "not matching the pattern"));
  CHECK(has_miss(cases, "/day", "not a valid date"));
  CHECK(has_miss(cases, "/count", "below minimum 1"));
  CHECK(has_miss(cases, "/count", "above maximum 50"));  // allOf narrows maximum 100
  CHECK(has_miss(cases, "/ratio", "not above exclusiveMinimum 0"));
  CHECK(has_miss(cases, "/step", "not a multiple of 5"));
  CHECK(has_miss(cases, "/mode", "not in enum"));
  CHECK(has_miss(cases, "/version", "not the const value"));
  CHECK(has_miss(cases, "/tags", "more than maxItems 3"));
  CHECK(has_miss(cases, "/tags", "a repeated item"));
  CHECK(has_miss(cases, "/tags/0", "over maxLength 4"));
  CHECK(has_miss(cases, "/target/host", "missing required property"));
  CHECK(has_miss(cases, "/target/port", "above maximum 65535"));
  CHECK(has_miss(cases, "/fuzz_extra_property", "extra property"));
  CHECK(has_miss(cases, "/target/fuzz_extra_property", "extra property"));
  // What only a branch says is no rule of the schema: "either" may be any
  // boolean or an integer of at least 10, so nothing below 10 is a near miss.
  CHECK_FALSE(has_miss(cases, "/either", ""));
  // Without a maximum there is nothing above it to miss.
  CHECK_FALSE(has_miss(cases, "/target/host", "maxLength"));
  // The arguments object itself: null and {} are one to the server.
  CHECK_FALSE(has_miss(cases, "", "wrong type"));
}

TEST_CASE("fuzzer: the first case uses the schema's examples and every optional property",
          "[schema_fuzzer]") {
  const FuzzCases cases = generate_fuzz_cases(load_schema("fuzz_keywords.json"), 5, 3);
  REQUIRE(!cases.valid.empty());
  const json& first = cases.valid.front().arguments;
  CHECK(first.contains("branch"));
  CHECK((first["branch"] == "main-1" || first["branch"] == "fix-42"));
  CHECK(first.contains("ratio"));
  CHECK(first.contains("flag"));
}

TEST_CASE("fuzzer: a pattern without examples is not guessed, and says so", "[schema_fuzzer]") {
  const json schema = {{"type", "object"},
                       {"properties", {{"ref", {{"type", "string"}, {"pattern", "^v[0-9]+$"}}}}},
                       {"required", {"ref"}}};
  const FuzzCases cases = generate_fuzz_cases(schema, 1, 10);
  CHECK(cases.valid.empty());
  CHECK(cases.impossible.empty());
  REQUIRE(cases.skipped.size() == 1);
  CHECK(cases.skipped[0].rfind("/ref: no examples, default or enum", 0) == 0);
  CHECK(cases.skipped[0].find("^v[0-9]+$") != std::string::npos);
}

TEST_CASE("fuzzer: a schema that allows nothing is named, with where and why", "[schema_fuzzer]") {
  const FuzzCases cases = generate_fuzz_cases(load_schema("fuzz_impossible.json"), 1, 10);
  CHECK(cases.valid.empty());
  REQUIRE(cases.impossible.size() == 1);
  CHECK(cases.impossible[0] ==
        "/: required property \"path\" is not in \"properties\" and \"additionalProperties\" is "
        "false");

  const json bounds = {
      {"type", "object"},
      {"properties", {{"n", {{"type", "integer"}, {"minimum", 5}, {"maximum", 4}}}}},
      {"required", {"n"}}};
  const FuzzCases none = generate_fuzz_cases(bounds, 1, 10);
  REQUIRE(none.impossible.size() == 1);
  CHECK(none.impossible[0].rfind("/n: no integer meets its bounds", 0) == 0);
}

TEST_CASE("fuzzer: bounded on recursive and huge schemas", "[schema_fuzzer]") {
  FuzzLimits limits;
  SECTION("a schema that requires itself gives no case, and says why") {
    const FuzzCases cases = generate_fuzz_cases(load_schema("fuzz_self_required.json"), 1, 5);
    CHECK(cases.valid.empty());
    REQUIRE(!cases.skipped.empty());
    CHECK(cases.skipped[0].find("nested deeper than 12 levels") != std::string::npos);
  }
  SECTION("optional recursion stops at the depth limit") {
    const FuzzCases cases = generate_fuzz_cases(load_schema("recursive_definitions.json"), 3, 50);
    for (const FuzzValidCase& valid : cases.valid) {
      CHECK(depth_of(valid.arguments) <= 2 * limits.max_depth + 2);
    }
  }
  SECTION("huge counts and lengths are not built") {
    json schema = {{"type", "object"},
                   {"properties",
                    {{"many", {{"type", "array"}, {"minItems", 1000000000}}},
                     {"long", {{"type", "string"}, {"minLength", 1000000000}}},
                     {"wide", {{"type", "array"}, {"maxItems", 1000000000}}}}},
                   {"required", {"long"}}};
    const FuzzCases cases = generate_fuzz_cases(schema, 1, 5);
    CHECK(cases.valid.empty());
    REQUIRE(!cases.skipped.empty());
    CHECK(cases.skipped[0].find("/long: minLength 1000000000 is above the 10000") == 0);
  }
  SECTION("nested arrays of objects stay within the value budget") {
    // Each level asks for 900 items: 900^3 values if built.
    json leaf = {{"type", "array"}, {"minItems", 900}, {"items", {{"type", "integer"}}}};
    json mid = {{"type", "array"}, {"minItems", 900}, {"items", leaf}};
    json schema = {
        {"type", "object"},
        {"properties", {{"grid", {{"type", "array"}, {"minItems", 900}, {"items", mid}}}}},
        {"required", {"grid"}}};
    const FuzzCases cases = generate_fuzz_cases(schema, 1, 3);
    CHECK(cases.valid.empty());
    REQUIRE(!cases.skipped.empty());
    CHECK(cases.skipped[0].find("more than 2000 values") != std::string::npos);
  }
  SECTION("many properties: every case within max_nodes, near misses within their cap") {
    json properties = json::object();
    json required = json::array();
    for (int i = 0; i < 500; ++i) {
      properties["p" + std::to_string(i)] = {{"type", "integer"}, {"minimum", 0}, {"maximum", 9}};
      required.push_back("p" + std::to_string(i));
    }
    const json schema = {{"type", "object"}, {"properties", properties}, {"required", required}};
    const FuzzCases cases = generate_fuzz_cases(schema, 1, 4);
    REQUIRE(cases.valid.size() == 4);
    for (const FuzzValidCase& valid : cases.valid) {
      CHECK(nodes_of(valid.arguments) <= limits.max_nodes + 1);
    }
    CHECK(cases.near_misses.size() == limits.max_near_misses);
  }
}

TEST_CASE("fuzzer: the same seed gives the same cases, another seed others", "[schema_fuzzer]") {
  const json schema = load_schema("fuzz_keywords.json");
  const auto dump = [](const FuzzCases& cases) {
    json all = json::array();
    for (const auto& v : cases.valid) all.push_back(v.arguments);
    for (const auto& m : cases.near_misses) all.push_back({m.pointer, m.rule, m.arguments});
    return all.dump();
  };
  CHECK(dump(generate_fuzz_cases(schema, 7, 20)) == dump(generate_fuzz_cases(schema, 7, 20)));
  CHECK(dump(generate_fuzz_cases(schema, 7, 20)) != dump(generate_fuzz_cases(schema, 8, 20)));
}
