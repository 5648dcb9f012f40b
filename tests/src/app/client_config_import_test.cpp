#include "src/app/client_config_import.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "src/assembly/tool_catalog.h"
#include "tests/support/temp_dir.h"

using nlohmann::json;
using toolmux::ClientConfigImport;
using toolmux::ClientFormat;
using toolmux::import_client_config;
using toolmux::testing::read_file;
using toolmux::testing::TempDir;

namespace {

const std::string kData = TOOLMUX_TEST_DATA "/import/";

ClientConfigImport import_file(const std::string& name,
                               std::optional<ClientFormat> format = std::nullopt) {
  return import_client_config(read_file(kData + name), format);
}

std::vector<std::string> names_of(const std::vector<toolmux::LeftOutServer>& servers) {
  std::vector<std::string> names;
  names.reserve(servers.size());
  for (const auto& server : servers) names.push_back(server.name);
  return names;
}

std::vector<std::string> variables_of(const ClientConfigImport& imported) {
  std::vector<std::string> names;
  names.reserve(imported.variables.size());
  for (const auto& variable : imported.variables) names.push_back(variable.name);
  return names;
}

std::string reason_of(const std::vector<toolmux::LeftOutServer>& servers, const std::string& name) {
  for (const auto& server : servers) {
    if (server.name == name) return server.reason;
  }
  return "";
}

// The imported catalog as `toolmux check` would see it, with `variables` set.
toolmux::Problems check_catalog(const json& catalog, const std::vector<std::string>& variables) {
  TempDir dir;
  for (const std::string& name : variables) ::setenv(name.c_str(), "value-for-the-check", 1);
  toolmux::ServeOptions options;
  options.catalog_file = dir.write("catalog.json", catalog.dump(2));
  options.roots = {dir.path()};
  toolmux::Problems problems;
  const auto built = toolmux::build_catalog(options, nullptr, problems);
  for (const std::string& name : variables) ::unsetenv(name.c_str());
  if (!built && problems.empty()) problems.push_back({"", "no catalog"});
  return problems;
}

}  // namespace

TEST_CASE("import: Claude Desktop's file, with a disabled server and secrets in env", "[import]") {
  const ClientConfigImport imported = import_file("claude_desktop_config.json");
  REQUIRE(imported.problems.empty());
  CHECK(imported.format == ClientFormat::claude);
  CHECK(imported.upstreams ==
        json::parse(read_file(kData + "claude_desktop_config.upstreams.json")));
  CHECK(imported.imported == std::vector<std::string>{"filesystem", "github", "memory"});
  CHECK(names_of(imported.disabled) == std::vector<std::string>{"old notes"});
  CHECK(imported.unsupported.empty());
  CHECK(variables_of(imported) ==
        std::vector<std::string>{"TOOLMUX_GITHUB_GITHUB_PERSONAL_ACCESS_TOKEN",
                                 "TOOLMUX_MEMORY_MEMORY_FILE_PATH"});
  CHECK(imported.variables[0].source == "/mcpServers/github/env/GITHUB_PERSONAL_ACCESS_TOKEN");
  CHECK_FALSE(imported.variables[0].already_referenced);
  // No value of env reaches the catalog, not even one that looks harmless.
  const std::string catalog = toolmux::imported_catalog(imported, "").dump();
  for (const char* value : {"ghp_example", "notes-secret-value", "/Users/me/memory.jsonl"}) {
    INFO(value);
    CHECK(catalog.find(value) == std::string::npos);
  }
}

TEST_CASE("import: Cursor's file, HTTP servers, env references and what is left out", "[import]") {
  const ClientConfigImport imported = import_file("cursor_mcp.json");
  REQUIRE(imported.problems.empty());
  CHECK(imported.format == ClientFormat::cursor);
  CHECK(imported.upstreams == json::parse(read_file(kData + "cursor_mcp.upstreams.json")));
  CHECK(names_of(imported.disabled) == std::vector<std::string>{"paused"});
  CHECK(names_of(imported.unsupported) ==
        std::vector<std::string>{"linear", "local-tools", "with-env-file"});
  CHECK_THAT(reason_of(imported.unsupported, "linear"),
             Catch::Contains("\"sse\"") && Catch::Contains("Streamable HTTP only"));
  CHECK(reason_of(imported.unsupported, "local-tools") ==
        "/args/0 holds \"${workspaceFolder}/tools/server.py\", a variable only the client "
        "resolves");
  CHECK_THAT(reason_of(imported.unsupported, "with-env-file"), Catch::Contains("\"envFile\""));
  CHECK(variables_of(imported) == std::vector<std::string>{"TOOLMUX_CONTEXT7_CONTEXT7_API_KEY",
                                                           "DATABASE_URL", "TICKETS_TOKEN"});
  CHECK_FALSE(imported.variables[0].already_referenced);
  CHECK(imported.variables[1].already_referenced);
  CHECK(imported.variables[2].source == "/mcpServers/tickets/headers/Authorization");
  CHECK(toolmux::imported_catalog(imported, "").dump().find("ctx7-secret-value") ==
        std::string::npos);
}

TEST_CASE("import: VS Code's file, read as JSON with comments and trailing commas", "[import]") {
  const ClientConfigImport imported = import_file("vscode_mcp.json");
  REQUIRE(imported.problems.empty());
  CHECK(imported.format == ClientFormat::vscode);
  CHECK(imported.upstreams == json::parse(read_file(kData + "vscode_mcp.upstreams.json")));
  CHECK(names_of(imported.unsupported) == std::vector<std::string>{"legacy-sse"});
  CHECK(imported.disabled.empty());
  CHECK(variables_of(imported) ==
        std::vector<std::string>{"TOOLMUX_GITHUB_AUTHORIZATION",
                                 "TOOLMUX_PERPLEXITY_PERPLEXITY_API_KEY"});
  CHECK(imported.variables[1].source == "/servers/perplexity/env/PERPLEXITY_API_KEY");
  CHECK(imported.variables[1].input == "Perplexity API Key");  // its "${input:perplexity-key}"
  CHECK(imported.variables[0].input.empty());
  CHECK(imported.notes == std::vector<std::string>{"\"playwright\": ignored its field \"dev\""});
  CHECK(toolmux::imported_catalog(imported, "").dump().find("github-token-value") ==
        std::string::npos);
}

TEST_CASE("import: --format names the format, and VS Code's comments are refused in the others",
          "[import]") {
  CHECK(import_file("claude_desktop_config.json", ClientFormat::cursor).format ==
        ClientFormat::cursor);
  const ClientConfigImport as_claude = import_file("vscode_mcp.json", ClientFormat::claude);
  REQUIRE(as_claude.problems.size() == 1);
  CHECK_THAT(as_claude.problems[0].message, Catch::StartsWith("not JSON"));
  const ClientConfigImport vscode_as_cursor =
      import_client_config(R"({"servers": {"a": {"command": "x"}}})", ClientFormat::cursor);
  REQUIRE(vscode_as_cursor.problems.size() == 1);
  CHECK(vscode_as_cursor.problems[0].message ==
        "no \"mcpServers\" object: Cursor's configuration (mcp.json) lists its servers there");
}

TEST_CASE("import: every catalog it writes passes toolmux check once its variables are set",
          "[import]") {
  for (const char* file : {"claude_desktop_config.json", "cursor_mcp.json", "vscode_mcp.json"}) {
    INFO(file);
    const ClientConfigImport imported = import_file(file);
    REQUIRE(imported.problems.empty());
    const json catalog = json::parse(
        toolmux::imported_catalog(imported, "../../../schema/catalog.schema.json").dump());
    CHECK(catalog["$schema"] == "../../../schema/catalog.schema.json");
    const auto problems = check_catalog(catalog, variables_of(imported));
    INFO(toolmux::format_problems(problems));
    CHECK(problems.empty());
  }
}

TEST_CASE(
    "import: an entry of the wrong shape is a problem at its pointer, and nothing is imported",
    "[import]") {
  const ClientConfigImport imported = import_file("wrong_shapes.json");
  CHECK(imported.upstreams.empty());
  CHECK(imported.imported.empty());
  CHECK(toolmux::format_problems(imported.problems) ==
        "  /mcpServers/args-not-strings/args/1: an argument must be a string\n"
        "  /mcpServers/both: a server has \"command\" or \"url\", not both\n"
        "  /mcpServers/env-not-object/env: \"env\" must be an object\n"
        "  /mcpServers/neither: a server needs \"command\" (stdio) or \"url\" (HTTP)\n");
}

TEST_CASE("import: text that is not JSON, too deep, too large or without servers", "[import]") {
  const ClientConfigImport not_json = import_file("not_json.json");
  REQUIRE(not_json.problems.size() == 1);
  CHECK_THAT(not_json.problems[0].message, Catch::StartsWith("not JSON"));

  const ClientConfigImport deep = import_file("too_deep.json");
  REQUIRE(deep.problems.size() == 1);
  CHECK_THAT(deep.problems[0].pointer, Catch::StartsWith("/mcpServers/deep/x/0/0/0/"));
  CHECK_THAT(deep.problems[0].message, Catch::Contains("32"));
  CHECK(deep.upstreams.empty());

  const ClientConfigImport large =
      import_client_config(std::string(toolmux::kMaxClientConfigBytes + 1, ' '));
  REQUIRE(large.problems.size() == 1);
  CHECK(large.problems[0].message ==
        "the configuration is larger than 1024 KiB; no client writes one that large");

  const ClientConfigImport none = import_file("no_servers.json");
  REQUIRE(none.problems.size() == 1);
  CHECK(none.problems[0].message ==
        "no \"mcpServers\" object: Claude Desktop's configuration (claude_desktop_config.json) "
        "lists its servers there");

  const ClientConfigImport repeated =
      import_client_config(R"({"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}})");
  REQUIRE(repeated.problems.size() == 1);
  CHECK(repeated.problems[0].pointer == "/mcpServers/a");
}

TEST_CASE("import: names the catalog cannot hold are changed, and said so", "[import]") {
  const ClientConfigImport imported = import_client_config(
      R"({"mcpServers": {"my server": {"command": "a"}, "my-server": {"command": "b"}}})");
  REQUIRE(imported.problems.empty());
  CHECK(imported.upstreams["my-server"]["command"] == "b");
  CHECK(imported.upstreams["my-server-2"]["command"] == "a");
  CHECK(imported.notes == std::vector<std::string>{
                              "\"my server\" is the upstream \"my-server-2\" (an upstream name is "
                              "ASCII letters, digits, '_', '-', '.')"});
}

TEST_CASE("import: JSON with comments becomes JSON of the same length", "[import]") {
  const std::string text =
      "{ // a comment\n \"a\": \"http://x/*y*/\", /* block\n comment */ \"b\": [1, 2,],\n}";
  const std::string plain = toolmux::jsonc_to_json(text);
  CHECK(plain.size() == text.size());
  CHECK(json::parse(plain) == json{{"a", "http://x/*y*/"}, {"b", {1, 2}}});
  CHECK(std::count(plain.begin(), plain.end(), '\n') == std::count(text.begin(), text.end(), '\n'));
  CHECK(toolmux::jsonc_to_json(R"(["a,", "b\"]",])") == R"(["a,", "b\"]" ])");
}

TEST_CASE("import: the client configuration that replaces the servers", "[import]") {
  // As a person would write them: the command before its arguments.
  CHECK(toolmux::toolmux_client_config(ClientFormat::claude, "/usr/bin/toolmux",
                                       {"serve", "--catalog", "/home/me/c.json"})
            .dump() == R"({"mcpServers":{"toolmux":{"command":"/usr/bin/toolmux",)"
                       R"("args":["serve","--catalog","/home/me/c.json"]}}})");
  CHECK(
      toolmux::toolmux_client_config(ClientFormat::vscode, "/usr/bin/toolmux", {"serve"}).dump() ==
      R"({"servers":{"toolmux":{"type":"stdio","command":"/usr/bin/toolmux","args":["serve"]}}})");
}

TEST_CASE("import: run_import writes the catalog once, and --dry-run writes nothing", "[import]") {
  TempDir dir;
  toolmux::ImportOptions options;
  options.input = kData + "claude_desktop_config.json";
  options.out = dir / "catalog.json";
  options.toolmux_path = "/opt/toolmux/bin/toolmux";

  options.dry_run = true;
  std::ostringstream dry;
  std::ostringstream dry_err;
  CHECK(toolmux::run_import(options, dry, dry_err) == 0);
  CHECK_FALSE(std::filesystem::exists(options.out));
  CHECK_THAT(dry.str(), Catch::Contains("The catalog (--dry-run: not written to " +
                                        options.out.string() + "):\n{\n"));

  options.dry_run = false;
  std::ostringstream out;
  std::ostringstream err;
  REQUIRE(toolmux::run_import(options, out, err) == 0);
  CHECK(err.str().empty());
  const json written = json::parse(read_file(options.out));
  CHECK(written["upstreams"].size() == 3);
  const std::string printed = out.str();
  CHECK_THAT(printed, Catch::Contains("3 of 4 servers imported"));
  CHECK_THAT(printed, Catch::Contains("  skipped: old notes (disabled in the client's "
                                      "configuration)\n"));
  CHECK_THAT(printed, Catch::Contains("  TOOLMUX_MEMORY_MEMORY_FILE_PATH  "
                                      "/mcpServers/memory/env/MEMORY_FILE_PATH\n"));
  CHECK_THAT(printed, Catch::Contains("\"command\": \"/opt/toolmux/bin/toolmux\""));
  CHECK_THAT(printed, Catch::Contains("\"" + options.out.string() + "\""));
  for (const std::string& text : {dry.str(), printed}) {
    CHECK(text.find("ghp_example") == std::string::npos);
    CHECK(text.find("/Users/me/memory.jsonl") == std::string::npos);
  }

  std::ostringstream again;
  std::ostringstream again_err;
  CHECK(toolmux::run_import(options, again, again_err) == 1);
  CHECK(again_err.str() == "toolmux: " + options.out.string() +
                               " exists; give --force to replace it, or --out another file\n");
  options.force = true;
  std::ostringstream forced;
  CHECK(toolmux::run_import(options, forced, again_err) == 0);

  options.input = kData + "wrong_shapes.json";
  options.out = dir / "other.json";
  std::ostringstream bad;
  std::ostringstream bad_err;
  CHECK(toolmux::run_import(options, bad, bad_err) == 1);
  CHECK_THAT(bad_err.str(), Catch::Contains(": 4 problems, nothing imported\n"));
  CHECK_FALSE(std::filesystem::exists(options.out));
}

TEST_CASE("import: text from a hostile configuration reaches the terminal escaped", "[import]") {
  TempDir dir;
  toolmux::ImportOptions options;
  options.input = kData + "hostile_names.json";
  // The output path is the user's, but C1 and bidi characters there are
  // escaped too, and the client entry printed stays JSON of the real path.
  options.out = dir / "catalog\xc2\x9b\xe2\x80\xae.json";
  options.toolmux_path = "/opt/toolmux/bin/toolmux";
  std::ostringstream out;
  std::ostringstream err;
  REQUIRE(toolmux::run_import(options, out, err) == 0);
  const std::string printed = out.str();
  INFO(printed);
  for (const std::string_view raw : {"\x1b", "\x07", "\xc2\x9b", "\xe2\x80\xae", "\xe2\x80\xa8"}) {
    CHECK(printed.find(raw) == std::string::npos);
  }
  std::istringstream lines(printed);
  for (std::string line; std::getline(lines, line);) {
    CHECK(line.rfind("ok: ", 0) == std::string::npos);
    CHECK(line.rfind("problem: ", 0) == std::string::npos);
  }
  CHECK_THAT(printed, Catch::Contains("  imported: evil\\u001b[2J\\u001b[H\\nok: forged\n"));
  CHECK_THAT(printed, Catch::Contains("  skipped: bidi\\u202eelif (disabled"));
  CHECK_THAT(printed, Catch::Contains("  not imported: relative\\u2028line: its \"cwd\" "
                                      "\"sub\\u001b[2J\\nproblem: forged\" is relative"));
  CHECK_THAT(printed, Catch::Contains("ignored its field \"extra\\u001b[31m\""));
  CHECK_THAT(printed,
             Catch::Contains("  /mcpServers/evil\\u001b[2J\\u001b[H\\nok: forged/env/TOKEN\n"));
  CHECK(printed.find("value-never-shown") == std::string::npos);

  // The catalog keeps the real text; the client entry printed is JSON of the real path.
  const json written = json::parse(read_file(options.out));
  CHECK(written["upstreams"].size() == 1);
  CHECK(written["upstreams"].begin().value()["args"][1] == "title\x1b]0;owned\x07");
  const std::string heading = "replaces the servers imported:\n";
  const json entry = json::parse(printed.substr(printed.find(heading) + heading.size()));
  CHECK(entry["mcpServers"]["toolmux"]["args"][2] == options.out.string());
}

TEST_CASE("import: a symbolic link planted at the old temporary name is not followed", "[import]") {
  TempDir dir;
  const auto victim = dir.write("victim.txt", "untouched");
  std::filesystem::create_symlink(victim, dir / "toolmux-catalog.json.tmp");
  toolmux::ImportOptions options;
  options.input = kData + "claude_desktop_config.json";
  options.out = dir / "toolmux-catalog.json";
  options.toolmux_path = "/opt/toolmux/bin/toolmux";
  std::ostringstream out;
  std::ostringstream err;
  REQUIRE(toolmux::run_import(options, out, err) == 0);
  CHECK(read_file(victim) == "untouched");
  CHECK_FALSE(std::filesystem::is_symlink(options.out));
  CHECK(json::parse(read_file(options.out))["upstreams"].size() == 3);
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    names.push_back(entry.path().filename());
  }
  std::sort(names.begin(), names.end());
  CHECK(names ==
        std::vector<std::string>{"toolmux-catalog.json", "toolmux-catalog.json.tmp", "victim.txt"});
}
