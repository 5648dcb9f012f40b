// The commands that read what a server writes down, and switch the write
// freeze: `toolmux journal`, `toolmux audit`, `toolmux freeze` and `toolmux
// results`. Each reads or writes the data directory of the command line
// (default_data_dir() when none was given; with --store postgresql the
// database of every instance instead, journal and audit in pages), prints to
// `out` (tables for people, or JSON Lines with --json; every text redacted as
// the log is, src/base/redact.h, an idempotency key too, and made safe for a
// terminal, src/base/terminal_text.h) and its failures to `err` as "toolmux:
// <why>", and returns the exit code: 0, or 1 when the journal or the results
// could not be read, a result named is not stored or could not be deleted, or
// the freeze file could not be written. Safe beside running servers: the
// journal and the result store are opened read-only (PostgreSQL: only read),
// a result store's slot is opened for writing only to delete and only when no
// live process holds it (src/store/result_inventory.h), and the freeze file is
// replaced in one rename.
//
// `toolmux audit verify` (cl.audit_verify) checks instead of listing: on
// RocksDB it walks the audit chain (src/store/audit_chain.h) and prints one
// line, or "toolmux: the audit chain in SLOT breaks at record N (time T, call
// ID): WHY" with exit 1; on PostgreSQL it checks the audit table's
// append-only trigger (exit 1 when it is missing or disabled).
//
// `toolmux results` never prints a session id (a bearer credential of the
// HTTP transport): a session is named by the first 12 hex digits of the
// SHA-256 of its id (session_id_digest), and --session takes either.
#pragma once

#include <ostream>

#include "src/app/cli.h"

namespace toolmux {

int run_journal(const CommandLine& cl, std::ostream& out, std::ostream& err);
int run_audit(const CommandLine& cl, std::ostream& out, std::ostream& err);
int run_freeze(const CommandLine& cl, std::ostream& out, std::ostream& err);
int run_results(const CommandLine& cl, std::ostream& out, std::ostream& err);

}  // namespace toolmux
