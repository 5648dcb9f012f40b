#include "catalog/catalog_file.h"
#include "catalog/providers/catalog_tools.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "src/base/redact.h"
#include "tests/support/fifo.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_context.h"

using namespace toolmux;
using namespace toolmux::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const fs::path kCatalogs = fs::path(TOOLMUX_TEST_DATA) / "catalogs";
const fs::path kExample = fs::path(TOOLMUX_TEST_DATA) / ".." / ".." / "examples" / "catalog.json";

// A tool object with every required field, to be modified by a test.
json good_tool(const std::string& name) {
  return {{"name", name},
          {"description", "A test tool."},
          {"inputSchema",
           {{"type", "object"},
            {"properties", {{"path", {{"type", "string"}, {"description", "The file."}}}}}}},
          {"sideEffect", "read_only"},
          {"timeoutMs", 1000},
          {"command", {{"argv", {"cat", "--", "{path}"}}}}};
}

CatalogLoad load_json(const TempDir& dir, const json& document) {
  return load_catalog_file(dir.write("catalog.json", document.dump(2)));
}

// Stand-ins for two built-in tools (the filesystem provider is another
// library): the names and arguments the catalog's aliases and policy refer to.
void add_stand_in_builtins(ToolRegistry& registry) {
  auto add = [&](const std::string& name, json properties) {
    for (auto& [argument, schema] : properties.items()) {
      schema["description"] = "The " + argument + " argument.";
    }
    ToolSpec spec;
    spec.name = name;
    spec.description = "A stand-in for the built-in " + name + ".";
    spec.input_schema = {{"type", "object"}, {"properties", properties}};
    spec.side_effect = "read_only";
    spec.timeout = 1000ms;
    REQUIRE(registry.add(spec, [](const json&, CallContext&) { return ToolResult::text("ok"); })
                .empty());
  };
  add("read_text_file", {{"path", {{"type", "string"}}},
                         {"start_line", {{"type", "integer"}}},
                         {"end_line", {{"type", "integer"}}}});
  add("list_directory", {{"path", {{"type", "string"}}}});
  add("search_file_contents", {{"query", {{"type", "string"}}},
                               {"path", {{"type", "string"}}},
                               {"case_sensitive", {{"type", "boolean"}}},
                               {"max_results", {{"type", "integer"}, {"minimum", 1}}}});
}

std::string call(const RegisteredTool& tool, const json& arguments, bool* is_error = nullptr) {
  TestContext context;
  ToolResult result = tool.handler(arguments, context);
  if (is_error) *is_error = result.is_error;
  return text_of(result);
}

}  // namespace

TEST_CASE("a valid catalog file loads with every field") {
  CatalogLoad load = load_catalog_file(kCatalogs / "valid.json");
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());
  REQUIRE(load.catalog.command_tools.size() == 2);

  const CommandTool& echo = load.catalog.command_tools[0];
  CHECK(echo.spec.name == "echo_words");
  CHECK(echo.spec.title == "Echo words");
  CHECK(echo.spec.description == "Prints each word on its own line.");
  CHECK(echo.spec.input_schema["required"] == json::array({"words"}));
  CHECK(echo.spec.output_schema["type"] == "object");
  CHECK(echo.spec.side_effect == "read_only");
  CHECK(echo.spec.timeout == 2000ms);
  CHECK(echo.spec.idempotent);
  CHECK(echo.spec.tags == std::vector<std::string>{"test", "text"});
  CHECK(echo.spec.version == "2.1");
  CHECK(echo.spec.untrusted_output);
  CHECK(echo.command.argv == std::vector<std::string>{"printf", "%s\\n", "{prefix}", "{words}"});
  CHECK(echo.command.cwd.empty());
  CHECK(echo.command.env_allow == std::vector<std::string>{"PATH"});
  CHECK(echo.command.env == std::map<std::string, std::string>{{"LC_ALL", "C"}});
  CHECK(echo.command.max_output_bytes == 4096);
  CHECK(echo.command.max_stderr_bytes == 1024);

  const CommandTool& where = load.catalog.command_tools[1];
  CHECK(where.spec.title.empty());
  CHECK_FALSE(where.spec.idempotent);
  CHECK(where.spec.output_schema.is_null());
  CHECK(where.spec.side_effect == "local_mutation");
  CHECK_FALSE(where.spec.untrusted_output);  // "spotlight" is off by default
  // A relative cwd is taken relative to the file's folder, made absolute.
  CHECK(where.command.cwd.is_absolute());
  CHECK(fs::equivalent(where.command.cwd, kCatalogs / "workdir"));
  CHECK(where.command.max_output_bytes == std::size_t{1} << 20);
  CHECK(where.command.max_stderr_bytes == std::size_t{64} << 10);
}

TEST_CASE("a loaded catalog registers and its tools run") {
  CatalogLoad load = load_catalog_file(kCatalogs / "valid.json");
  REQUIRE(load.problems.empty());
  ToolRegistry registry;
  Problems problems = register_catalog(registry, load.catalog);
  INFO(format_problems(problems));
  REQUIRE(problems.empty());
  REQUIRE(registry.tools().size() == 2);

  const RegisteredTool* echo = registry.find("echo_words");
  REQUIRE(echo);
  CHECK(echo->descriptor["annotations"]["readOnlyHint"] == true);
  CHECK(call(*echo, {{"words", {"a b", "; rm -rf x"}}}) == "a b\n; rm -rf x\n");
  CHECK(call(*echo, {{"words", {"w"}}, {"prefix", "first"}}) == "first\nw\n");

  const RegisteredTool* where = registry.find("where_am_i");
  REQUIRE(where);
  CHECK(call(*where, json::object()) == fs::canonical(kCatalogs / "workdir").string() + "\n");
}

TEST_CASE("examples/catalog.json loads, registers and works as documented") {
  CatalogLoad load = load_catalog_file(kExample);
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());
  ToolRegistry registry;
  add_stand_in_builtins(registry);  // its aliases and policy name built-in tools
  const std::size_t builtins = registry.tools().size();
  Problems problems = register_catalog(registry, load.catalog);
  INFO(format_problems(problems));
  REQUIRE(problems.empty());
  CHECK(registry.tools().size() == builtins + load.catalog.command_tools.size());

  TempDir dir;
  fs::path text = dir.write("some file.txt", "one\ntwo\nthree\n");
  fs::path other = dir.write("-dash.txt", "x");
  bool is_error = true;

  const RegisteredTool* count = registry.find("count_lines");
  REQUIRE(count);
  CHECK(call(*count, {{"path", text.string()}}, &is_error) == "3 " + text.string() + "\n");
  CHECK_FALSE(is_error);

  const RegisteredTool* sums = registry.find("checksum_files");
  REQUIRE(sums);
  std::string out = call(*sums, {{"paths", {text.string(), other.string()}}}, &is_error);
  CHECK_FALSE(is_error);
  CHECK(std::count(out.begin(), out.end(), '\n') == 2);
  // A path starting with '-' is still a path, thanks to "--".
  CHECK(out.find("2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881  " +
                 other.string() + "\n") != std::string::npos);

  const RegisteredTool* head = registry.find("head_of_file");
  REQUIRE(head);
  CHECK(call(*head, {{"path", text.string()}, {"lines", 2}}) == "one\ntwo\n");
  CHECK(call(*head, {{"path", text.string()}}) == "one\ntwo\nthree\n");

  const RegisteredTool* size = registry.find("file_size");
  REQUIRE(size);
  CHECK(call(*size, {{"path", text.string()}}) == text.string() + ": 14 bytes, regular file\n");

  const RegisteredTool* list = registry.find("list_examples");
  REQUIRE(list);
  CHECK(call(*list, json::object()).find("catalog.json\n") != std::string::npos);

  // A missing file is an error result carrying the program's stderr.
  std::string missing = call(*count, {{"path", (dir.path() / "nope").string()}}, &is_error);
  CHECK(is_error);
  CHECK(missing.rfind("command exited with status 1\nstderr:\nwc: ", 0) == 0);
}

TEST_CASE("a broken catalog file reports every problem with its pointer") {
  CatalogLoad load = load_catalog_file(kCatalogs / "broken.json");
  const Problems& p = load.problems;
  INFO(format_problems(p));
  CHECK(load.catalog.command_tools.empty());

  CHECK(has_problem(p, "/tool", "unknown field \"tool\" (did you mean \"tools\"?)"));
  CHECK(has_problem(p, "/tools/0/comand", "unknown field \"comand\" (did you mean \"command\"?)"));
  CHECK(has_problem(p, "/tools/0", "missing required field \"command\""));
  CHECK(has_problem(p, "/tools/1/timeoutMs", "expected an integer, got a string"));
  CHECK(has_problem(p, "/tools/1/sideEffect", "side effect \"readonly\" is unknown"));
  CHECK(has_problem(p, "/tools/2", "missing required field \"description\""));
  CHECK(has_problem(p, "/tools/2/command/argv/3", "placeholder {file} names no property"));
  CHECK(has_problem(p, "/tools/3/name", "the name is already used by /tools/1"));
  CHECK(has_problem(p, "/tools/3/command/cwd",
                    "the working directory \"no-such-dir\" does not "
                    "exist"));
  CHECK(has_problem(p, "/tools/4/name", "repeated object key \"name\""));
  CHECK(has_problem(p, "/tools/4/inputSchema/type", "must have \"type\": \"object\""));
  CHECK(has_problem(p, "/tools/4/command/env/BAD-NAME", "not a valid environment variable"));
  CHECK(has_problem(p, "/tools/5", "expected an object (a tool), got a string"));
  // Nothing else: a field reported as missing or mistyped is not reported again.
  CHECK(p.size() == 13);
  // Whole-document problems first, then tool by tool.
  CHECK(p.front().pointer == "/tool");
  CHECK(p.back().pointer == "/tools/5");
}

TEST_CASE("an unknown field is a problem, with a suggestion when one is close") {
  CatalogLoad load = load_catalog_file(kCatalogs / "unknown_field.json");
  REQUIRE(load.problems.size() == 1);
  CHECK(load.problems[0].pointer == "/tools/0/command/maxOutputByte");
  CHECK(load.problems[0].message ==
        "unknown field \"maxOutputByte\" (did you mean \"maxOutputBytes\"?)");
  CHECK(load.catalog.command_tools.empty());

  TempDir dir;
  json tool = good_tool("t");
  tool["zzz_unrelated"] = 1;
  auto unrelated = load_json(dir, {{"tools", {tool}}, {"extra", true}});
  CHECK(has_problem(unrelated.problems, "/extra", "unknown field \"extra\""));
  CHECK(has_problem(unrelated.problems, "/tools/0/zzz_unrelated", "unknown field"));
  CHECK(unrelated.problems.size() == 2);
}

TEST_CASE("text that is not JSON is reported with the byte offset") {
  CatalogLoad load = load_catalog_file(kCatalogs / "bad_syntax.json");
  REQUIRE(load.problems.size() == 1);
  CHECK(load.problems[0].pointer == "");
  // The stray "}" after "x", is the 33rd byte (offsets count from 0).
  CHECK(load.problems[0].message.rfind("not JSON: ", 0) == 0);
  INFO(load.problems[0].message);
  CHECK(load.problems[0].message.find("at byte 32") != std::string::npos);
}

TEST_CASE("an unreadable file is reported with the path as given and the reason") {
  CatalogLoad missing = load_catalog_file("no/such/catalog.json");
  REQUIRE(missing.problems.size() == 1);
  CHECK(missing.problems[0].pointer == "");
  CHECK(missing.problems[0].message ==
        "cannot read no/such/catalog.json: No such file or directory");

  TempDir dir;
  CatalogLoad directory = load_catalog_file(dir.path());
  REQUIRE(directory.problems.size() == 1);
  CHECK(directory.problems[0].message ==
        "cannot read " + dir.path().string() + ": it is a directory, not a regular file");

  // A FIFO is refused at once: nothing waits for a writer that never comes.
  const toolmux::testing::FifoGuard fifo(dir / "catalog.json");
  CatalogLoad from_fifo = load_catalog_file(fifo.path());
  CHECK_FALSE(fifo.fired());
  REQUIRE(from_fifo.problems.size() == 1);
  CHECK(from_fifo.problems[0].message ==
        "cannot read " + fifo.path().string() + ": it is a FIFO (named pipe), not a regular file");
}

TEST_CASE("duplicate tool names within a file are problems at the later name") {
  TempDir dir;
  auto load =
      load_json(dir, {{"tools", {good_tool("a"), good_tool("b"), good_tool("a"), good_tool("a")}}});
  CHECK(load.problems.size() == 2);
  CHECK(has_problem(load.problems, "/tools/2/name",
                    "tool \"a\": the name is already used by /tools/0"));
  CHECK(has_problem(load.problems, "/tools/3/name", "already used by /tools/0"));
}

TEST_CASE("missing and mistyped fields are each reported once") {
  TempDir dir;
  json tool = good_tool("t");
  tool.erase("timeoutMs");
  tool.erase("inputSchema");
  tool["idempotent"] = "yes";
  tool["tags"] = {"ok", 3};
  tool["title"] = 7;
  tool["$comment"] = true;
  tool["command"] = {{"$comment", {1, 2}},   {"argv", "cat file"},   {"maxOutputBytes", 0},
                     {"maxStderrBytes", -1}, {"envAllow", {"PATH"}}, {"env", {{"A", 1}}}};
  auto load = load_json(dir, {{"tools", {tool}}, {"$comment", 5}});
  const Problems& p = load.problems;
  INFO(format_problems(p));
  CHECK(has_problem(p, "/$comment", "expected a string, got an integer"));
  CHECK(has_problem(p, "/tools/0", "missing required field \"timeoutMs\""));
  CHECK(has_problem(p, "/tools/0", "missing required field \"inputSchema\""));
  CHECK(has_problem(p, "/tools/0/idempotent", "expected a boolean, got a string"));
  CHECK(has_problem(p, "/tools/0/tags/1", "expected a string, got an integer"));
  CHECK(has_problem(p, "/tools/0/title", "expected a string, got an integer"));
  CHECK(has_problem(p, "/tools/0/$comment", "expected a string, got a boolean"));
  CHECK(has_problem(p, "/tools/0/command/$comment", "expected a string, got an array"));
  CHECK(has_problem(p, "/tools/0/command/argv", "expected an array of strings, got a string"));
  CHECK(has_problem(p, "/tools/0/command/maxOutputBytes", "must be between 1 and"));
  CHECK(has_problem(p, "/tools/0/command/maxStderrBytes", "must be between 0 and"));
  CHECK(has_problem(p, "/tools/0/command/env/A", "expected a string, got an integer"));
  CHECK(p.size() == 12);
}

TEST_CASE("the top level must be an object with a tools array") {
  TempDir dir;
  auto array = load_json(dir, json::array());
  REQUIRE(array.problems.size() == 1);
  CHECK(array.problems[0].pointer == "");
  CHECK(array.problems[0].message.find("expected an object") != std::string::npos);

  auto empty = load_json(dir, json::object());
  REQUIRE(empty.problems.size() == 1);
  CHECK(empty.problems[0].message == "missing required field \"tools\"");

  auto wrong = load_json(dir, {{"tools", {{"name", "x"}}}});
  REQUIRE(wrong.problems.size() == 1);
  CHECK(wrong.problems[0].pointer == "/tools");

  auto none = load_json(dir, {{"tools", json::array()}, {"$schema", "x"}});
  CHECK(none.problems.empty());
  CHECK(none.catalog.command_tools.empty());
}

TEST_CASE("a cwd that is a file is refused and an absolute one is kept") {
  TempDir dir;
  dir.write("plain", "x");
  json tool = good_tool("t");
  tool["command"]["cwd"] = "plain";
  auto file = load_json(dir, {{"tools", {tool}}});
  REQUIRE(file.problems.size() == 1);
  CHECK(file.problems[0].pointer == "/tools/0/command/cwd");
  CHECK(file.problems[0].message.find("is not a directory") != std::string::npos);

  tool["command"]["cwd"] = dir.path().string();
  auto absolute = load_json(dir, {{"tools", {tool}}});
  REQUIRE(absolute.problems.empty());
  CHECK(absolute.catalog.command_tools[0].command.cwd == dir.path());
}

TEST_CASE("a catalog tool whose name clashes with a registered tool is refused") {
  ToolRegistry registry;
  ToolSpec builtin;
  builtin.name = "echo_words";
  builtin.description = "A built-in tool.";
  builtin.input_schema = {{"type", "object"}};
  builtin.side_effect = "read_only";
  builtin.timeout = 1000ms;
  REQUIRE(registry.add(builtin, [](const json&, CallContext&) { return ToolResult::text("x"); })
              .empty());

  CatalogLoad load = load_catalog_file(kCatalogs / "valid.json");
  REQUIRE(load.problems.empty());
  Problems problems = register_catalog(registry, load.catalog);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == "/tools/0/name");
  CHECK(problems[0].message ==
        "tool \"echo_words\": the name is already taken by a tool registered before the catalog");
  // Nothing of a refused catalog is registered.
  CHECK(registry.tools().size() == 1);
  CHECK(registry.find("where_am_i") == nullptr);
}

TEST_CASE("without aliases, policy or results the defaults apply") {
  CatalogLoad load = load_catalog_file(kCatalogs / "valid.json");
  REQUIRE(load.problems.empty());
  const CatalogFile& catalog = load.catalog;
  CHECK(catalog.aliases.tools.empty());
  CHECK(catalog.aliases.arguments.empty());
  CHECK(catalog.policy.arguments.empty());
  CHECK(catalog.policy.access.empty());
  CHECK(catalog.policy.unknown_tool == UnknownToolAnswer::protocol_error);
  CHECK_FALSE(catalog.policy.reject_unknown_arguments);
  CHECK(catalog.results.max_text_chars == 100000);
  CHECK(catalog.results.offload);
  CHECK(catalog.results.offload_threshold_bytes == 50000);
  CHECK(catalog.results.max_response_bytes == 1048576);
  CHECK(catalog.results.retention == 24h);
  CHECK(catalog.results.store_max_bytes == std::uint64_t{1} << 30);
}

TEST_CASE("a catalog with aliases, policy and results loads every field") {
  CatalogLoad load = load_catalog_file(kCatalogs / "all_sections.json");
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());
  const CatalogFile& catalog = load.catalog;
  REQUIRE(catalog.command_tools.size() == 1);

  const AliasTable& aliases = catalog.aliases;
  CHECK(aliases.tools.size() == 3);
  CHECK(aliases.canonical_tool("cat") == "read_text_file");
  CHECK(aliases.canonical_tool("grep") == "search_file_contents");
  CHECK(aliases.canonical_tool("say") == "echo_words");
  REQUIRE(aliases.arguments.count("search_file_contents"));
  CHECK(aliases.arguments.at("search_file_contents").at("q") == "query");
  CHECK(aliases.arguments.at("search_file_contents").at("dir") == "path");
  CHECK(aliases.arguments.at("echo_words").at("w") == "words");

  const ToolPolicy& policy = catalog.policy;
  REQUIRE(policy.arguments.size() == 2);
  CHECK(policy.arguments.at("search_file_contents").defaults == json{{"max_results", 50}});
  CHECK(policy.arguments.at("search_file_contents").fixed == json{{"case_sensitive", false}});
  CHECK(policy.arguments.at("echo_words").defaults == json::object());
  CHECK(policy.arguments.at("echo_words").fixed == json{{"prefix", ">"}});
  REQUIRE(policy.access.size() == 3);
  CHECK(policy.access.at("*").allow == std::vector<std::string>{"*"});
  CHECK(policy.access.at("*").deny == std::vector<std::string>{"write_*"});
  CHECK(policy.access.at("admin").deny.empty());
  CHECK(policy.access.at("reader").allow == std::vector<std::string>{"read_*", "cat"});
  CHECK(policy.unknown_tool == UnknownToolAnswer::tool_result);
  CHECK(policy.reject_unknown_arguments);
  CHECK(policy.denial("someone", "write_text_file") ==
        std::optional<std::string>("denied by /policy/access/*/deny/0 (\"write_*\")"));
  CHECK_FALSE(policy.denial("admin", "write_text_file"));
  CHECK(policy.denial("reader", "echo_words") ==
        std::optional<std::string>("not in /policy/access/reader/allow"));

  const ResultLimits& results = catalog.results;
  CHECK(results.max_text_chars == 2000);
  CHECK_FALSE(results.offload);
  CHECK(results.offload_threshold_bytes == 4096);
  CHECK(results.max_response_bytes == 65536);
  CHECK(results.retention == 5400s);
  CHECK(results.store_max_bytes == 2097152);
}

TEST_CASE("aliases and policy may name built-in tools, and the catalog then registers") {
  CatalogLoad load = load_catalog_file(kCatalogs / "all_sections.json");
  REQUIRE(load.problems.empty());
  ToolRegistry registry;
  add_stand_in_builtins(registry);
  Problems problems = register_catalog(registry, load.catalog);
  INFO(format_problems(problems));
  REQUIRE(problems.empty());
  REQUIRE(registry.tools().size() == 4);  // three stand-ins and the file's tool

  // A call by alias, with an aliased argument and a fixed one, as the server
  // runs it: canonical name, renamed arguments, policy, schema check, handler.
  const CatalogFile& catalog = load.catalog;
  std::string name(catalog.aliases.canonical_tool("say"));
  const RegisteredTool* echo = registry.find(name);
  REQUIRE(echo);
  json arguments = {{"w", {"hello", "world"}}};
  CHECK(catalog.aliases.rename_arguments(name, arguments).empty());
  CHECK(catalog.policy.apply_arguments(name, arguments).empty());
  CHECK(arguments == json{{"words", {"hello", "world"}}, {"prefix", ">"}});
  CHECK(echo->input_schema.validate(arguments).empty());
  CHECK(call(*echo, arguments) == ">\nhello\nworld\n");

  // The fixed prefix is hidden from the advertised schema, and from "required".
  json advertised = catalog.policy.advertised_schema(name, echo->spec.input_schema);
  CHECK_FALSE(advertised["properties"].contains("prefix"));
  CHECK(advertised["required"] == json::array({"words"}));
  json sent = {{"words", {"x"}}, {"prefix", "mine"}};
  CHECK(catalog.policy.apply_arguments(name, sent) ==
        std::vector<std::string>{"argument \"prefix\" is fixed by the operator and cannot be set"});
}

TEST_CASE("aliases of built-in tools that are not registered refuse the catalog") {
  CatalogLoad load = load_catalog_file(kCatalogs / "all_sections.json");
  REQUIRE(load.problems.empty());
  ToolRegistry registry;  // no built-ins
  Problems problems = register_catalog(registry, load.catalog);
  INFO(format_problems(problems));
  CHECK(has_problem(problems, "/aliases/tools/cat",
                    "alias \"cat\" points at tool \"read_text_file\", which does not exist"));
  CHECK(has_problem(problems, "/aliases/tools/grep", "which does not exist"));
  CHECK(has_problem(problems, "/aliases/arguments/search_file_contents", "does not exist"));
  CHECK(has_problem(problems, "/policy/arguments/search_file_contents",
                    "argument policy for tool \"search_file_contents\", which does not exist"));
  CHECK(problems.size() == 4);
  // Nothing of a refused catalog is registered.
  CHECK(registry.tools().empty());
}

TEST_CASE("aliases and policy naming missing tools and arguments are refused at registration") {
  // The loader checks only the shape: the names are checked against the registry.
  CatalogLoad load = load_catalog_file(kCatalogs / "bad_references.json");
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());

  ToolRegistry registry;
  add_stand_in_builtins(registry);
  Problems p = register_catalog(registry, load.catalog);
  INFO(format_problems(p));
  CHECK(has_problem(p, "/aliases/tools/read_text_file",
                    "alias \"read_text_file\" collides with tool \"read_text_file\""));
  CHECK(has_problem(p, "/aliases/tools/cat",
                    "alias \"cat\" points at tool \"read_txt_file\", which does not exist (did "
                    "you mean \"read_text_file\"?)"));
  CHECK(has_problem(p, "/aliases/tools/bad name", "alias \"bad name\" is not a valid tool name"));
  CHECK(has_problem(p, "/aliases/arguments/echo_word",
                    "argument aliases for tool \"echo_word\", which does not exist (did you "
                    "mean \"echo_words\"?)"));
  CHECK(has_problem(p, "/aliases/arguments/echo_words/prefix",
                    "argument alias \"prefix\" collides with argument \"prefix\" of tool "
                    "\"echo_words\""));
  CHECK(has_problem(p, "/aliases/arguments/echo_words/p",
                    "argument alias \"p\" points at argument \"prefx\", which tool "
                    "\"echo_words\" does not declare (did you mean \"prefix\"?)"));
  CHECK(has_problem(p, "/policy/arguments/search_file_contents/fixed/case_sensitiv",
                    "tool \"search_file_contents\" declares no argument \"case_sensitiv\" (did "
                    "you mean \"case_sensitive\"?)"));
  CHECK(has_problem(p, "/policy/arguments/echo_words/defaults/words",
                    "the default \"not an array\" of argument \"words\" does not match the input "
                    "schema of tool \"echo_words\": /words: "));
  CHECK(has_problem(p, "/policy/arguments/grep",
                    "argument policy for tool \"grep\", which does not exist"));
  // Access patterns may name tools that are not registered.
  CHECK(p.size() == 9);
  // The registry is as it was.
  CHECK(registry.tools().size() == 3);
  CHECK(registry.find("echo_words") == nullptr);
}

TEST_CASE("a broken aliases, policy or results section reports every problem with its pointer") {
  CatalogLoad load = load_catalog_file(kCatalogs / "broken_sections.json");
  const Problems& p = load.problems;
  INFO(format_problems(p));
  CHECK(load.catalog.aliases.tools.empty());
  CHECK(load.catalog.policy.arguments.empty());
  CHECK(load.catalog.results.max_text_chars == 100000);

  CHECK(has_problem(p, "/alias", "unknown field \"alias\" (did you mean \"aliases\"?)"));

  CHECK(has_problem(p, "/aliases/tool", "unknown field \"tool\" (did you mean \"tools\"?)"));
  CHECK(has_problem(p, "/aliases/tools/cat", "expected a string (a tool name), got an integer"));
  CHECK(has_problem(p, "/aliases/arguments/a",
                    "expected an object (argument alias: argument name), got an array"));
  CHECK(has_problem(p, "/aliases/arguments/b/x",
                    "expected a string (an argument name), got a boolean"));

  CHECK(has_problem(p, "/policy/arguments/t/fixd",
                    "unknown field \"fixd\" (did you mean \"fixed\"?)"));
  CHECK(has_problem(p, "/policy/arguments/t/defaults/n",
                    "argument \"n\" has both a default and a fixed value "
                    "(/policy/arguments/t/fixed/n): give one"));
  CHECK(has_problem(p, "/policy/arguments/u/defaults", "expected an object, got an array"));
  CHECK(has_problem(p, "/policy/arguments/v",
                    "expected an object (\"defaults\" and \"fixed\"), got a string"));
  CHECK(has_problem(p, "/policy/access/*/allow", "expected an array of strings, got a string"));
  CHECK(has_problem(p, "/policy/access/*/deny/1", "expected a string, got an integer"));
  CHECK(has_problem(p, "/policy/access/bob/alow",
                    "unknown field \"alow\" (did you mean \"allow\"?)"));
  CHECK(has_problem(p, "/policy/access/a~1b",
                    "expected an object (\"allow\" and \"deny\"), got null"));
  CHECK(has_problem(p, "/policy/unknownTool",
                    "unknownTool must be \"error\" or \"result\", not \"ignore\""));
  CHECK(has_problem(p, "/policy/unknownArguments",
                    "unknownArguments must be \"pass\" or \"reject\", not \"sometimes\""));

  CHECK(has_problem(p, "/results/maxTextChar",
                    "unknown field \"maxTextChar\" (did you mean \"maxTextChars\"?)"));
  CHECK(has_problem(p, "/results/maxTextChars",
                    "maxTextChars must be -1 (no truncation) or at least 1, not 0"));
  CHECK(has_problem(p, "/results/offload", "expected a boolean, got a string"));
  CHECK(has_problem(p, "/results/offloadThresholdBytes",
                    "offloadThresholdBytes must be at least 1024, not 100"));
  CHECK(has_problem(p, "/results/retentionHours",
                    "retentionHours must be more than 0 and at most 1000000, not 0"));
  CHECK(has_problem(p, "/results/storeMaxBytes", "expected an integer, got a number"));
  CHECK(p.size() == 21);

  // Whole-document problems first, then the sections in order.
  CHECK(p.front().pointer == "/alias");
  CHECK(p[1].pointer.rfind("/aliases/", 0) == 0);
  CHECK(p.back().pointer.rfind("/results/", 0) == 0);
}

TEST_CASE("results: ranges, types and the conversion of retentionHours") {
  TempDir dir;
  auto results = [&](const json& section) {
    return load_json(dir, {{"tools", json::array()}, {"results", section}});
  };

  auto unlimited = results({{"maxTextChars", -1}, {"retentionHours", 0.0001}});
  INFO(format_problems(unlimited.problems));
  REQUIRE(unlimited.problems.empty());
  CHECK(unlimited.catalog.results.max_text_chars == -1);
  CHECK(unlimited.catalog.results.retention == 1s);  // 0.36 s, at least one second

  auto smallest = results({{"maxTextChars", 1},
                           {"offloadThresholdBytes", 1024},
                           {"maxResponseBytes", 16384},
                           {"storeMaxBytes", 1048576},
                           {"retentionHours", 1000000},
                           {"offload", true}});
  INFO(format_problems(smallest.problems));
  REQUIRE(smallest.problems.empty());
  CHECK(smallest.catalog.results.max_text_chars == 1);
  CHECK(smallest.catalog.results.offload_threshold_bytes == 1024);
  CHECK(smallest.catalog.results.max_response_bytes == 16384);
  CHECK(smallest.catalog.results.store_max_bytes == 1048576);
  CHECK(smallest.catalog.results.retention == std::chrono::hours(1000000));

  auto bad = results({{"maxTextChars", -2},
                      {"offloadThresholdBytes", -1},
                      {"maxResponseBytes", 16383},
                      {"storeMaxBytes", 1048575},
                      {"retentionHours", "24"}});
  const Problems& p = bad.problems;
  INFO(format_problems(p));
  CHECK(
      has_problem(p, "/results/maxTextChars", "must be -1 (no truncation) or at least 1, not -2"));
  CHECK(has_problem(p, "/results/offloadThresholdBytes", "must be at least 1024, not -1"));
  CHECK(has_problem(p, "/results/maxResponseBytes", "must be at least 16384, not 16383"));
  CHECK(has_problem(p, "/results/storeMaxBytes", "must be at least 1048576, not 1048575"));
  CHECK(has_problem(p, "/results/retentionHours", "expected a number, got a string"));
  CHECK(p.size() == 5);

  auto more = results({{"maxTextChars", 1.5},
                       {"retentionHours", 1000001},
                       {"storeMaxBytes", true},
                       {"offloadThresholdBytes", nullptr}});
  CHECK(has_problem(more.problems, "/results/maxTextChars", "expected an integer, got a number"));
  CHECK(has_problem(more.problems, "/results/retentionHours", "not 1000001"));
  CHECK(has_problem(more.problems, "/results/storeMaxBytes", "expected an integer, got a boolean"));
  CHECK(has_problem(more.problems, "/results/offloadThresholdBytes",
                    "expected an integer, got null"));
  CHECK(more.problems.size() == 4);

  auto negative_hours = results({{"retentionHours", -1.5}});
  CHECK(has_problem(negative_hours.problems, "/results/retentionHours", "not -1.5"));
  auto huge = results({{"maxTextChars", 18446744073709551615ull}});
  CHECK(has_problem(huge.problems, "/results/maxTextChars", "must be at most"));
}

TEST_CASE("the new sections must be objects, and their problems come with the tools' problems") {
  TempDir dir;
  json tool = good_tool("t");
  tool.erase("description");
  auto load = load_json(
      dir, {{"tools", {tool}}, {"aliases", json::array()}, {"policy", 5}, {"results", "big"}});
  const Problems& p = load.problems;
  INFO(format_problems(p));
  CHECK(has_problem(p, "/tools/0", "missing required field \"description\""));
  CHECK(has_problem(p, "/aliases", "expected an object, got an array"));
  CHECK(has_problem(p, "/policy", "expected an object, got an integer"));
  CHECK(has_problem(p, "/results", "expected an object, got a string"));
  CHECK(p.size() == 4);
  CHECK(p.front().pointer == "/tools/0");
  CHECK(load.catalog.command_tools.empty());

  // Empty sections are fine.
  auto empty =
      load_json(dir, {{"tools", json::array()},
                      {"aliases", json::object()},
                      {"policy", {{"arguments", json::object()}, {"access", json::object()}}},
                      {"results", json::object()}});
  CHECK(empty.problems.empty());
  ToolRegistry registry;
  CHECK(register_catalog(registry, empty.catalog).empty());
}

TEST_CASE("a repeated key in the aliases is a problem at its pointer") {
  TempDir dir;
  fs::path file = dir.write("catalog.json", R"({"tools": [],
    "aliases": {"tools": {"cat": "read_text_file", "cat": "list_directory"}}})");
  CatalogLoad load = load_catalog_file(file);
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.size() == 1);
  CHECK(load.problems[0].pointer == "/aliases/tools/cat");
  CHECK(load.problems[0].message.find("repeated object key \"cat\"") != std::string::npos);
}

namespace {

// The catalog's command tools, searched with the file's search options, as
// tool_search and `toolmux search` search them: the names found for `query`.
std::vector<std::string> search_catalog(const CatalogFile& catalog, std::string_view query) {
  std::vector<SearchDocument> documents;
  for (const CommandTool& tool : catalog.command_tools) {
    documents.push_back(search_document_from_tool({{"name", tool.spec.name},
                                                   {"description", tool.spec.description},
                                                   {"inputSchema", tool.spec.input_schema}},
                                                  "catalog"));
  }
  auto index = ToolSearchIndex::build(std::move(documents), catalog.search);
  std::vector<std::string> names;
  for (const auto& hit : index->search(query, 5))
    names.push_back(index->document(hit.document).name);
  return names;
}

}  // namespace

TEST_CASE("the search section's synonyms add to the built-in ones") {
  CatalogLoad load = load_catalog_file(kCatalogs / "search.json");
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());
  const CatalogFile& catalog = load.catalog;
  CHECK(search_catalog(catalog, "zap") == std::vector<std::string>{"widget_delete"});
  CHECK(search_catalog(catalog, "spawn") == std::vector<std::string>{"widget_create"});
  // The built-in list still applies: "remove" -> delete.
  CHECK(search_catalog(catalog, "remove") == std::vector<std::string>{"widget_delete"});
  CHECK(search_catalog(catalog, "remove a widget").front() == "widget_delete");
}

TEST_CASE("the search section replaces a built-in synonym, or turns the list off") {
  TempDir dir;
  json file = json::parse(std::ifstream(kCatalogs / "search.json"));
  file["search"]["synonyms"]["remove"] = {"create"};
  CatalogLoad replaced = load_json(dir, file);
  REQUIRE(replaced.problems.empty());
  CHECK(search_catalog(replaced.catalog, "remove") == std::vector<std::string>{"widget_create"});

  file["search"]["synonyms"].erase("remove");
  file["search"]["defaultSynonyms"] = false;
  CatalogLoad own_only = load_json(dir, file);
  REQUIRE(own_only.problems.empty());
  CHECK(search_catalog(own_only.catalog, "zap") == std::vector<std::string>{"widget_delete"});
  CHECK(search_catalog(own_only.catalog, "remove").empty());

  file["search"]["defaultSynonyms"] = "no";
  CatalogLoad wrong = load_json(dir, file);
  INFO(format_problems(wrong.problems));
  CHECK(has_problem(wrong.problems, "/search/defaultSynonyms", "expected a boolean, got a string"));
}

TEST_CASE("search.learn switches learning from use off, and is on by default") {
  TempDir dir;
  json file = json::parse(std::ifstream(kCatalogs / "search.json"));
  CatalogLoad by_default = load_json(dir, file);
  REQUIRE(by_default.problems.empty());
  CHECK(by_default.catalog.search_learn);

  file["search"]["learn"] = false;
  CatalogLoad off = load_json(dir, file);
  INFO(format_problems(off.problems));
  REQUIRE(off.problems.empty());
  CHECK_FALSE(off.catalog.search_learn);
  // The index's options are read as before.
  CHECK(search_catalog(off.catalog, "zap") == std::vector<std::string>{"widget_delete"});

  file["search"]["learn"] = "off";
  CatalogLoad wrong = load_json(dir, file);
  INFO(format_problems(wrong.problems));
  CHECK(has_problem(wrong.problems, "/search/learn", "expected a boolean, got a string"));
  CHECK(wrong.catalog.search_learn);  // a refused file leaves every default
}

TEST_CASE("search.rerank is off by default, and its fields are read strictly") {
  TempDir dir;
  json file = json::parse(std::ifstream(kCatalogs / "search.json"));
  auto settings = [&](const json& document) {
    CatalogLoad load = load_json(dir, document);
    INFO(format_problems(load.problems));
    REQUIRE(load.problems.empty());
    const SearchRerankSettings& s = load.catalog.search_rerank;
    return std::tuple(s.enabled, s.candidates, s.max_tokens, s.timeout);
  };
  CHECK(settings(file) == std::tuple(false, std::size_t{10}, std::size_t{200}, 20000ms));
  file["search"]["rerank"] = json::parse(
      R"({"$comment": "ask the client's model", "enabled": true, "candidates": 4,
          "maxTokens": 64, "timeoutMs": 1500})");
  CHECK(settings(file) == std::tuple(true, std::size_t{4}, std::size_t{64}, 1500ms));

  file["search"]["rerank"] = {{"enabled", "yes"},
                              {"candidates", 50},
                              {"maxTokens", 1.5},
                              {"timeoutMs", 60000},
                              {"candidate", 3}};
  CatalogLoad wrong = load_json(dir, file);
  INFO(format_problems(wrong.problems));
  CHECK(has_problem(wrong.problems, "/search/rerank/enabled", "expected a boolean, got a string"));
  CHECK(has_problem(wrong.problems, "/search/rerank/candidates",
                    "candidates must be between 2 and 20, not 50"));
  CHECK(has_problem(wrong.problems, "/search/rerank/maxTokens", "expected an integer"));
  CHECK(has_problem(wrong.problems, "/search/rerank/timeoutMs",
                    "timeoutMs must be between 100 and 25000, not 60000"));
  CHECK(has_problem(wrong.problems, "/search/rerank/candidate",
                    "unknown field \"candidate\" (did you mean \"candidates\"?)"));
  CHECK_FALSE(wrong.catalog.search_rerank.enabled);

  file["search"]["rerank"] = true;
  CatalogLoad not_object = load_json(dir, file);
  INFO(format_problems(not_object.problems));
  CHECK(has_problem(not_object.problems, "/search/rerank", "expected an object, got a boolean"));
}

TEST_CASE("the upstreams section loads every field and resolves env references") {
  TempDir dir;
  fs::copy(kCatalogs / "upstreams.json", dir.path() / "catalog.json");
  fs::create_directories(dir.path() / "workdir");
  write_file(dir.path() / "secret.txt", "from-a-file\n");
  ::setenv("TOOLMUX_TEST_SECRET", "from-the-environment", 1);
  CatalogLoad load = load_catalog_file(dir.path() / "catalog.json");
  ::unsetenv("TOOLMUX_TEST_SECRET");
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());
  REQUIRE(load.catalog.upstreams.size() == 2);

  const UpstreamSpec& files = load.catalog.upstreams[0];
  CHECK(files.name == "files");
  CHECK(files.argv == std::vector<std::string>{"node", "server.js", "--stdio"});
  CHECK(files.cwd == dir.path() / "workdir");
  auto has = [&](const std::string& entry) {
    return std::find(files.env.begin(), files.env.end(), entry) != files.env.end();
  };
  CHECK(has("MODE=test"));
  CHECK(has("API_TOKEN=from-the-environment"));
  CHECK(has("FILE_TOKEN=from-a-file"));
  if (const char* path = std::getenv("PATH")) CHECK(has(std::string("PATH=") + path));
  CHECK(files.prefix == "fs.");
  REQUIRE(files.include);
  CHECK(files.include->size() == 3);
  CHECK(files.exclude == std::vector<std::string>{"delete"});
  const UpstreamToolOverride& read = files.tools.at("read");
  CHECK(read.name == "read_remote");
  CHECK(read.description == "Reads.");
  CHECK(read.side_effect == "read_only");
  CHECK(read.timeout == 1500ms);
  CHECK(read.pinned);
  CHECK(read.spotlight == true);
  CHECK(files.spotlight == false);
  // Values given by reference are secrets from now on.
  CHECK(redact("env from-the-environment, file from-a-file") == "env [REDACTED], file [REDACTED]");

  const UpstreamSpec& plain = load.catalog.upstreams[1];
  CHECK_FALSE(plain.spotlight.has_value());
  CHECK(plain.argv == std::vector<std::string>{"/bin/true"});
  CHECK(plain.prefix == "plain_");
  CHECK_FALSE(plain.include);
  CHECK(plain.cwd.empty());
}

TEST_CASE("problems in the upstreams section are reported at their pointers, secrets never") {
  TempDir dir;
  fs::copy(kCatalogs / "upstreams_broken.json", dir.path() / "catalog.json");
  CatalogLoad load = load_catalog_file(dir.path() / "catalog.json");
  const std::string report = format_problems(load.problems);
  INFO(report);
  CHECK(load.catalog.upstreams.empty());
  for (const char* expected : {
           "/upstreams/bad name!: upstream name \"bad name!\"",
           "/upstreams/no_command: missing required field \"command\"",
           "/upstreams/no_command/comand: unknown field \"comand\" (did you mean \"command\"?)",
           "/upstreams/no_command/args: expected an array of strings, got a string",
           "/upstreams/env/cwd: the working directory \"does-not-exist\" is not a directory",
           "/upstreams/env/env/1BAD: variable name \"1BAD\" does not match",
           "/upstreams/env/env/NUMBER: expected a string or an object",
           "/upstreams/env/env/UNSET/fromEnv: toolmux's environment has no variable "
           "\"TOOLMUX_TEST_SURELY_UNSET_VARIABLE\"",
           "/upstreams/env/env/MISSING_FILE/fromFile: cannot read ",
           "/upstreams/env/env/BOTH: give exactly one of \"fromEnv\" and \"fromFile\"",
           "/upstreams/env/env/TYPO/fromEvn: unknown field \"fromEvn\" (did you mean \"fromEnv\"?)",
           "/upstreams/tools/prefix: the prefix may hold",
           "/upstreams/tools/include/0: expected a string, got an integer",
           "/upstreams/tools/tools/a/sideEffect: sideEffect must be",
           "/upstreams/tools/tools/a/timeoutMs: timeoutMs must be between 1 and",
           "/upstreams/tools/tools/a/pinned: expected a boolean, got a string",
           "/upstreams/tools/tools/a/nmae: unknown field \"nmae\" (did you mean \"name\"?)",
           "/upstreams/tools/tools/b: expected an object",
           "/upstreams/not_object: expected an object (an upstream server), got an array",
       }) {
    CHECK(report.find(expected) != std::string::npos);
  }
  CHECK(report.find("HOME=") == std::string::npos);
}

TEST_CASE(
    "HTTP upstreams take a url, headers and a bearer token by reference, and lifecycle settings "
    "load") {
  TempDir dir;
  fs::copy(kCatalogs / "upstreams_http.json", dir.path() / "catalog.json");
  write_file(dir.path() / "token.txt", "token-from-a-file\n");
  ::setenv("TOOLMUX_TEST_SECRET", "key-from-the-environment", 1);
  CatalogLoad load = load_catalog_file(dir.path() / "catalog.json");
  ::unsetenv("TOOLMUX_TEST_SECRET");
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());
  REQUIRE(load.catalog.upstreams.size() == 3);

  const UpstreamSpec& off = load.catalog.upstreams[2];  // by name
  CHECK(off.name == "switched_off");
  CHECK_FALSE(off.lifecycle.breaker);
  CHECK(off.lifecycle.breaker_failures == 2);

  const UpstreamSpec& later = load.catalog.upstreams[0];  // by name
  CHECK(later.name == "later");
  CHECK(later.lifecycle.lazy);
  CHECK(later.lifecycle.start_timeout == 5000ms);
  CHECK(later.lifecycle.probe_timeout == 1500ms);
  CHECK(later.lifecycle.restart_initial == 100ms);
  CHECK(later.lifecycle.restart_max == 2000ms);
  CHECK_FALSE(later.lifecycle.breaker);          // no circuitBreaker section: off
  CHECK(later.lifecycle.breaker_failures == 5);  // the defaults
  CHECK(later.lifecycle.read_only_retries == 1);

  const UpstreamSpec& remote = load.catalog.upstreams[1];
  CHECK(remote.url == "https://mcp.example.com/mcp");
  CHECK(remote.argv.empty());
  using Header = std::pair<std::string, std::string>;
  CHECK(remote.headers == std::vector<Header>{{"X-Api-Key", "key-from-the-environment"},
                                              {"X-Team", "tools"},
                                              {"Authorization", "Bearer token-from-a-file"}});
  CHECK_FALSE(remote.lifecycle.lazy);
  CHECK(remote.lifecycle.breaker);  // its section turns it on
  CHECK(remote.lifecycle.breaker_failures == 3);
  CHECK(remote.lifecycle.breaker_cooldown == 10000ms);
  CHECK(remote.lifecycle.read_only_retries == 2);
  CHECK(remote.lifecycle.probe_timeout == 5000ms);  // the default
}

TEST_CASE("problems of HTTP upstreams and lifecycle settings are reported, secrets never") {
  TempDir dir;
  fs::copy(kCatalogs / "upstreams_http_broken.json", dir.path() / "catalog.json");
  CatalogLoad load = load_catalog_file(dir.path() / "catalog.json");
  const std::string report = format_problems(load.problems);
  INFO(report);
  CHECK(load.catalog.upstreams.empty());
  for (const char* expected : {
           "/upstreams/both: give either \"command\" (a stdio server) or \"url\" (a Streamable "
           "HTTP server), not both",
           "/upstreams/scheme/url: the url must start with http:// or https://",
           "/upstreams/stdio_fields/args: \"args\" is for stdio servers",
           "/upstreams/stdio_fields/env: \"env\" is for stdio servers",
           "/upstreams/http_fields/headers: \"headers\" is for HTTP servers",
           "/upstreams/http_fields/bearerToken: \"bearerToken\" is for HTTP servers",
           "/upstreams/literal/headers/Authorization: a secret is never written in the catalog",
           "/upstreams/literal/headers/bad header: header name \"bad header\" is not a valid",
           "/upstreams/literal/bearerToken: a secret is never written in the catalog",
           "/upstreams/lifecycle/start: start must be \"eager\" or \"lazy\", not \"sometimes\"",
           "/upstreams/lifecycle/restart/maxDelayMs: maxDelayMs is smaller than initialDelayMs",
           "/upstreams/lifecycle/restart/jitter: unknown field \"jitter\"",
           "/upstreams/lifecycle/circuitBreaker/failures: failures must be between 1 and 1000",
           "/upstreams/lifecycle/readOnlyRetries: readOnlyRetries must be between 0 and 5",
       }) {
    CHECK(report.find(expected) != std::string::npos);
  }
  CHECK(report.find("written-in-the-file") == std::string::npos);
}

TEST_CASE("policy.confirm is read: classes, tool patterns, principals and the timeout") {
  CatalogLoad load = load_catalog_file(kCatalogs / "confirm.json");
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());
  const ConfirmPolicy& confirm = load.catalog.policy.confirm;
  CHECK(confirm.timeout == std::chrono::seconds(120));
  CHECK(confirm.rule_for("alice", "publish_site", SideEffect::local_mutation) ==
        "/policy/confirm/tools/publish_*");
  CHECK_FALSE(confirm.rule_for("alice", "send_test_mail", SideEffect::remote_mutation));
  CHECK(confirm.rule_for("alice", "send_mail", SideEffect::remote_mutation) ==
        "/policy/confirm/classes");
  CHECK_FALSE(confirm.rule_for("ci", "send_mail", SideEffect::remote_mutation));
  CHECK(confirm.rule_for("ci", "drop", SideEffect::destructive) ==
        "/policy/confirm/principals/ci/classes");
}

TEST_CASE("a broken policy.confirm reports every problem with its pointer") {
  CatalogLoad load = load_catalog_file(kCatalogs / "confirm_broken.json");
  const Problems& p = load.problems;
  INFO(format_problems(p));
  CHECK(has_problem(p, "/policy/confirm/classes/1",
                    "\"dangerous\" is not a side-effect class (read_only, local_mutation, "
                    "remote_mutation, destructive)"));
  CHECK(has_problem(p, "/policy/confirm/tools/publish_*",
                    "expected a boolean (whether the tool needs confirmation), got a string"));
  CHECK(has_problem(p, "/policy/confirm/principals/ci/clases",
                    "unknown field \"clases\" (did you mean \"classes\"?)"));
  CHECK(has_problem(p, "/policy/confirm/principals/bob",
                    "expected an object (\"classes\" and \"tools\"), got an array"));
  CHECK(has_problem(p, "/policy/confirm/timeout", "unknown field \"timeout\""));
  CHECK(has_problem(p, "/policy/confirm/timeoutSeconds",
                    "timeoutSeconds must be between 1 and 86400, not 0"));
  CHECK(p.size() == 6);
}

TEST_CASE("spotlight must be a boolean, on a command tool, an upstream and its tools") {
  TempDir dir;
  json tool = good_tool("t");
  tool["spotlight"] = "yes";
  json document = {{"tools", {tool}},
                   {"upstreams",
                    {{"up",
                      {{"command", "/bin/true"},
                       {"spotlight", 1},
                       {"tools", {{"x", {{"spotlight", nullptr}}}}}}}}}};
  CatalogLoad load = load_json(dir, document);
  const std::string report = format_problems(load.problems);
  INFO(report);
  CHECK_THAT(report, Catch::Contains("/tools/0/spotlight: expected a boolean"));
  CHECK_THAT(report, Catch::Contains("/upstreams/up/spotlight: expected a boolean"));
  CHECK_THAT(report, Catch::Contains("/upstreams/up/tools/x/spotlight: expected a boolean"));
}

TEST_CASE(
    "redactPersonalData names classes for a command tool, an upstream and an upstream's tool") {
  TempDir dir;
  json tool = good_tool("t");
  tool["redactPersonalData"] = {"email", "payment_card", "email"};
  json document = {{"tools", {tool, good_tool("plain")}},
                   {"upstreams",
                    {{"up",
                      {{"command", "/bin/true"},
                       {"redactPersonalData", {"iban", "us_ssn", "uk_nino"}},
                       {"tools",
                        {{"x", {{"redactPersonalData", {"phone"}}}},
                         {"y", {{"redactPersonalData", json::array()}}}}}}}}}};
  CatalogLoad load = load_json(dir, document);
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());
  PersonalDataClasses expected;
  expected.insert(PersonalData::email);
  expected.insert(PersonalData::payment_card);
  CHECK(load.catalog.command_tools[0].spec.redact_personal_data == expected);
  CHECK(load.catalog.command_tools[1].spec.redact_personal_data.empty());  // off by default
  const UpstreamSpec& up = load.catalog.upstreams.at(0);
  CHECK(up.redact_personal_data.contains(PersonalData::iban));
  CHECK(up.redact_personal_data.contains(PersonalData::us_ssn));
  CHECK(up.redact_personal_data.contains(PersonalData::uk_nino));
  CHECK_FALSE(up.redact_personal_data.contains(PersonalData::email));
  REQUIRE(up.tools.at("x").redact_personal_data.has_value());
  CHECK(up.tools.at("x").redact_personal_data->contains(PersonalData::phone));
  REQUIRE(up.tools.at("y").redact_personal_data.has_value());
  CHECK(up.tools.at("y").redact_personal_data->empty());
}

TEST_CASE("an unknown personal data class is refused at its index, with the known classes") {
  TempDir dir;
  json tool = good_tool("t");
  tool["redactPersonalData"] = {"email", "emial"};
  json document = {{"tools", {tool}},
                   {"upstreams",
                    {{"up",
                      {{"command", "/bin/true"},
                       {"redactPersonalData", {"credit_card"}},
                       {"tools", {{"x", {{"redactPersonalData", "phone"}}}}}}}}}};
  CatalogLoad load = load_json(dir, document);
  const Problems& p = load.problems;
  INFO(format_problems(p));
  const std::string classes =
      "; the classes are email, phone, payment_card, iban, us_ssn and uk_nino";
  CHECK(has_problem(p, "/tools/0/redactPersonalData/1",
                    "unknown personal data class \"emial\" (did you mean \"email\"?)" + classes));
  CHECK(has_problem(p, "/upstreams/up/redactPersonalData/0",
                    "unknown personal data class \"credit_card\"" + classes));
  CHECK(has_problem(p, "/upstreams/up/tools/x/redactPersonalData",
                    "expected an array of strings, got a string"));
  CHECK(p.size() == 3);
}

TEST_CASE("authorization is read: issuers, the resource, the scopes in order, introspection") {
  CatalogLoad load = load_catalog_file(kCatalogs / "authorization.json");
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());
  const AuthorizationSettings& a = load.catalog.authorization;
  CHECK(a.issuers == std::vector<std::string>{"https://idp.example.com/realms/team",
                                              "https://login.example.org/tenant/v2.0"});
  CHECK(a.resource == "https://tools.example.com/mcp");
  REQUIRE(a.scopes.size() == 3);
  CHECK(a.scopes[0].first == "tools:read");
  CHECK(a.scopes[1].first == "tools:write");
  CHECK(a.scopes[1].second ==
        std::vector<std::string>{"read_only", "local_mutation", "remote_mutation"});
  CHECK(a.scopes[2].first == "tools:admin");
  CHECK(a.introspection_client == "toolmux");
}

TEST_CASE("a broken authorization reports every problem with its pointer") {
  CatalogLoad load = load_catalog_file(kCatalogs / "authorization_broken.json");
  const Problems& p = load.problems;
  INFO(format_problems(p));
  CHECK(has_problem(p, "/authorization/issuer",
                    "unknown field \"issuer\" (did you mean \"issuers\"?)"));
  CHECK(has_problem(p, "/authorization/issuers", "expected an array of strings, got a string"));
  CHECK(has_problem(p, "/authorization/resource", "expected a string, got an integer"));
  CHECK(has_problem(p, "/authorization/scopes/0/scope",
                    "a scope is one word without quotes or backslashes, not \"bad scope\""));
  CHECK(has_problem(p, "/authorization/scopes/0/allows/0",
                    "\"reading\" is not a side-effect class (read_only, local_mutation, "
                    "remote_mutation, destructive)"));
  CHECK(has_problem(p, "/authorization/scopes/1", "missing required field \"allows\""));
  CHECK(has_problem(p, "/authorization/scopes/2",
                    "expected an object {\"scope\", \"allows\"}, got a string"));
  CHECK(p.size() == 7);
}

TEST_CASE("an HTTP upstream's oauth section is read, its secrets resolved") {
  TempDir dir;
  fs::copy(kCatalogs / "upstreams_oauth.json", dir.path() / "catalog.json");
  write_file(dir.path() / "secret.txt", "s3cret\n");
  write_file(dir.path() / "key.pem",
             "-----BEGIN PRIVATE KEY-----\nMII...\n-----END PRIVATE KEY-----\n");
  CatalogLoad load = load_catalog_file(dir.path() / "catalog.json");
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());
  REQUIRE(load.catalog.upstreams.size() == 2);
  const UpstreamSpec& machine = load.catalog.upstreams[0];  // by name
  REQUIRE(machine.oauth);
  CHECK(machine.oauth->client_id == "toolmux-at-example");
  CHECK(machine.oauth->client_secret == "s3cret");
  CHECK(machine.oauth->private_key_pem.empty());
  CHECK(machine.oauth->token_endpoint_auth_method == "client_secret_post");
  CHECK(machine.oauth->issuer == "https://auth.example.com");
  CHECK(machine.oauth->scope == "tools:read tools:call");
  CHECK(machine.headers.empty());
  const UpstreamSpec& signed_one = load.catalog.upstreams[1];
  REQUIRE(signed_one.oauth);
  CHECK(signed_one.oauth->private_key_pem.rfind("-----BEGIN PRIVATE KEY-----", 0) == 0);
  CHECK(signed_one.oauth->signing_algorithm == "RS256");
  // Another client is another connection: a reload restarts the upstream.
  UpstreamSpec other = machine;
  other.oauth->client_id = "someone-else";
  CHECK_FALSE(same_connection(machine, other));
  CHECK(same_connection(machine, machine));
}

TEST_CASE("an upstream a person logs in to: the authorization_code grant, its client optional") {
  CatalogLoad load = load_catalog_file(kCatalogs / "upstreams_oauth_code.json");
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());
  REQUIRE(load.catalog.upstreams.size() == 2);
  const UpstreamSpec& registered = load.catalog.upstreams[0];  // by name
  REQUIRE(registered.oauth);
  CHECK(registered.oauth->grant == UpstreamOAuth::Grant::authorization_code);
  CHECK(registered.oauth->client_id.empty());
  CHECK(registered.oauth->redirect_port == 0);
  const UpstreamSpec& pinned = load.catalog.upstreams[1];
  REQUIRE(pinned.oauth);
  CHECK(pinned.oauth->client_id == "toolmux-desktop");
  CHECK_FALSE(pinned.oauth->client_secret.empty());
  CHECK(pinned.oauth->redirect_port == 33418);
  CHECK(pinned.oauth->issuer == "https://auth.example.com");
}

TEST_CASE("a broken oauth section is refused, every problem at its place") {
  TempDir dir;
  fs::copy(kCatalogs / "upstreams_oauth_broken.json", dir.path() / "catalog.json");
  CatalogLoad load = load_catalog_file(dir.path() / "catalog.json");
  const std::string report = format_problems(load.problems);
  INFO(report);
  CHECK(load.catalog.upstreams.empty());
  for (const char* expected : {
           "/upstreams/stdio/oauth: \"oauth\" is for HTTP servers (\"url\"), not \"command\"",
           "/upstreams/both_tokens: give either \"bearerToken\" (a fixed token) or \"oauth\"",
           "/upstreams/code_grant/oauth/grant: grant must be \"client_credentials\" (a client "
           "that needs no person) or \"authorization_code\"",
           "/upstreams/code_key/oauth/privateKey: \"privateKey\" is for the client_credentials "
           "grant",
           "/upstreams/code_port/oauth/redirectPort: redirectPort must be a whole number from "
           "1024 to 65535",
           "/upstreams/code_secret_alone/oauth: a \"clientSecret\" belongs to a "
           "pre-registered client: give its \"clientId\"",
           "/upstreams/machine_port/oauth/redirectPort: \"redirectPort\" is for the "
           "authorization_code grant",
           "/upstreams/code_grant/oauth/clientSecret: a secret is never written in the catalog",
           "/upstreams/no_secret/oauth: give exactly one of \"clientSecret\" and \"privateKey\"",
           "/upstreams/odd_fields/oauth/signingAlgorithm: signingAlgorithm must be",
           "/upstreams/odd_fields/oauth/tokenEndpointAuthMethod: tokenEndpointAuthMethod must be",
           "/upstreams/odd_fields/oauth/redirectUri: unknown field \"redirectUri\"",
       }) {
    CHECK(report.find(expected) != std::string::npos);
  }
  CHECK(report.find("written-in-the-file") == std::string::npos);
}

TEST_CASE("a command tool's taskSupport is read, and a value it cannot be is refused") {
  TempDir dir;
  json optional = good_tool("a");
  optional["taskSupport"] = "optional";
  json required = good_tool("b");
  required["taskSupport"] = "required";
  json wrong = good_tool("c");
  wrong["taskSupport"] = "sometimes";
  auto load = load_json(dir, {{"tools", {optional, required, good_tool("d")}}});
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());
  CHECK(load.catalog.command_tools[0].spec.task_support == TaskSupport::optional);
  CHECK(load.catalog.command_tools[1].spec.task_support == TaskSupport::required);
  CHECK(load.catalog.command_tools[2].spec.task_support == TaskSupport::forbidden);
  auto refused = load_json(dir, {{"tools", {wrong}}});
  CHECK(has_problem(refused.problems, "/tools/0/taskSupport",
                    "expected \"forbidden\", \"optional\" or \"required\", got \"sometimes\""));
}
