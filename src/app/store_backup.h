// `toolmux store backup DIR` and `toolmux store restore DIR [--force]`: the
// data directory's state copied into a backup folder while servers run, and
// put back (src/store/state_backup.h says what a backup holds and
// guarantees). Each prints what it saved or restored to `out` (every
// database with its keys, how many other files, the size) and its failure to
// `err` as "toolmux: <why>", and returns the exit code: 0, or 1 when it was
// refused (a DIR that is not new or empty, a data directory a server holds or
// that is not empty without --force), the backup is damaged (each problem
// named) or a file could not be read or written. With --store postgresql
// neither copies anything: each prints the pg_dump or pg_restore procedure
// of docs/shared-store.md and returns 1.
#pragma once

#include <ostream>

#include "src/app/cli.h"

namespace toolmux {

int run_store(const CommandLine& cl, std::ostream& out, std::ostream& err);

}  // namespace toolmux
