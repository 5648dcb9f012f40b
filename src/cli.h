// The command line: parsing only; src/run.cpp runs what it asks for. The
// options are defined once, with CLI11 (kept out of this header), and both the
// parser and the --help text come from those definitions.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "catalog/tool.h"

namespace toolmux {

struct ServeOptions {
  std::filesystem::path catalog_file;        // empty = built-in tools only
  std::vector<std::filesystem::path> roots;  // empty = the working directory
  std::filesystem::path data_dir;            // empty = $XDG_STATE_HOME/toolmux
  bool allow_writes = false;
  std::size_t page_size = 0;  // 0 = all tools on one page
  std::size_t max_message_bytes = std::size_t{16} << 20;
  LogLevel log_level = LogLevel::info;  // of the stderr log
  // Calls running at once, overall and per session, and waiting for a place
  // (src/call_admission.h).
  std::size_t max_calls = 64;
  std::size_t max_session_calls = 16;
  std::size_t max_queued_calls = 256;

  // Streamable HTTP instead of stdio (--http HOST:PORT).
  bool http = false;
  std::string http_host = "127.0.0.1";
  int http_port = 0;
  std::string http_path = "/mcp";
  std::vector<std::string> allowed_hosts;
  std::vector<std::string> allowed_origins;
  std::filesystem::path tokens_file;  // "principal=token" lines; also $TOOLMUX_TOKENS
  // Calls one session may have waiting; stdio has one session, which may use
  // the whole queue.
  std::size_t max_session_queued_calls = 64;
  std::size_t max_sessions = 1000;
  std::size_t session_idle_seconds = 3600;
  std::size_t shutdown_grace_seconds = 10;
  std::size_t max_connections = 1024;
  std::size_t max_connections_per_client = 256;
  std::size_t header_timeout_seconds = 10;
  std::size_t body_timeout_seconds = 60;
};

// `toolmux check --fuzz`'s options (src/catalog_fuzz.h).
struct CheckFuzzOptions {
  bool fuzz = false;
  std::size_t cases = 20;  // 1..1000
  std::size_t seed = 1;
};

struct CommandLine {
  enum class Action { serve, check, search, version, help, usage_error };
  Action action = Action::help;
  ServeOptions serve;  // check and search use the catalog, roots and allow_writes
  std::filesystem::path check_file;
  CheckFuzzOptions check_fuzz;
  std::string search_query;  // for search
  std::size_t search_limit = 5;
  std::string error;  // for usage_error
};

// Parses toolmux's arguments (without the program's name). Never throws: a bad
// command line is Action::usage_error, with `error` naming the option and what
// it needs ("--max-calls needs a whole number from 1 to 1024"), or the unknown
// command or option. Repeating an option keeps the last value (or every value
// of --root, --allow-host and --allow-origin).
CommandLine parse_command_line(const std::vector<std::string>& args);

// The --help text: every command and option, with its meaning, range and default.
std::string usage_text();

// Every option name the parser accepts, as "COMMAND --name" ("--version" at
// the top), besides -h/--help, so that tests can check the help and the README
// name them all.
std::vector<std::string> accepted_options();

}  // namespace toolmux
