#include "catalog/providers/filesystem_tools.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "catalog/argument_check.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_context.h"

namespace fs = std::filesystem;
using nlohmann::json;
using toolmux::FilesystemToolOptions;
using toolmux::ToolRegistry;
using toolmux::ToolResult;
using toolmux::testing::read_file;
using toolmux::testing::TempDir;
using toolmux::testing::TestContext;
using toolmux::testing::text_of;
using toolmux::testing::write_file;

namespace {

// The tools over some roots, called the way the server calls them: arguments
// checked against the registered input schema, then the handler.
class Tools {
 public:
  explicit Tools(std::vector<fs::path> roots, bool allow_writes = false) {
    FilesystemToolOptions options;
    options.roots = std::move(roots);
    options.allow_writes = allow_writes;
    const toolmux::Problems problems = toolmux::register_filesystem_tools(registry, options);
    INFO(toolmux::format_problems(problems));
    REQUIRE(problems.empty());
  }

  ToolResult call(const std::string& name, const json& arguments) {
    const toolmux::RegisteredTool* tool = registry.find(name);
    REQUIRE(tool != nullptr);
    const toolmux::ArgumentCheck check = toolmux::check_arguments(*tool, arguments.dump());
    INFO(check.message(name));
    REQUIRE(check.ok());
    const std::size_t reported = context.progress().size();
    ToolResult result = tool->handler(check.arguments, context);
    // Progress carries no total and increases from report to report.
    const std::vector<TestContext::Progress> progress = context.progress();
    for (std::size_t i = reported; i < progress.size(); ++i) {
      CHECK_FALSE(progress[i].total.has_value());
      if (i > 0) CHECK(progress[i].progress > progress[i - 1].progress);
    }
    REQUIRE(result.content.is_array());
    REQUIRE(result.content.size() == 1);
    if (tool->output_schema && !result.is_error) {
      const std::vector<std::string> problems =
          tool->output_schema.validate(result.structured_content);
      INFO(result.structured_content.dump());
      for (const std::string& problem : problems) FAIL_CHECK(problem);
    }
    // Every result can be sent as JSON.
    CHECK_NOTHROW(result.to_json().dump());
    return result;
  }

  ToolRegistry registry;
  TestContext context{std::chrono::hours(1)};
};

std::string ok_text(const ToolResult& result) {
  INFO(text_of(result));
  CHECK_FALSE(result.is_error);
  return text_of(result);
}

std::string error_text(const ToolResult& result) {
  INFO(text_of(result));
  CHECK(result.is_error);
  return text_of(result);
}

std::string numbered_lines(int count) {
  std::string out;
  for (int i = 1; i <= count; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

}  // namespace

TEST_CASE("registration: read-only tools, write only when allowed", "[filesystem_tools]") {
  TempDir dir;
  {
    Tools tools({dir.path()});
    std::vector<std::string> names;
    for (const auto& tool : tools.registry.tools()) names.push_back(tool->spec.name);
    CHECK(names == std::vector<std::string>{"read_text_file", "list_directory", "find_files",
                                            "search_file_contents", "get_file_info"});
    for (const auto& tool : tools.registry.tools()) {
      CHECK(tool->side_effect == toolmux::SideEffect::read_only);
      CHECK(tool->spec.input_schema["additionalProperties"] == false);
      CHECK(tool->descriptor["annotations"]["readOnlyHint"] == true);
      // Descriptions say nothing about where the root is on this host.
      CHECK(tool->spec.description.find(dir.path().string()) == std::string::npos);
    }
    CHECK(tools.registry.find("write_text_file") == nullptr);
  }
  {
    Tools tools({dir.path()}, /*allow_writes=*/true);
    const toolmux::RegisteredTool* write = tools.registry.find("write_text_file");
    REQUIRE(write != nullptr);
    CHECK(write->side_effect == toolmux::SideEffect::local_mutation);
    CHECK(write->spec.timeout == std::chrono::milliseconds(10000));
    CHECK(tools.registry.find("find_files")->spec.timeout == std::chrono::milliseconds(30000));
  }
}

TEST_CASE("registration refuses a missing root and registers nothing", "[filesystem_tools]") {
  TempDir dir;
  ToolRegistry registry;
  FilesystemToolOptions options;
  options.roots = {dir.path(), dir / "missing"};
  const toolmux::Problems problems = toolmux::register_filesystem_tools(registry, options);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].message.find("does not exist") != std::string::npos);
  CHECK(registry.tools().empty());

  // Registering twice names the clash and adds nothing more.
  ToolRegistry twice;
  options.roots = {dir.path()};
  REQUIRE(toolmux::register_filesystem_tools(twice, options).empty());
  const toolmux::Problems again = toolmux::register_filesystem_tools(twice, options);
  CHECK_FALSE(again.empty());
  CHECK(twice.tools().size() == 5);
}

TEST_CASE("read_text_file returns lines as stored", "[filesystem_tools][read_text_file]") {
  TempDir dir;
  write_file(dir / "notes/a.txt", "alpha\nbeta\ngamma\ndelta\n");
  write_file(dir / "no-newline.txt", "one\ntwo");
  write_file(dir / "empty.txt", "");
  Tools tools({dir.path()});

  CHECK(ok_text(tools.call("read_text_file", {{"path", "notes/a.txt"}})) ==
        "alpha\nbeta\ngamma\ndelta\n");
  CHECK(ok_text(tools.call("read_text_file",
                           {{"path", "notes/a.txt"}, {"start_line", 2}, {"end_line", 3}})) ==
        "beta\ngamma\n[toolmux: showing lines 2-3 of 4; call again with start_line=4 to continue]");
  CHECK(ok_text(tools.call("read_text_file", {{"path", "notes/a.txt"}, {"start_line", 3}})) ==
        "gamma\ndelta\n");
  CHECK(ok_text(tools.call("read_text_file", {{"path", "notes/a.txt"}, {"end_line", 99}})) ==
        "alpha\nbeta\ngamma\ndelta\n");
  CHECK(ok_text(tools.call("read_text_file", {{"path", "no-newline.txt"}, {"start_line", 2}})) ==
        "two");
  CHECK(ok_text(tools.call("read_text_file",
                           {{"path", (dir / "notes/a.txt").string()}, {"end_line", 1}})) ==
        "alpha\n[toolmux: showing lines 1-1 of 4; call again with start_line=2 to continue]");
  CHECK(ok_text(tools.call("read_text_file", {{"path", "empty.txt"}})) ==
        "[toolmux: \"empty.txt\" is empty]");

  CHECK(error_text(tools.call("read_text_file", {{"path", "notes/a.txt"}, {"start_line", 5}})) ==
        "start_line 5 is past the end of \"notes/a.txt\", which has 4 lines");
  CHECK(error_text(tools.call("read_text_file",
                              {{"path", "notes/a.txt"}, {"start_line", 3}, {"end_line", 2}})) ==
        "end_line (2) is before start_line (3)");
  CHECK(error_text(tools.call("read_text_file", {{"path", "missing.txt"}})) ==
        "\"missing.txt\" does not exist");
  CHECK(error_text(tools.call("read_text_file", {{"path", "notes"}})) ==
        "\"notes\" is a directory, not a file");
}

TEST_CASE("a path that ends in / names a folder: a file there is refused",
          "[filesystem_tools][read_text_file]") {
  // "a.txt/" read the regular file a.txt.
  TempDir dir;
  write_file(dir / "a.txt", "x\n");
  std::filesystem::create_directory(dir.path() / "sub");
  write_file(dir / "sub" / "b.txt", "y\n");
  Tools tools({dir.path()});
  CHECK(error_text(tools.call("read_text_file", {{"path", "a.txt/"}})) ==
        "\"a.txt/\" is not a folder (a path that ends in \"/\" names a folder)");
  CHECK(error_text(tools.call("get_file_info", {{"path", "a.txt/"}})) ==
        "\"a.txt/\" is not a folder (a path that ends in \"/\" names a folder)");
  CHECK(ok_text(tools.call("list_directory", {{"path", "sub/"}})) == "b.txt");
  Tools writer({dir.path()}, true);
  CHECK(error_text(writer.call("write_text_file", {{"path", "new.txt/"}, {"content", "z"}})) ==
        "path \"new.txt/\" ends in \"/\", so it names a folder, not a file to write");
  CHECK_FALSE(std::filesystem::exists(dir.path() / "new.txt"));
  CHECK(ok_text(tools.call("read_text_file", {{"path", "a.txt"}})) == "x\n");
}

TEST_CASE("read_text_file pages long files with a continue marker",
          "[filesystem_tools][read_text_file]") {
  TempDir dir;
  write_file(dir / "long.txt", numbered_lines(5000));
  Tools tools({dir.path()});

  const std::string first = ok_text(tools.call("read_text_file", {{"path", "long.txt"}}));
  CHECK(first.rfind("line 1\nline 2\n", 0) == 0);
  CHECK(first.find("line 2000\n[toolmux: showing lines 1-2000 of 5000; call again with "
                   "start_line=2001 to continue]") != std::string::npos);
  CHECK(first.find("line 2001\n") == std::string::npos);

  const std::string last =
      ok_text(tools.call("read_text_file", {{"path", "long.txt"}, {"start_line", 4001}}));
  CHECK(last.rfind("line 4001\n", 0) == 0);
  CHECK(last.size() >= 11);
  CHECK(last.substr(last.size() - 10) == "line 5000\n");
  CHECK(last.find("[toolmux:") == std::string::npos);
}

TEST_CASE("read_text_file stops at 256 KiB per call", "[filesystem_tools][read_text_file]") {
  TempDir dir;
  const std::string line(1023, 'x');
  std::string content;
  for (int i = 0; i < 300; ++i) content += line + "\n";  // 300 KiB in 300 lines
  write_file(dir / "wide.txt", content);
  write_file(dir / "one-line.txt", std::string(300 * 1024, 'y'));
  Tools tools({dir.path()});

  const std::string text = ok_text(tools.call("read_text_file", {{"path", "wide.txt"}}));
  CHECK(text.find(
            "[toolmux: showing lines 1-256 of 300; call again with start_line=257 to continue]") !=
        std::string::npos);
  CHECK(text.size() <= 256 * 1024 + 200);

  const std::string cut = ok_text(tools.call("read_text_file", {{"path", "one-line.txt"}}));
  CHECK(cut.substr(cut.find('\n')) == "\n[toolmux: line 1 is longer than 256 KiB and was cut]");
}

TEST_CASE("read_text_file refuses binary, non-UTF-8 and escaping paths",
          "[filesystem_tools][read_text_file]") {
  TempDir dir;
  fs::create_directory(dir / "root");
  write_file(dir / "root/latin1.txt", "caf\xE9\n");
  write_file(dir / "root/nul.bin", std::string("ab\0cd", 5));
  write_file(dir / "root/utf8.txt", "caf\xC3\xA9 \xF0\x9F\x98\x80\n");
  write_file(dir / "secret.txt", "secret\n");
  fs::create_symlink("../secret.txt", dir / "root/link");
  REQUIRE(::mkfifo((dir / "root/fifo").c_str(), 0644) == 0);
  Tools tools({dir / "root"});

  CHECK(error_text(tools.call("read_text_file", {{"path", "latin1.txt"}})) ==
        "path \"latin1.txt\" is not a UTF-8 text file");
  CHECK(error_text(tools.call("read_text_file", {{"path", "nul.bin"}})) ==
        "path \"nul.bin\" is not a UTF-8 text file");
  CHECK(ok_text(tools.call("read_text_file", {{"path", "utf8.txt"}})) ==
        "caf\xC3\xA9 \xF0\x9F\x98\x80\n");
  CHECK(error_text(tools.call("read_text_file", {{"path", "../secret.txt"}})) ==
        "path \"../secret.txt\" is outside the allowed roots");
  CHECK(error_text(tools.call("read_text_file", {{"path", (dir / "secret.txt").string()}})) ==
        "path \"" + (dir / "secret.txt").string() + "\" is outside the allowed roots");
  CHECK(error_text(tools.call("read_text_file", {{"path", "link"}})) ==
        "path \"link\" points outside the allowed roots");
  CHECK(error_text(tools.call("read_text_file", {{"path", "fifo"}})) ==
        "\"fifo\" is not a regular file or directory");
  CHECK(error_text(tools.call("read_text_file", {{"path", std::string("a\0b", 3)}})) ==
        "path \"a\\u0000b\" contains a NUL byte");
}

TEST_CASE("list_directory sorts by name and marks folders and links",
          "[filesystem_tools][list_directory]") {
  TempDir dir;
  write_file(dir / "b.txt", "12345");
  write_file(dir / "a.txt", "");
  write_file(dir / "B-upper.txt", "x");
  fs::create_directory(dir / "sub");
  fs::create_symlink("a.txt", dir / "link");
  fs::create_symlink("/etc/passwd", dir / "outlink");
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0644) == 0);
  Tools tools({dir.path()});

  const ToolResult result = tools.call("list_directory", json::object());
  CHECK(ok_text(result) == "B-upper.txt\na.txt\nb.txt\nfifo\nlink@\noutlink@\nsub/");
  CHECK(result.structured_content ==
        json{{"path", "."},
             {"entries",
              {{{"name", "B-upper.txt"}, {"type", "file"}, {"size", 1}},
               {{"name", "a.txt"}, {"type", "file"}, {"size", 0}},
               {{"name", "b.txt"}, {"type", "file"}, {"size", 5}},
               {{"name", "fifo"}, {"type", "other"}},
               {{"name", "link"}, {"type", "symlink"}},
               {{"name", "outlink"}, {"type", "symlink"}},
               {{"name", "sub"}, {"type", "directory"}}}}});

  const ToolResult empty = tools.call("list_directory", {{"path", "sub"}});
  CHECK(ok_text(empty) == "[toolmux: \"sub\" is an empty folder]");
  CHECK(empty.structured_content == json{{"path", "sub"}, {"entries", json::array()}});
  CHECK(error_text(tools.call("list_directory", {{"path", "b.txt"}})) ==
        "\"b.txt\" is a file, not a directory");
  CHECK(error_text(tools.call("list_directory", {{"path", "../"}})) ==
        "path \"../\" is outside the allowed roots");
}

TEST_CASE("list_directory caps at 10000 entries", "[filesystem_tools][list_directory]") {
  TempDir dir;
  for (int i = 0; i < 10005; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "f%05d", i);
    std::ofstream(dir.path() / name).put('x');
  }
  Tools tools({dir.path()});
  const ToolResult result = tools.call("list_directory", {{"path", "."}});
  const std::string text = ok_text(result);
  CHECK(text.substr(text.rfind('\n') + 1) == "[toolmux: showing the first 10000 of 10005 entries]");
  CHECK(result.structured_content["entries"].size() == 10000);
  CHECK(result.structured_content["entries"].back()["name"] == "f09999");
}

TEST_CASE("with several roots, '.' lists them and paths start with their names",
          "[filesystem_tools]") {
  TempDir dir;
  write_file(dir / "x/app/main.c", "int main() { return 0; }\n");
  write_file(dir / "y/app/lib.c", "int lib() { return 0; }\n");
  write_file(dir / "docs/readme.md", "main docs\n");
  Tools tools({dir / "x/app", dir / "y/app", dir / "docs"});

  const ToolResult roots = tools.call("list_directory", json::object());
  CHECK(ok_text(roots) == "app/\napp-2/\ndocs/");
  CHECK(roots.structured_content["path"] == ".");
  CHECK(ok_text(tools.call("list_directory", {{"path", "app-2"}})) == "lib.c");
  CHECK(ok_text(tools.call("read_text_file", {{"path", "docs/readme.md"}})) == "main docs\n");
  CHECK(ok_text(tools.call("find_files", {{"pattern", "*/*.c"}})) == "app-2/lib.c\napp/main.c");
  CHECK(ok_text(tools.call("find_files", {{"pattern", "*.c"}, {"path", "app"}})) == "app/main.c");
  CHECK(ok_text(tools.call("search_file_contents", {{"query", "main"}})) ==
        "app/main.c:1: int main() { return 0; }\ndocs/readme.md:1: main docs");
  CHECK(error_text(tools.call("get_file_info", {{"path", "."}})) ==
        "\".\" is the list of roots, not a file or folder; the roots are \"app\", \"app-2\", "
        "\"docs\"");
  CHECK(tools.registry.find("read_text_file")->spec.description.find("app, app-2, docs") !=
        std::string::npos);
}

TEST_CASE("find_files matches globs with ** against paths below the folder",
          "[filesystem_tools][find_files]") {
  TempDir dir;
  write_file(dir / "README.md", "");
  write_file(dir / "src/main.cpp", "");
  write_file(dir / "src/util/strings.cpp", "");
  write_file(dir / "src/util/strings.h", "");
  write_file(dir / "docs/guide.md", "");
  write_file(dir / "docs/a/b/c/deep.md", "");
  write_file(dir / "outside/hidden.md", "");
  fs::create_directory_symlink(dir / "outside", dir / "docs/linked");
  fs::create_symlink("../README.md", dir / "docs/readme-link.md");
  Tools tools({dir.path()});

  CHECK(ok_text(tools.call("find_files", {{"pattern", "**/*.cpp"}})) ==
        "src/main.cpp\nsrc/util/strings.cpp");
  CHECK(ok_text(tools.call("find_files", {{"pattern", "*.md"}})) == "README.md");
  CHECK(ok_text(tools.call("find_files", {{"pattern", "**/*.md"}})) ==
        "README.md\ndocs/a/b/c/deep.md\ndocs/guide.md\ndocs/readme-link.md\noutside/hidden.md");
  // Relative to the search folder for matching, relative to the root in results;
  // the symlinked folder "linked" is not followed.
  CHECK(ok_text(tools.call("find_files", {{"pattern", "**/*.md"}, {"path", "docs"}})) ==
        "docs/a/b/c/deep.md\ndocs/guide.md\ndocs/readme-link.md");
  CHECK(ok_text(tools.call("find_files", {{"pattern", "a/**/deep.md"}, {"path", "docs"}})) ==
        "docs/a/b/c/deep.md");
  CHECK(ok_text(tools.call("find_files", {{"pattern", "src/*/strings.[ch]"}})) ==
        "src/util/strings.h");
  CHECK(ok_text(tools.call("find_files", {{"pattern", "src/?ain.cpp"}})) == "src/main.cpp");
  CHECK(ok_text(tools.call("find_files", {{"pattern", "**/linked"}})) == "docs/linked");
  CHECK(ok_text(tools.call("find_files", {{"pattern", "*.rs"}})) == "No files match \"*.rs\".");
  CHECK(error_text(tools.call("find_files", {{"pattern", "*"}, {"path", "../"}})) ==
        "path \"../\" is outside the allowed roots");
}

TEST_CASE("find_files stops at max_results and says so", "[filesystem_tools][find_files]") {
  TempDir dir;
  for (int i = 0; i < 30; ++i)
    write_file(dir / ("d" + std::to_string(i % 3)) / ("f" + std::to_string(i) + ".txt"), "");
  Tools tools({dir.path()});

  const std::string text =
      ok_text(tools.call("find_files", {{"pattern", "**/*.txt"}, {"max_results", 10}}));
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 11);
  CHECK(std::is_sorted(lines.begin(), lines.end() - 1));
  CHECK(lines.back() ==
        "[toolmux: stopped at 10 results; there are more. Narrow the pattern or path, or raise "
        "max_results (at most 1000)]");
  // The same call gives the same answer.
  CHECK(ok_text(tools.call("find_files", {{"pattern", "**/*.txt"}, {"max_results", 10}})) == text);
}

TEST_CASE("a glob or query over 1024 characters is refused with the limit named",
          "[filesystem_tools][find_files][search]") {
  TempDir dir;
  write_file(dir / "a.txt", "hello\n");
  Tools tools({dir.path()});
  const std::string at_limit = "*" + std::string(1022, 'x') + "*";  // 1024 characters
  const std::string over = at_limit + "*";
  // At the limit: accepted (and matching nothing here).
  CHECK_FALSE(tools.call("find_files", {{"pattern", at_limit}}).is_error);
  // Over it: the schema refuses the call before the tool runs, naming the limit.
  struct Case {
    const char* tool;
    json arguments;
    const char* pointer;
  };
  const std::vector<Case> cases = {
      {"find_files", {{"pattern", over}}, "/pattern"},
      {"search_file_contents", {{"query", over}}, "/query"},
      {"search_file_contents", {{"query", "x"}, {"file_pattern", over}}, "/file_pattern"},
  };
  for (const Case& c : cases) {
    INFO(c.tool << " " << c.pointer);
    const toolmux::RegisteredTool* tool = tools.registry.find(c.tool);
    REQUIRE(tool != nullptr);
    const toolmux::ArgumentCheck check = toolmux::check_arguments(*tool, c.arguments.dump());
    REQUIRE_FALSE(check.ok());
    const std::string message = check.message(c.tool);
    INFO(message);
    CHECK(message.find(c.pointer) != std::string::npos);
    CHECK(message.find("1024") != std::string::npos);
    // The tool itself refuses it too, for a caller that skips the schema.
    const ToolResult result = tool->handler(c.arguments, tools.context);
    CHECK(result.is_error);
    CHECK(text_of(result) ==
          std::string(c.pointer + 1) + " is 1025 characters long; at most 1024 are allowed");
  }
  // Characters, not bytes: 1024 two-byte characters are within the limit.
  std::string accents;
  for (int i = 0; i < 1024; ++i) accents += "\xC3\xA9";
  CHECK_FALSE(tools.call("search_file_contents", {{"query", accents}}).is_error);
}

TEST_CASE("find_files returns early when the call is cancelled", "[filesystem_tools][find_files]") {
  TempDir dir;
  write_file(dir / "a/b.txt", "");
  Tools tools({dir.path()});
  tools.context.cancel = true;
  CHECK(error_text(tools.call("find_files", {{"pattern", "**"}})) == "find_files was cancelled");
}

TEST_CASE("search_file_contents finds literal text", "[filesystem_tools][search]") {
  TempDir dir;
  write_file(dir / "b.txt", "nothing here\nHello world\nhello again\n");
  write_file(dir / "a/z.txt", "say hello\r\n");
  write_file(dir / "a/image.bin", std::string("hello\0\x01", 7));
  write_file(dir / "latin1.txt", "hello caf\xE9\n");
  fs::create_symlink("b.txt", dir / "link.txt");
  write_file(dir / "long.txt", "hello " + std::string(400, 'x') + "\n");
  Tools tools({dir.path()});

  CHECK(ok_text(tools.call("search_file_contents",
                           {{"query", "hello"}, {"file_pattern", "*.txt"}, {"path", "a"}})) ==
        "a/z.txt:1: say hello");
  const std::string text = ok_text(tools.call("search_file_contents", {{"query", "hello"}}));
  CHECK(text ==
        "a/z.txt:1: say hello\n"
        "b.txt:3: hello again\n"
        "long.txt:1: hello " +
            std::string(294, 'x') +
            "\xE2\x80\xA6\n"
            "[toolmux: skipped 2 files that are not UTF-8 text and 1 symbolic link]");
  CHECK(ok_text(tools.call("search_file_contents",
                           {{"query", "HELLO"}, {"case_sensitive", false}, {"path", "b.txt"}})) ==
        "b.txt:2: Hello world\nb.txt:3: hello again");
  CHECK(ok_text(tools.call("search_file_contents", {{"query", "a.b"}})) ==
        "No matches for \"a.b\".\n"
        "[toolmux: skipped 2 files that are not UTF-8 text and 1 symbolic link]");
  CHECK(ok_text(tools.call("search_file_contents", {{"query", "zzz"}, {"path", "b.txt"}})) ==
        "No matches for \"zzz\".");
}

TEST_CASE("search_file_contents: a regex's matching is bounded on every line",
          "[filesystem_tools][search]") {
  TempDir dir;
  // 16 KiB of 'é' (2 bytes each) then 'b': the 16 KiB window cuts inside
  // characters unless it backs off to a boundary.
  std::string line;
  for (int i = 0; i < 9000; ++i) line += "\xC3\xA9";
  write_file(dir / "long.txt", std::string(3000, 'a') + "b\n" + line + "b\nok\n");
  Tools tools({dir.path()});
  const std::string text = ok_text(tools.call(
      "search_file_contents", {{"query", "^(a+)+$|^(\xC3\xA9|e)*ok$"}, {"regex", true}}));
  CHECK(text.rfind("long.txt:3: ok\n", 0) == 0);
  CHECK(text.find("2 lines could not be checked: the regex needed more than the matching limit "
                  "(100000 steps a line)") != std::string::npos);
  CHECK(text.find("1 line is longer than 16 KiB") != std::string::npos);
}

TEST_CASE("search_file_contents takes regular expressions", "[filesystem_tools][search]") {
  TempDir dir;
  write_file(dir / "code.c", "int x = 42;\nint y;\nreturn x + 7;\nINT z = 1;\n");
  Tools tools({dir.path()});

  CHECK(ok_text(tools.call("search_file_contents", {{"query", "^int [a-z]+ = \\d+;$"},
                                                    {"regex", true}})) == "code.c:1: int x = 42;");
  CHECK(ok_text(tools.call("search_file_contents",
                           {{"query", "^int\\b"}, {"regex", true}, {"case_sensitive", false}})) ==
        "code.c:1: int x = 42;\ncode.c:2: int y;\ncode.c:4: INT z = 1;");
  CHECK(ok_text(tools.call("search_file_contents",
                           {{"query", "x|z"}, {"regex", true}, {"max_results", 2}})) ==
        "code.c:1: int x = 42;\ncode.c:3: return x + 7;\n"
        "[toolmux: stopped at 2 matches; there are more. Narrow the query, path or file_pattern, "
        "or raise max_results (at most 1000)]");
  // Literal mode does not treat the query as a pattern.
  CHECK(ok_text(tools.call("search_file_contents", {{"query", "x + 7"}})) ==
        "code.c:3: return x + 7;");
  CHECK(error_text(tools.call("search_file_contents", {{"query", "(unclosed"}, {"regex", true}})) ==
        "invalid regex \"(unclosed\": missing closing parenthesis at offset 9");
  CHECK(error_text(tools.call("search_file_contents", {{"query", "a[b"}, {"regex", true}}))
            .rfind("invalid regex \"a[b\": ", 0) == 0);
}

TEST_CASE("search_file_contents bounds the regex engine on very long lines",
          "[filesystem_tools][search]") {
  TempDir dir;
  write_file(dir / "minified.js", std::string(100000, 'a') + "z\nshort az\n");
  Tools tools({dir.path()});
  CHECK(ok_text(tools.call("search_file_contents", {{"query", "a.*z"}, {"regex", true}})) ==
        "minified.js:2: short az\n"
        "[toolmux: 1 line is longer than 16 KiB; the regex saw only its first 16 KiB]");
  // Literal search has no such limit.
  CHECK(ok_text(tools.call("search_file_contents", {{"query", "az"}}))
            .rfind("minified.js:1: aaa", 0) == 0);
}

TEST_CASE("globs support classes, negation and escapes", "[filesystem_tools][find_files]") {
  TempDir dir;
  for (const char* name : {"a1.txt", "b2.txt", "c3.txt", "star*.txt", "x.TXT"}) {
    write_file(dir / name, "");
  }
  Tools tools({dir.path()});
  CHECK(ok_text(tools.call("find_files", {{"pattern", "[a-b]?.txt"}})) == "a1.txt\nb2.txt");
  CHECK(ok_text(tools.call("find_files", {{"pattern", "[!a-b]*.txt"}})) == "c3.txt\nstar*.txt");
  CHECK(ok_text(tools.call("find_files", {{"pattern", "star\\*.txt"}})) == "star*.txt");
  CHECK(ok_text(tools.call("find_files", {{"pattern", "*.txt"}, {"path", "."}})) ==
        "a1.txt\nb2.txt\nc3.txt\nstar*.txt");
  CHECK(ok_text(tools.call("find_files", {{"pattern", "**"}})) ==
        "a1.txt\nb2.txt\nc3.txt\nstar*.txt\nx.TXT");
}

TEST_CASE("search_file_contents reports progress and skips big files",
          "[filesystem_tools][search]") {
  TempDir dir;
  for (int i = 0; i < 450; ++i)
    write_file(dir / "many" / ("f" + std::to_string(i) + ".txt"), "x\n");
  write_file(dir / "big.txt", std::string(9 * 1024 * 1024, 'x'));
  Tools tools({dir.path()});

  CHECK(ok_text(tools.call("search_file_contents", {{"query", "needle"}})) ==
        "No matches for \"needle\".\n[toolmux: skipped 1 file over 8 MiB]");
  std::vector<double> progress_values;
  for (const auto& report : tools.context.progress()) progress_values.push_back(report.progress);
  CHECK(progress_values == std::vector<double>{200, 400});
  CHECK(tools.context.progress().front().message == "scanned 200 files");
}

TEST_CASE("get_file_info describes a file, a folder and a link itself",
          "[filesystem_tools][get_file_info]") {
  TempDir dir;
  write_file(dir / "data.txt", "0123456789");
  ::chmod((dir / "data.txt").c_str(), 0640);
  const struct timespec times[2] = {{1767323045, 0}, {1767323045, 0}};  // 2026-01-02T03:04:05Z
  REQUIRE(::utimensat(AT_FDCWD, (dir / "data.txt").c_str(), times, 0) == 0);
  fs::create_directory(dir / "sub");
  ::chmod((dir / "sub").c_str(), 0755);
  fs::create_symlink("/etc/passwd", dir / "link");
  REQUIRE(::utimensat(AT_FDCWD, (dir / "link").c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
  Tools tools({dir.path()});

  const ToolResult file = tools.call("get_file_info", {{"path", "data.txt"}});
  CHECK(ok_text(file) ==
        "path: data.txt\ntype: file\nsize: 10\nmode: 0640\nmodified: 2026-01-02T03:04:05Z");
  CHECK(file.structured_content == json{{"path", "data.txt"},
                                        {"type", "file"},
                                        {"size", 10},
                                        {"mode", "0640"},
                                        {"modified", "2026-01-02T03:04:05Z"}});
  const ToolResult folder = tools.call("get_file_info", {{"path", "sub"}});
  CHECK(folder.structured_content["type"] == "directory");
  CHECK(folder.structured_content["mode"] == "0755");
  CHECK_FALSE(folder.structured_content.contains("size"));
  const ToolResult link = tools.call("get_file_info", {{"path", "link"}});
  CHECK(link.structured_content["type"] == "symlink");
  CHECK(link.structured_content["modified"] == "2026-01-02T03:04:05Z");
  CHECK(ok_text(link).find("passwd") == std::string::npos);
  CHECK(tools.call("get_file_info", {{"path", "."}}).structured_content["path"] == ".");
  CHECK(error_text(tools.call("get_file_info", {{"path", "nope"}})) == "\"nope\" does not exist");
  CHECK(error_text(tools.call("get_file_info", {{"path", "link/x"}})) ==
        "path \"link/x\" points outside the allowed roots");
}

TEST_CASE("write_text_file writes atomically beneath the root",
          "[filesystem_tools][write_text_file]") {
  TempDir dir;
  fs::create_directory(dir / "root");
  write_file(dir / "root/existing.txt", "old content");
  ::chmod((dir / "root/existing.txt").c_str(), 0600);
  Tools tools({dir / "root"}, /*allow_writes=*/true);

  CHECK(ok_text(tools.call("write_text_file", {{"path", "new.txt"}, {"content", "hello\n"}})) ==
        "Wrote 6 bytes to \"new.txt\".");
  CHECK(read_file(dir / "root/new.txt") == "hello\n");

  CHECK(ok_text(tools.call("write_text_file",
                           {{"path", "existing.txt"}, {"content", "caf\xC3\xA9"}})) ==
        "Wrote 5 bytes to \"existing.txt\".");
  CHECK(read_file(dir / "root/existing.txt") == "caf\xC3\xA9");
  CHECK((fs::status(dir / "root/existing.txt").permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write));

  CHECK(error_text(tools.call("write_text_file", {{"path", "a/b/c.txt"}, {"content", "x"}})) ==
        "folder \"a/b\" does not exist (set create_directories to true to create it)");
  CHECK(ok_text(
            tools.call("write_text_file",
                       {{"path", "a/b/c.txt"}, {"content", "x"}, {"create_directories", true}})) ==
        "Wrote 1 bytes to \"a/b/c.txt\".");
  CHECK(read_file(dir / "root/a/b/c.txt") == "x");

  // Absolute paths inside the root are reported relative to it.
  CHECK(ok_text(tools.call("write_text_file",
                           {{"path", (dir / "root/abs.txt").string()}, {"content", ""}})) ==
        "Wrote 0 bytes to \"abs.txt\".");

  // No temporary files are left behind.
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir / "root"))
    names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"a", "abs.txt", "existing.txt", "new.txt"});
}

TEST_CASE("write_text_file refuses symlinks, folders, special files and escapes",
          "[filesystem_tools][write_text_file]") {
  TempDir dir;
  fs::create_directory(dir / "root");
  write_file(dir / "root/target.txt", "keep");
  write_file(dir / "outside.txt", "outside");
  fs::create_symlink("target.txt", dir / "root/link.txt");
  fs::create_symlink(dir / "outside.txt", dir / "root/out-link.txt");
  fs::create_directory_symlink(dir.path(), dir / "root/up");
  fs::create_directory(dir / "root/folder");
  REQUIRE(::mkfifo((dir / "root/fifo").c_str(), 0644) == 0);
  Tools tools({dir / "root"}, /*allow_writes=*/true);

  CHECK(error_text(tools.call("write_text_file", {{"path", "link.txt"}, {"content", "x"}})) ==
        "refusing to write through the symbolic link \"link.txt\"; write to the file it points to "
        "instead");
  CHECK(error_text(tools.call("write_text_file", {{"path", "out-link.txt"}, {"content", "x"}})) ==
        "refusing to write through the symbolic link \"out-link.txt\"; write to the file it points "
        "to instead");
  CHECK(read_file(dir / "root/target.txt") == "keep");
  CHECK(read_file(dir / "outside.txt") == "outside");
  CHECK(fs::is_symlink(dir / "root/link.txt"));

  CHECK(error_text(tools.call("write_text_file", {{"path", "up/outside.txt"}, {"content", "x"}})) ==
        "path \"up\" points outside the allowed roots");
  CHECK(error_text(tools.call("write_text_file", {{"path", "../outside.txt"}, {"content", "x"}})) ==
        "path \"../outside.txt\" is outside the allowed roots");
  CHECK(error_text(tools.call(
            "write_text_file",
            {{"path", "up/new/x.txt"}, {"content", "x"}, {"create_directories", true}})) ==
        "path \"up/new\" points outside the allowed roots");
  CHECK_FALSE(fs::exists(dir / "new"));
  CHECK(read_file(dir / "outside.txt") == "outside");

  CHECK(error_text(tools.call("write_text_file", {{"path", "folder"}, {"content", "x"}})) ==
        "\"folder\" is a directory, not a file");
  CHECK(error_text(tools.call("write_text_file", {{"path", "fifo"}, {"content", "x"}})) ==
        "\"fifo\" is not a regular file or directory");
  CHECK(error_text(tools.call("write_text_file", {{"path", "."}, {"content", "x"}})) ==
        "path \".\" is a root folder, not a file");
}
