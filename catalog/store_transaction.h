// A transaction of toolmux's own store, lent to a native tool so that the
// tool's change commits together with its call's outcome and audit record:
// both, or neither (CallContext::store_transaction()).
//
// Lent only where the two can share a transaction: the PostgreSQL store
// (serve --store postgresql://...), to a tool that is not read_only and whose
// calls are journaled. The tool's tables live in toolmux's database, beside
// toolmux's own (whose names start with toolmux_, which a tool leaves alone).
// With the embedded RocksDB store, or journaling off, there is none: the
// handler gets null and keeps its change where it keeps it
// (docs/library.md says what holds then).
//
// The transaction begins with the handler's first exec(), on a connection of
// toolmux's pool that the call holds until it ends. When the handler returns
// (ok, or an isError result of its own), toolmux writes the outcome, the
// result it keeps for replay and the audit record in it, and commits. When
// the call ends otherwise (the handler threw, a confirmation or the journal
// refused it), the transaction is rolled back. A handler that goes on past its
// timeout or a cancellation keeps its transaction until it returns, and its
// late outcome commits with it. When the commit fails, nothing of the tool's
// change stays, and the client is told so (an isError result, outcome
// "stopped"); when toolmux cannot tell whether it committed (the connection
// broke during COMMIT), the client is told that, and the call's journal entry
// is left without an outcome until toolmux can tell.
//
// Thread-safe; one statement runs at a time. After the call has ended, exec()
// fails and changes nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

namespace toolmux {

// What a statement returned: its columns' names and its rows, each value as
// PostgreSQL writes it in text (nullopt for NULL); `affected`, the rows an
// INSERT, UPDATE or DELETE touched.
struct StoreRows {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::uint64_t affected = 0;
};

class StoreTransaction {
 public:
  virtual ~StoreTransaction() = default;
  // Runs one SQL statement in the transaction, with `params` bound to $1,
  // $2, ... as text (nullopt = NULL); never spliced into the SQL. A statement
  // that fails changes nothing and leaves the transaction usable (each runs
  // under a savepoint): io_error with the server's message, unavailable when
  // the store cannot be reached (then the transaction is lost, and the call's
  // commit fails). Only toolmux ends the transaction: a statement that starts
  // with BEGIN, START, COMMIT, END, ROLLBACK, ABORT, SAVEPOINT, RELEASE or
  // PREPARE is refused (invalid_argument) without running, and one that ended
  // it all the same makes the call's commit fail.
  virtual Result<StoreRows> exec(std::string_view sql,
                                 const std::vector<std::optional<std::string>>& params = {}) = 0;
};

}  // namespace toolmux
