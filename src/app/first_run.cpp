#include "src/app/first_run.h"

#include <filesystem>
#include <system_error>

#include "src/app/client_config_import.h"

namespace toolmux {
namespace {

std::string absolute_text(const std::filesystem::path& path) {
  std::error_code ec;
  const auto full = std::filesystem::absolute(path, ec);
  return (ec ? path : full.lexically_normal()).string();
}

}  // namespace

std::vector<std::string> client_serve_args(const ServeOptions& options) {
  std::vector<std::string> args{"serve"};
  const auto add = [&args](const char* option, const std::filesystem::path& path) {
    args.emplace_back(option);
    args.push_back(absolute_text(path));
  };
  if (!options.catalog_file.empty()) add("--catalog", options.catalog_file);
  for (const auto& root : options.roots) add("--root", root);
  if (!options.data_dir.empty()) add("--data-dir", options.data_dir);
  if (options.allow_writes) args.emplace_back("--allow-writes");
  if (options.read_only) args.emplace_back("--read-only");
  return args;
}

std::string first_run_guidance(const std::string& toolmux_path,
                               const std::vector<std::string>& args) {
  const auto snippet = [&](ClientFormat format) {
    return toolmux_client_config(format, toolmux_path, args).dump(2) + "\n";
  };
  return "toolmux is an MCP server: an MCP client starts it and talks to it on stdin and "
         "stdout.\n"
         "To connect a client, add this to its configuration, then restart the client.\n\n"
         "Claude Desktop (claude_desktop_config.json) or Cursor (~/.cursor/mcp.json):\n" +
         snippet(ClientFormat::claude) + "\nVS Code (.vscode/mcp.json):\n" +
         snippet(ClientFormat::vscode) +
         "\n`toolmux import FILE` makes a catalog of the servers a client's configuration "
         "already names; `toolmux doctor` checks a setup.\n"
         "toolmux is now waiting for an MCP client on stdin (one JSON-RPC message per line); "
         "Ctrl-D ends it.\n";
}

}  // namespace toolmux
