#include "src/app/first_run.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace {

// The JSON object that starts at the first line after `heading`.
json snippet_after(const std::string& text, const std::string& heading) {
  const auto at = text.find(heading + "\n");
  REQUIRE(at != std::string::npos);
  const auto start = at + heading.size() + 1;
  const auto end = text.find("\n}\n", start);
  REQUIRE(end != std::string::npos);
  return json::parse(text.substr(start, end + 2 - start));
}

}  // namespace

TEST_CASE("first run: the serve arguments a client gives, with absolute paths", "[first_run]") {
  toolmux::ServeOptions options;
  CHECK(toolmux::client_serve_args(options) == std::vector<std::string>{"serve"});
  options.catalog_file = "catalogs/../c.json";
  options.roots = {"/srv/data", "docs"};
  options.data_dir = "/var/lib/toolmux";
  options.allow_writes = true;
  const std::string cwd = std::filesystem::current_path().string();
  CHECK(toolmux::client_serve_args(options) ==
        std::vector<std::string>{"serve", "--catalog", cwd + "/c.json", "--root", "/srv/data",
                                 "--root", cwd + "/docs", "--data-dir", "/var/lib/toolmux",
                                 "--allow-writes"});
}

TEST_CASE("first run: the guidance names this program and gives each client's snippet",
          "[first_run]") {
  const std::vector<std::string> args{"serve", "--root", "/home/me/notes"};
  const std::string text = toolmux::first_run_guidance("/opt/toolmux/bin/toolmux", args);
  const json claude = snippet_after(
      text, "Claude Desktop (claude_desktop_config.json) or Cursor (~/.cursor/mcp.json):");
  CHECK(claude == json{{"mcpServers",
                        {{"toolmux", {{"command", "/opt/toolmux/bin/toolmux"}, {"args", args}}}}}});
  const json vscode = snippet_after(text, "VS Code (.vscode/mcp.json):");
  CHECK(vscode["servers"]["toolmux"] ==
        json{{"type", "stdio"}, {"command", "/opt/toolmux/bin/toolmux"}, {"args", args}});
  CHECK_THAT(text, Catch::EndsWith("toolmux is now waiting for an MCP client on stdin (one "
                                   "JSON-RPC message per line); Ctrl-D ends it.\n"));
}
