// `toolmux doctor`: checks a setup before a client starts toolmux and says
// what to fix. Each check is one line, "ok: ..." or "problem: ...; <what to
// do>": the catalog file is valid (what `toolmux check` checks), each stdio
// upstream's command is found and executable, each variable the catalog reads
// ({"fromEnv"}) is set and each file it reads ({"fromFile"}) is a regular
// file that can be read within its bound (a FIFO is never waited on), the
// data directory is writable (or can be created), with --store postgresql the
// store is reachable (its schema read, nothing changed), each HTTP upstream
// whose "oauth" grant is authorization_code has a login kept for its URL
// (`toolmux login`), and the HTTP address is free to listen on. Values of variables and files are
// never printed, and every line is redacted as the log is (src/base/redact.h). It reads the
// process's environment and writes (then removes) one file in the data
// directory; run it from one thread.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "src/assembly/native.h"
#include "src/assembly/serve_options.h"

namespace toolmux {

struct DoctorCheck {
  bool ok = false;
  std::string text;  // what was checked and found; for a problem, also what to do
  // Lines shown under it, indented (the catalog's problems, each at its pointer).
  std::vector<std::string> details;
};

// The checks, in order: catalog, upstream commands, variables and files,
// data directory, store (with --store postgresql), upstream logins, HTTP
// address (when options.http).
std::vector<DoctorCheck> doctor_checks(const ServeOptions& options,
                                       const std::vector<NativeTool>& native_tools = {});

// Prints each check as a line ("ok: ...", "problem: ...") and a last line
// counting the problems; returns 0 when every check passed, else 1. A check's
// text and details pass through terminal_text (src/base/terminal_text.h):
// names and paths from the catalog never act on the terminal or start a line.
int run_doctor(const ServeOptions& options, const std::vector<NativeTool>& native_tools,
               std::ostream& out);

}  // namespace toolmux
