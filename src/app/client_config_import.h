// `toolmux import`: an MCP client's configuration (Claude Desktop's
// claude_desktop_config.json, Cursor's mcp.json, VS Code's mcp.json) read
// into a toolmux catalog whose "upstreams" are the servers it names, and the
// client configuration that replaces them with one toolmux entry.
//
// The configuration is untrusted text: it is read through the JSON boundary
// with bounds on its size and depth, and a problem is reported with the JSON
// pointer of where it is. A server toolmux cannot serve, or one the client has
// disabled, is reported by name with the reason, never dropped silently.
// Values of "env" and "headers" never reach the catalog: each becomes a
// {"fromEnv": VAR} reference, and the import lists the variables to set (names
// only; the values stay where they were). Pure functions on text and JSON,
// except run_import, which reads and writes files.
#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/problem.h"

namespace toolmux {

enum class ClientFormat { claude, cursor, vscode };

// "claude", "cursor" or "vscode" (the --format names); nullopt otherwise.
std::optional<ClientFormat> client_format_from_name(std::string_view name);
// "Claude Desktop's claude_desktop_config.json", ...: what the import says it read.
std::string client_format_title(ClientFormat format);

// The largest configuration read, and how deep its values may nest.
inline constexpr std::size_t kMaxClientConfigBytes = std::size_t{1024} * 1024;
inline constexpr std::size_t kMaxClientConfigDepth = 32;

// JSON with comments (// and /* */) and trailing commas, as VS Code writes its
// mcp.json, made plain JSON of the same length: each comment and trailing
// comma becomes spaces (newlines kept), so byte offsets in a parse error still
// point into the original text. Strings are left alone. One pass, no recursion.
std::string jsonc_to_json(std::string_view text);

// A variable the imported catalog reads with {"fromEnv": name}.
struct ImportedVariable {
  std::string name;    // e.g. TOOLMUX_GITHUB_GITHUB_TOKEN
  std::string source;  // where its value was, e.g. "/mcpServers/github/env/GITHUB_TOKEN"
  // True when the client already read it from its own environment
  // ("${env:NAME}"): the same variable serves toolmux.
  bool already_referenced = false;
  // When the value was exactly "${input:ID}" (VS Code asks the user for it):
  // that input's "description", or its id when it has none.
  std::string input;
};

// A server of the client's configuration that the catalog does not hold.
struct LeftOutServer {
  std::string name;    // as the client names it
  std::string reason;  // one sentence
};

struct ClientConfigImport {
  // Why nothing could be imported (not JSON, too large or deep, no server
  // list, an entry of the wrong shape), each at its JSON pointer. When it is
  // not empty the other fields are empty.
  Problems problems;
  ClientFormat format = ClientFormat::claude;
  nlohmann::json upstreams = nlohmann::json::object();  // the catalog's "upstreams"
  std::vector<std::string> imported;        // the clients' names of the servers in `upstreams`
  std::vector<LeftOutServer> disabled;      // switched off in the client: skipped
  std::vector<LeftOutServer> unsupported;   // toolmux cannot serve them as written
  std::vector<std::string> notes;           // renamed servers, ignored fields
  std::vector<ImportedVariable> variables;  // in the order they appear
};

// Reads a client configuration. Without `format`, it is told from the
// content: "servers" is VS Code's; "mcpServers" is Cursor's when an entry has
// "url", "headers", "type" or "envFile", else Claude Desktop's. VS Code's is
// read as JSON with comments.
ClientConfigImport import_client_config(std::string_view text,
                                        std::optional<ClientFormat> format = std::nullopt);

// The catalog file: "$schema" (when `schema_ref` is not empty), "$comment",
// an empty "tools" and the imported "upstreams", each with its fields in the
// order command, args, cwd, env, url, headers, bearerToken.
nlohmann::ordered_json imported_catalog(const ClientConfigImport& imported,
                                        const std::string& schema_ref);

// The client configuration with one server, "toolmux", which runs
// `toolmux_path` with `args` (e.g. serve --catalog FILE), in `format`'s shape.
// ("type" first for VS Code, then "command", "args").
nlohmann::ordered_json toolmux_client_config(ClientFormat format, const std::string& toolmux_path,
                                             const std::vector<std::string>& args);

// What `toolmux import` was asked.
struct ImportOptions {
  std::filesystem::path input;                         // the client's configuration
  std::optional<ClientFormat> format;                  // --format; nullopt: detected
  std::filesystem::path out = "toolmux-catalog.json";  // --out
  bool force = false;                                  // --force: overwrite --out
  bool dry_run = false;                                // --dry-run: write nothing
  std::string toolmux_path;  // this program's absolute path, for the client's entry
  std::string schema_ref;    // what "$schema" names; "" leaves it out
};

// Runs `toolmux import`: reads the input (a regular file of at most
// kMaxClientConfigBytes; a FIFO is refused, never waited on), writes the
// catalog atomically (unless dry_run; src/base/file_io.h: never through a
// symbolic link planted beside it), and prints to `out` what was imported,
// skipped and left out, the variables to set and the replacement client
// configuration (with dry_run, the catalog too). Problems go to `err`. Every
// text from the input that is printed passes through terminal_text (the
// client configuration and catalog through terminal_json, still JSON of the
// same value), so nothing in it acts on the terminal or starts a line; the
// catalog written holds the real text. Returns the exit code: 0, or 1 when
// the input cannot be read or imported or the catalog cannot be written
// (an existing file without `force` included).
int run_import(const ImportOptions& options, std::ostream& out, std::ostream& err);

}  // namespace toolmux
