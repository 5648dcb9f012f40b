// The commands that read what a server writes down, and switch the write
// freeze: `toolmux journal`, `toolmux audit` and `toolmux freeze`. Each reads
// or writes the data directory of the command line (default_data_dir() when
// none was given; journal and audit with --store postgresql read the database
// of every instance instead, in pages), prints to `out` (tables for people, or
// JSON Lines with --json; every text redacted as the log is, src/base/redact.h,
// an idempotency key too) and its failures to `err` as "toolmux: <why>", and
// returns the exit code: 0, or 1 when the journal could not be read or the
// freeze file could not be written. Safe beside running servers: the journal
// is opened read-only (PostgreSQL: only read), and the freeze file is replaced
// in one rename.
#pragma once

#include <ostream>

#include "src/app/cli.h"

namespace toolmux {

int run_journal(const CommandLine& cl, std::ostream& out, std::ostream& err);
int run_audit(const CommandLine& cl, std::ostream& out, std::ostream& err);
int run_freeze(const CommandLine& cl, std::ostream& out, std::ostream& err);

}  // namespace toolmux
