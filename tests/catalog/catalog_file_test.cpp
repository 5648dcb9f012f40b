#include "catalog/catalog_file.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

using namespace toolmux;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

const fs::path kCatalogs = fs::path(TOOLMUX_TEST_DATA) / "catalogs";
const fs::path kExample = fs::path(TOOLMUX_TEST_DATA) / ".." / ".." / "examples" / "catalog.json";

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "toolmux-catalog-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = fs::canonical(pattern);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const std::string& text) const {
    fs::path file = path_ / name;
    std::ofstream(file) << text;
    return file;
  }

 private:
  fs::path path_;
};

class FakeContext : public CallContext {
 public:
  bool cancelled() const override { return false; }
  Clock::time_point deadline() const override { return deadline_; }
  void report_progress(double, std::optional<double>, std::string_view) override {}
  void log(LogLevel, const json&) override {}

 private:
  Clock::time_point deadline_ = Clock::now() + 20s;
};

// Whether a problem at exactly `pointer` has a message containing `fragment`.
bool has_problem(const Problems& problems, const std::string& pointer,
                 const std::string& fragment) {
  return std::any_of(problems.begin(), problems.end(), [&](const Problem& p) {
    return p.pointer == pointer && p.message.find(fragment) != std::string::npos;
  });
}

// A tool object with every required field, to be modified by a test.
json good_tool(const std::string& name) {
  return {{"name", name},
          {"description", "A test tool."},
          {"inputSchema", {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}}},
          {"sideEffect", "read_only"},
          {"timeoutMs", 1000},
          {"command", {{"argv", {"cat", "--", "{path}"}}}}};
}

CatalogLoad load_json(const TempDir& dir, const json& document) {
  return load_catalog_file(dir.write("catalog.json", document.dump(2)));
}

std::string call(const RegisteredTool& tool, const json& arguments, bool* is_error = nullptr) {
  FakeContext context;
  ToolResult result = tool.handler(arguments, context);
  if (is_error) *is_error = result.is_error;
  return result.content.at(0).at("text").get<std::string>();
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
  Problems problems = register_catalog(registry, load.catalog);
  INFO(format_problems(problems));
  REQUIRE(problems.empty());
  CHECK(registry.tools().size() == load.catalog.command_tools.size());

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
  CHECK(directory.problems[0].message == "cannot read " + dir.path().string() + ": Is a directory");
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
  tool["command"] = {{"argv", "cat file"},
                     {"maxOutputBytes", 0},
                     {"maxStderrBytes", -1},
                     {"envAllow", {"PATH"}},
                     {"env", {{"A", 1}}}};
  auto load = load_json(dir, {{"tools", {tool}}, {"$comment", 5}});
  const Problems& p = load.problems;
  INFO(format_problems(p));
  CHECK(has_problem(p, "/$comment", "expected a string, got an integer"));
  CHECK(has_problem(p, "/tools/0", "missing required field \"timeoutMs\""));
  CHECK(has_problem(p, "/tools/0", "missing required field \"inputSchema\""));
  CHECK(has_problem(p, "/tools/0/idempotent", "expected a boolean, got a string"));
  CHECK(has_problem(p, "/tools/0/tags/1", "expected a string, got an integer"));
  CHECK(has_problem(p, "/tools/0/title", "expected a string, got an integer"));
  CHECK(has_problem(p, "/tools/0/command/argv", "expected an array of strings, got a string"));
  CHECK(has_problem(p, "/tools/0/command/maxOutputBytes", "must be between 1 and"));
  CHECK(has_problem(p, "/tools/0/command/maxStderrBytes", "must be between 0 and"));
  CHECK(has_problem(p, "/tools/0/command/env/A", "expected a string, got an integer"));
  CHECK(p.size() == 10);
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
