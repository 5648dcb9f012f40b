#include "catalog/tool_policy.h"

#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/fixtures.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

const json kSearchSchema = json::parse(R"({
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1},
    "path": {"type": "string"},
    "case_sensitive": {"type": "boolean"},
    "max_results": {"type": "integer", "minimum": 1, "maximum": 1000},
    "file_pattern": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["query", "case_sensitive"],
  "additionalProperties": false
})");

// A registry with tools shaped like the built-ins the policy names.
ToolRegistry stand_in_registry() {
  ToolRegistry registry;
  auto add = [&](const std::string& name, json schema) {
    if (schema.contains("properties")) {
      for (auto& [argument, property] : schema["properties"].items()) {
        property["description"] = "The " + argument + " argument.";
      }
    }
    ToolSpec spec;
    spec.name = name;
    spec.description = "A stand-in for " + name + ".";
    spec.input_schema = schema;
    spec.side_effect = "read_only";
    spec.timeout = 1000ms;
    REQUIRE(registry.add(spec, [](const json&, CallContext&) { return ToolResult::text("ok"); })
                .empty());
  };
  add("search_file_contents", kSearchSchema);
  add("read_text_file", {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}});
  add("no_arguments", {{"type", "object"}});
  return registry;
}

ToolPolicy search_policy() {
  ToolPolicy policy;
  policy.arguments["search_file_contents"].defaults = {{"max_results", 50}, {"path", "."}};
  policy.arguments["search_file_contents"].fixed = {{"case_sensitive", false}};
  return policy;
}

}  // namespace

TEST_CASE("tool patterns: '*' matches any run of characters, the rest is literal") {
  CHECK(tool_pattern_matches("*", "anything"));
  CHECK(tool_pattern_matches("*", ""));
  CHECK(tool_pattern_matches("", ""));
  CHECK_FALSE(tool_pattern_matches("", "x"));
  CHECK(tool_pattern_matches("read_text_file", "read_text_file"));
  CHECK_FALSE(tool_pattern_matches("read_text_file", "read_text_files"));
  CHECK_FALSE(tool_pattern_matches("read_text_file", "read_text_fil"));
  CHECK(tool_pattern_matches("write_*", "write_text_file"));
  CHECK(tool_pattern_matches("write_*", "write_"));
  CHECK_FALSE(tool_pattern_matches("write_*", "rewrite_text_file"));
  CHECK(tool_pattern_matches("*_file", "read_text_file"));
  CHECK_FALSE(tool_pattern_matches("*_file", "read_text_files"));
  CHECK(tool_pattern_matches("*text*", "read_text_file"));
  CHECK(tool_pattern_matches("r*_*_f*e", "read_text_file"));
  CHECK(tool_pattern_matches("a*a*a", "aaa"));
  CHECK_FALSE(tool_pattern_matches("a*a*a", "aa"));
  CHECK(tool_pattern_matches("**", "x"));
  CHECK(tool_pattern_matches("a*b", "axxbxxb"));
  CHECK_FALSE(tool_pattern_matches("a*b", "axxbxxc"));
  // Only '*' is special: '?', '[' and '.' are literal.
  CHECK_FALSE(tool_pattern_matches("rea?", "read"));
  CHECK(tool_pattern_matches("rea?", "rea?"));
  CHECK_FALSE(tool_pattern_matches("[r]ead", "read"));
  CHECK_FALSE(tool_pattern_matches("a.c", "abc"));
  // Case matters.
  CHECK_FALSE(tool_pattern_matches("Read_*", "read_text_file"));
}

TEST_CASE("with no access rules every tool is allowed") {
  ToolPolicy policy;
  CHECK_FALSE(policy.denial("alice", "write_text_file"));
  CHECK_FALSE(policy.denial("", "anything"));
}

TEST_CASE("access: a principal's own rule, else the \"*\" rule") {
  ToolPolicy policy;
  policy.access["*"] = {{"*"}, {"write_*", "delete_*"}};
  policy.access["admin"] = {{"*"}, {}};
  policy.access["alice"] = {{"read_*", "list_directory"}, {"read_secret*"}};

  // Anyone else gets "*": allowed unless denied, naming the deny pattern.
  CHECK_FALSE(policy.denial("bob", "read_text_file"));
  CHECK(policy.denial("bob", "write_text_file") ==
        std::optional<std::string>("denied by /policy/access/*/deny/0 (\"write_*\")"));
  CHECK(policy.denial("bob", "delete_tree") ==
        std::optional<std::string>("denied by /policy/access/*/deny/1 (\"delete_*\")"));
  CHECK(policy.denial("local", "write_text_file"));

  // A principal with a rule of its own does not also get "*".
  CHECK_FALSE(policy.denial("admin", "write_text_file"));

  // An allow list: a tool no pattern matches is "not in" it.
  CHECK_FALSE(policy.denial("alice", "read_text_file"));
  CHECK_FALSE(policy.denial("alice", "list_directory"));
  CHECK(policy.denial("alice", "write_text_file") ==
        std::optional<std::string>("not in /policy/access/alice/allow"));
  CHECK(policy.denial("alice", "list_directory2") ==
        std::optional<std::string>("not in /policy/access/alice/allow"));
  // A deny wins over an allow that also matches.
  CHECK(policy.denial("alice", "read_secrets") ==
        std::optional<std::string>("denied by /policy/access/alice/deny/0 (\"read_secret*\")"));
}

TEST_CASE("access: without a \"*\" rule, principals without a rule may call anything") {
  ToolPolicy policy;
  policy.access["alice"] = {{}, {"*"}};
  CHECK(policy.denial("alice", "read_text_file") ==
        std::optional<std::string>("denied by /policy/access/alice/deny/0 (\"*\")"));
  CHECK_FALSE(policy.denial("bob", "read_text_file"));
  // An empty allow list allows everything that is not denied.
  policy.access["carol"] = {{}, {"write_*"}};
  CHECK_FALSE(policy.denial("carol", "read_text_file"));
  CHECK(policy.denial("carol", "write_text_file"));
}

TEST_CASE("access: the principal in the pointer is escaped") {
  ToolPolicy policy;
  policy.access["team/ops~1"] = {{"read_*"}, {"read_secret\"s"}};
  CHECK(policy.denial("team/ops~1", "list_directory") ==
        std::optional<std::string>("not in /policy/access/team~1ops~01/allow"));
  CHECK(policy.denial("team/ops~1", "read_secret\"s") ==
        std::optional<std::string>(
            "denied by /policy/access/team~1ops~01/deny/0 (\"read_secret\\\"s\")"));
}

TEST_CASE("apply_arguments: defaults only where absent, fixed values always") {
  ToolPolicy policy = search_policy();
  json arguments = {{"query", "TODO"}, {"path", "src"}};
  CHECK(policy.apply_arguments("search_file_contents", arguments).empty());
  CHECK(arguments ==
        json{{"query", "TODO"}, {"path", "src"}, {"max_results", 50}, {"case_sensitive", false}});

  // A caller's value wins over a default, even null or a falsy one.
  json given = {{"query", "x"}, {"max_results", 0}, {"path", nullptr}};
  CHECK(policy.apply_arguments("search_file_contents", given).empty());
  CHECK(given["max_results"] == 0);
  CHECK(given["path"].is_null());
  CHECK(given["case_sensitive"] == false);

  // Absent arguments (null) count as {}.
  json absent;
  CHECK(policy.apply_arguments("search_file_contents", absent).empty());
  CHECK(absent == json{{"path", "."}, {"max_results", 50}, {"case_sensitive", false}});

  // Other tools are untouched.
  json other = {{"path", "a"}};
  CHECK(policy.apply_arguments("read_text_file", other).empty());
  CHECK(other == json{{"path", "a"}});
  json other_null;
  CHECK(policy.apply_arguments("read_text_file", other_null).empty());
  CHECK(other_null.is_null());

  // Not an object: left for the schema check.
  json array = json::array();
  CHECK(policy.apply_arguments("search_file_contents", array).empty());
  CHECK(array == json::array());
}

TEST_CASE("apply_arguments refuses a caller-supplied fixed argument") {
  ToolPolicy policy = search_policy();
  policy.arguments["search_file_contents"].fixed["path"] = "/srv";
  json arguments = {{"query", "x"}, {"case_sensitive", false}, {"path", "/srv"}};
  const json before = arguments;
  auto problems = policy.apply_arguments("search_file_contents", arguments);
  REQUIRE(problems.size() == 2);
  // Even the fixed value itself may not be sent.
  CHECK(problems[0] == "argument \"case_sensitive\" is fixed by the operator and cannot be set");
  CHECK(problems[1] == "argument \"path\" is fixed by the operator and cannot be set");
  CHECK(arguments == before);
}

TEST_CASE("advertised_schema hides fixed arguments and keeps everything else") {
  ToolPolicy policy = search_policy();
  json advertised = policy.advertised_schema("search_file_contents", kSearchSchema);
  json expected = kSearchSchema;
  expected["properties"].erase("case_sensitive");
  expected["required"] = {"query"};
  CHECK(advertised == expected);
  // The schema given is not changed.
  CHECK(kSearchSchema["properties"].contains("case_sensitive"));
  // Defaults are not hidden.
  CHECK(advertised["properties"].contains("max_results"));

  // A "required" left empty is removed.
  policy.arguments["search_file_contents"].fixed["query"] = "x";
  json both = policy.advertised_schema("search_file_contents", kSearchSchema);
  CHECK_FALSE(both.contains("required"));
  CHECK_FALSE(both["properties"].contains("query"));
  CHECK(both["additionalProperties"] == false);

  // Tools without fixed arguments, and schemas without properties, as they are.
  CHECK(policy.advertised_schema("read_text_file", kSearchSchema) == kSearchSchema);
  json bare = {{"type", "object"}};
  CHECK(policy.advertised_schema("search_file_contents", bare) == bare);
}

TEST_CASE("a policy that fits the registry has no problems") {
  ToolRegistry registry = stand_in_registry();
  ToolPolicy policy = search_policy();
  policy.access["*"] = {{"*"}, {"write_text_file"}};  // may name a tool not offered
  policy.arguments["read_text_file"].defaults = {{"path", "README.md"}};
  Problems problems = check_tool_policy(policy, registry);
  INFO(format_problems(problems));
  CHECK(problems.empty());
  CHECK(check_tool_policy(ToolPolicy{}, registry).empty());
}

TEST_CASE("check_tool_policy: the tool must exist and declare each argument") {
  ToolRegistry registry = stand_in_registry();
  ToolPolicy policy;
  policy.arguments["search_file_content"].defaults = {{"max_results", 5}};
  policy.arguments["search_file_contents"].defaults = {{"max_result", 5}};
  policy.arguments["search_file_contents"].fixed = {{"zzzzzz", true}, {"a/b", 1}};
  policy.arguments["no_arguments"].fixed = {{"x", 1}};
  Problems problems = check_tool_policy(policy, registry);
  INFO(format_problems(problems));
  CHECK(has_problem(problems, "/policy/arguments/search_file_content",
                    "argument policy for tool \"search_file_content\", which does not exist "
                    "(did you mean \"search_file_contents\"?)"));
  CHECK(has_problem(problems, "/policy/arguments/search_file_contents/defaults/max_result",
                    "tool \"search_file_contents\" declares no argument \"max_result\" (did you "
                    "mean \"max_results\"?)"));
  CHECK(has_problem(problems, "/policy/arguments/search_file_contents/fixed/zzzzzz",
                    "tool \"search_file_contents\" declares no argument \"zzzzzz\""));
  CHECK(has_problem(problems, "/policy/arguments/search_file_contents/fixed/a~1b",
                    "declares no argument \"a/b\""));
  CHECK(has_problem(problems, "/policy/arguments/no_arguments/fixed/x",
                    "tool \"no_arguments\" declares no argument \"x\""));
  CHECK(problems.size() == 5);
}

TEST_CASE("check_tool_policy: defaults and fixed values must fit the argument's schema") {
  ToolRegistry registry = stand_in_registry();
  ToolPolicy policy;
  policy.arguments["search_file_contents"].defaults = {
      {"max_results", "50"}, {"query", ""}, {"file_pattern", {"*.cpp", 3}}};
  policy.arguments["search_file_contents"].fixed = {{"case_sensitive", false}};
  Problems problems = check_tool_policy(policy, registry);
  INFO(format_problems(problems));
  CHECK(has_problem(problems, "/policy/arguments/search_file_contents/defaults/max_results",
                    "the default \"50\" of argument \"max_results\" does not match the input "
                    "schema of tool \"search_file_contents\": /max_results: "));
  CHECK(has_problem(problems, "/policy/arguments/search_file_contents/defaults/query",
                    "the default \"\" of argument \"query\""));
  CHECK(has_problem(problems, "/policy/arguments/search_file_contents/defaults/file_pattern",
                    "/file_pattern/1: "));
  // The other required arguments being absent is not held against a default.
  CHECK(problems.size() == 3);

  policy.arguments["search_file_contents"].defaults = json::object();
  policy.arguments["search_file_contents"].fixed = {{"case_sensitive", "no"}};
  problems = check_tool_policy(policy, registry);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == "/policy/arguments/search_file_contents/fixed/case_sensitive");
  CHECK(problems[0].message.rfind("the fixed value \"no\" of argument \"case_sensitive\"", 0) == 0);
}
