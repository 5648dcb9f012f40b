#include "catalog/aliases.h"

#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/fixtures.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// A registry with two tools shaped like the built-ins the aliases name.
ToolRegistry stand_in_registry() {
  ToolRegistry registry;
  auto add = [&](const std::string& name, json properties) {
    for (auto& [argument, schema] : properties.items()) {
      schema["description"] = "The " + argument + " argument.";
    }
    ToolSpec spec;
    spec.name = name;
    spec.description = "A stand-in for " + name + ".";
    spec.input_schema = {{"type", "object"}, {"properties", properties}};
    spec.side_effect = "read_only";
    spec.timeout = 1000ms;
    REQUIRE(registry.add(spec, [](const json&, CallContext&) { return ToolResult::text("ok"); })
                .empty());
  };
  add("read_text_file", {{"path", {{"type", "string"}}}});
  add("search_file_contents", {{"query", {{"type", "string"}}},
                               {"path", {{"type", "string"}}},
                               {"case_sensitive", {{"type", "boolean"}}}});
  return registry;
}

AliasTable sample_table() {
  AliasTable table;
  table.tools = {{"cat", "read_text_file"}, {"grep", "search_file_contents"}};
  table.arguments["search_file_contents"] = {{"q", "query"}, {"text", "query"}, {"dir", "path"}};
  return table;
}

}  // namespace

TEST_CASE("canonical_tool resolves an alias and leaves other names alone") {
  AliasTable table = sample_table();
  CHECK(table.canonical_tool("cat") == "read_text_file");
  CHECK(table.canonical_tool("grep") == "search_file_contents");
  CHECK(table.canonical_tool("read_text_file") == "read_text_file");
  CHECK(table.canonical_tool("nope") == "nope");
  CHECK(table.canonical_tool("") == "");
  CHECK(AliasTable{}.canonical_tool("cat") == "cat");
}

TEST_CASE("rename_arguments renames aliases to their canonical names") {
  AliasTable table = sample_table();
  json arguments = {{"q", "TODO"}, {"dir", "src"}, {"case_sensitive", true}};
  CHECK(table.rename_arguments("search_file_contents", arguments).empty());
  CHECK(arguments == json{{"query", "TODO"}, {"path", "src"}, {"case_sensitive", true}});

  // Canonical names pass through; nothing to rename is fine.
  json canonical = {{"query", "x"}};
  CHECK(table.rename_arguments("search_file_contents", canonical).empty());
  CHECK(canonical == json{{"query", "x"}});

  // Other tools' arguments are not touched, even with the same names.
  json other = {{"q", "x"}};
  CHECK(table.rename_arguments("read_text_file", other).empty());
  CHECK(other == json{{"q", "x"}});
  CHECK(table.rename_arguments("no_such_tool", other).empty());
  CHECK(other == json{{"q", "x"}});

  // Something other than an object is left for the schema check.
  json array = json::array({"q"});
  CHECK(table.rename_arguments("search_file_contents", array).empty());
  CHECK(array == json::array({"q"}));
  json null;
  CHECK(table.rename_arguments("search_file_contents", null).empty());
  CHECK(null.is_null());
}

TEST_CASE("rename_arguments refuses an alias given with its canonical argument") {
  AliasTable table = sample_table();
  json arguments = {{"q", "a"}, {"query", "b"}, {"dir", "src"}};
  const json before = arguments;
  auto problems = table.rename_arguments("search_file_contents", arguments);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "argument \"q\" is an alias of \"query\", which is also given");
  // Nothing is renamed when there is a problem, not even "dir".
  CHECK(arguments == before);
}

TEST_CASE("rename_arguments refuses two aliases of one argument") {
  AliasTable table = sample_table();
  json arguments = {{"q", "a"}, {"text", "b"}};
  auto problems = table.rename_arguments("search_file_contents", arguments);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "arguments \"q\" and \"text\" are both aliases of \"query\": give one");
  CHECK(arguments == json{{"q", "a"}, {"text", "b"}});
}

TEST_CASE("a table that fits the registry has no problems") {
  ToolRegistry registry = stand_in_registry();
  AliasTable table = sample_table();
  Problems problems = check_aliases(table, registry);
  INFO(format_problems(problems));
  CHECK(problems.empty());
  CHECK(check_aliases(AliasTable{}, registry).empty());
}

TEST_CASE("a tool alias that is a tool's name collides with it") {
  ToolRegistry registry = stand_in_registry();
  AliasTable table;
  table.tools = {{"read_text_file", "search_file_contents"}};
  Problems problems = check_aliases(table, registry);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == "/aliases/tools/read_text_file");
  CHECK(problems[0].message == "alias \"read_text_file\" collides with tool \"read_text_file\"");
}

TEST_CASE("a tool alias must point at a tool that exists") {
  ToolRegistry registry = stand_in_registry();
  AliasTable table;
  table.tools = {{"cat", "read_txt_file"}, {"zz", "nothing_like_it"}, {"a", "cat"}};
  Problems problems = check_aliases(table, registry);
  INFO(format_problems(problems));
  REQUIRE(problems.size() == 3);
  CHECK(has_problem(problems, "/aliases/tools/cat",
                    "alias \"cat\" points at tool \"read_txt_file\", which does not exist (did "
                    "you mean \"read_text_file\"?)"));
  CHECK(has_problem(problems, "/aliases/tools/zz",
                    "alias \"zz\" points at tool \"nothing_like_it\", which does not exist"));
  CHECK_FALSE(has_problem(problems, "/aliases/tools/zz", "did you mean"));
  CHECK(has_problem(problems, "/aliases/tools/a",
                    "alias \"a\" points at \"cat\", which is an alias, not a tool (aliases do "
                    "not chain)"));
}

TEST_CASE("a tool alias must be a valid tool name") {
  ToolRegistry registry = stand_in_registry();
  AliasTable table;
  table.tools = {{"my cat", "read_text_file"},
                 {"", "read_text_file"},
                 {std::string(129, 'a'), "read_text_file"},
                 {"a/b", "read_text_file"},
                 {std::string(128, 'a'), "read_text_file"}};
  Problems problems = check_aliases(table, registry);
  INFO(format_problems(problems));
  REQUIRE(problems.size() == 4);
  CHECK(has_problem(problems, "/aliases/tools/my cat",
                    "alias \"my cat\" is not a valid tool name (1-128 bytes of ASCII letters, "
                    "digits, '_', '-', '.')"));
  CHECK(has_problem(problems, "/aliases/tools/", "alias \"\" is not a valid tool name"));
  CHECK(has_problem(problems, "/aliases/tools/" + std::string(129, 'a'), "not a valid tool name"));
  // Pointer tokens are escaped.
  CHECK(has_problem(problems, "/aliases/tools/a~1b", "alias \"a/b\" is not a valid tool name"));
}

TEST_CASE("argument aliases must be for a tool that exists, by its own name") {
  ToolRegistry registry = stand_in_registry();
  AliasTable table = sample_table();
  table.arguments["search_file_content"] = {{"q", "query"}};
  table.arguments["grep"] = {{"q", "query"}};
  Problems problems = check_aliases(table, registry);
  INFO(format_problems(problems));
  REQUIRE(problems.size() == 2);
  CHECK(has_problem(problems, "/aliases/arguments/search_file_content",
                    "argument aliases for tool \"search_file_content\", which does not exist "
                    "(did you mean \"search_file_contents\"?)"));
  CHECK(has_problem(problems, "/aliases/arguments/grep",
                    "argument aliases for \"grep\", which is an alias of "
                    "\"search_file_contents\": list them under the tool's own name"));
}

TEST_CASE("an argument alias must point at a declared argument") {
  ToolRegistry registry = stand_in_registry();
  AliasTable table;
  table.arguments["search_file_contents"] = {{"q", "qeury"}, {"n", "max_results"}};
  Problems problems = check_aliases(table, registry);
  INFO(format_problems(problems));
  REQUIRE(problems.size() == 2);
  CHECK(has_problem(problems, "/aliases/arguments/search_file_contents/q",
                    "argument alias \"q\" points at argument \"qeury\", which tool "
                    "\"search_file_contents\" does not declare (did you mean \"query\"?)"));
  CHECK(has_problem(problems, "/aliases/arguments/search_file_contents/n",
                    "argument alias \"n\" points at argument \"max_results\", which tool "
                    "\"search_file_contents\" does not declare"));
}

TEST_CASE("an argument alias equal to a declared argument collides with it") {
  ToolRegistry registry = stand_in_registry();
  AliasTable table;
  table.arguments["search_file_contents"] = {{"path", "query"}, {"query", "query"}};
  Problems problems = check_aliases(table, registry);
  INFO(format_problems(problems));
  REQUIRE(problems.size() == 2);
  CHECK(has_problem(problems, "/aliases/arguments/search_file_contents/path",
                    "argument alias \"path\" collides with argument \"path\" of tool "
                    "\"search_file_contents\""));
  CHECK(has_problem(problems, "/aliases/arguments/search_file_contents/query",
                    "argument alias \"query\" collides with argument \"query\""));
}

TEST_CASE("check_aliases lists every problem at once") {
  ToolRegistry registry = stand_in_registry();
  AliasTable table;
  table.tools = {{"read_text_file", "nope"}, {"ok", "read_text_file"}};
  table.arguments["read_text_file"] = {{"p", "path"}, {"path", "file"}};
  Problems problems = check_aliases(table, registry);
  INFO(format_problems(problems));
  // The colliding alias also points nowhere: two problems at one pointer.
  CHECK(has_problem(problems, "/aliases/tools/read_text_file", "collides with tool"));
  CHECK(has_problem(problems, "/aliases/tools/read_text_file", "which does not exist"));
  CHECK(has_problem(problems, "/aliases/arguments/read_text_file/path", "collides with argument"));
  CHECK(has_problem(problems, "/aliases/arguments/read_text_file/path",
                    "points at argument \"file\""));
  CHECK(problems.size() == 4);
}
