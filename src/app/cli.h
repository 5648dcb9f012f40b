// The command line: parsing only; src/app/run.cpp runs what it asks for. The
// options are defined once, with CLI11 (kept out of this header), and both the
// parser and the --help text come from those definitions.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "src/app/client_config_import.h"
#include "src/assembly/serve_options.h"
#include "src/store/journal_store.h"

namespace toolmux {

// `toolmux check --fuzz`'s options (src/app/catalog_fuzz.h).
struct CheckFuzzOptions {
  bool fuzz = false;
  bool run = false;        // --run: the valid cases run the real tools
  bool mutating = false;   // --fuzz-mutating: local_mutation tools too, in a throwaway root
  std::size_t cases = 20;  // 1..1000
  std::size_t seed = 1;
};

// `toolmux freeze on|off|status` (src/app/write_freeze.h).
enum class FreezeAction { on, off, status };

// `toolmux results list|show|delete` (src/app/store_commands.h).
struct ResultsCommand {
  enum class Action { list, show, remove };
  Action action = Action::list;
  std::string id;  // show, and delete of one result
  // --session: the owner's session id, or the digest list prints ("" = any).
  std::string session;
  // --older-than, resolved against the wall clock when the command line is
  // read: only results created before this.
  std::optional<std::chrono::system_clock::time_point> created_before;
  std::size_t page = 0;  // show --page: 1 is the first; 0 = the whole text
};

// `toolmux store backup|restore DIR` (src/app/store_backup.h).
struct StoreCommand {
  enum class Action { backup, restore };
  Action action = Action::backup;
  std::filesystem::path dir;  // the backup's folder
  bool force = false;         // restore --force: replace a data directory that is not empty
};

struct CommandLine {
  enum class Action {
    serve,
    check,
    search,
    journal,
    audit,
    freeze,
    results,
    store,
    import_config,
    doctor,
    login,
    logout,
    version,
    help,
    usage_error
  };
  Action action = Action::help;
  // check, search and doctor use the catalog, roots and allow_writes; journal,
  // audit, freeze, results and doctor the data directory (empty =
  // default_data_dir());
  // doctor the HTTP address too.
  ServeOptions serve;
  std::filesystem::path check_file;
  CheckFuzzOptions check_fuzz;
  std::string search_query;  // for search
  std::size_t search_limit = 5;
  std::string search_source;
  std::vector<std::string> search_alternatives;
  bool search_explain = false;
  bool json = false;  // journal, audit and results --json: JSON Lines
  // audit's filters; --since, given as a duration, is resolved against the
  // wall clock when the command line is read.
  AuditQuery audit_query;
  bool audit_verify = false;  // `audit verify`: check the chain instead of listing
  FreezeAction freeze_action = FreezeAction::status;
  std::string freeze_reason;  // freeze on --reason
  ResultsCommand results;
  StoreCommand store;
  // import's input, --format, --out, --force, --dry-run (run() fills in the
  // program's path and the schema's).
  ImportOptions import;
  // login and logout: the upstream (by its name in the catalog's
  // "upstreams"); login's --no-browser and --timeout.
  std::string login_upstream;
  bool login_no_browser = false;
  std::size_t login_timeout_seconds = 300;
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
