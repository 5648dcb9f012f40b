// The PostgreSQL store's schema: versioned migrations kept in the code, and
// the advisory locks that keep instances sharing one database out of each
// other's way. Internal to src/store.
//
// Every table is named toolmux_*; toolmux_schema holds one row per applied
// migration (version, applied_at). Migrations are only appended: a version,
// once released, never changes, so a database says exactly what it holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "src/base/status.h"
#include "src/store/pg_connection.h"

namespace toolmux {

struct PgMigration {
  int version = 0;                           // 1, 2, 3, ... in order
  std::vector<std::string_view> statements;  // run in order, in one transaction
};

// This binary's migrations (src/store/pg_schema.cpp).
const std::vector<PgMigration>& pg_migrations();

// SQL that a dump of the toolmux_* tables needs in the database it is
// restored into and cannot hold itself (pg_dump --table takes no functions):
// the audit table's append-only trigger function (migration 10), as CREATE OR
// REPLACE, so it may run on a database that has it already.
std::string pg_restore_prerequisites();

// Advisory lock keys (one number space per database, shared with any other
// program using it: these spell "toolmux" and a number).
inline constexpr std::int64_t kPgLockMigrations = 0x746f6f6c6d757801;
inline constexpr std::int64_t kPgLockResultExpiry = 0x746f6f6c6d757802;
inline constexpr std::int64_t kPgLockResultSpace = 0x746f6f6c6d757803;
// The journal's maintenance: marking the calls of dead instances interrupted,
// and retention (pg_journal_store.h).
inline constexpr std::int64_t kPgLockJournalMaintenance = 0x746f6f6c6d757810;
// Each instance's journal lock is pg_advisory_lock(kPgJournalHolderSpace, N)
// (the two-number form, a key space of its own), N from
// toolmux_journal_holders: held while the instance lives.
inline constexpr std::int32_t kPgJournalHolderSpace = 0x746d786a;  // "tmxj"
// Legacy sessions no instance used for the idle time are deleted by one
// instance at a time (pg_session_store.h).
inline constexpr std::int64_t kPgLockSessionExpiry = 0x746f6f6c6d757811;
// Writes to the shared search memory, one instance at a time, so that their
// revisions commit in order (pg_search_memory.h); and its trimming.
inline constexpr std::int64_t kPgLockSearchMemoryWrites = 0x746f6f6c6d757812;
inline constexpr std::int64_t kPgLockSearchMemoryTrim = 0x746f6f6c6d757813;

// Brings the database up to the last of `migrations` and returns its version.
// In one transaction under pg_advisory_xact_lock(kPgLockMigrations), so that
// instances starting together apply each migration once and wait for each
// other. invalid_argument "the store's schema is version N; this toolmux knows
// up to M: upgrade toolmux" when the database is newer than `migrations`;
// the connection's Status when a statement fails (nothing is applied then).
Result<int> migrate_pg_schema(PgConnection& connection,
                              const std::vector<PgMigration>& migrations = pg_migrations());

// invalid_argument "the store's schema is version `found`; this toolmux knows
// up to `known`: upgrade toolmux".
Status newer_schema(int found, int known);

// pg_try_advisory_xact_lock(key) in `transaction`: whether this instance has
// the lock until the transaction ends (false: another one holds it now).
Result<bool> try_advisory_xact_lock(PgTransaction& transaction, std::int64_t key);

// A session-level advisory lock held on a connection of its own, for work
// that runs in one instance at a time across several transactions; released
// (pg_advisory_unlock) when this goes out of scope, or by the server when the
// connection is lost. Move-only.
class PgExclusiveLock {
 public:
  // The lock, or nullopt when another session holds it; the pool's or the
  // connection's Status on failure.
  static Result<std::optional<PgExclusiveLock>> try_take(PgPool& pool, std::int64_t key);
  PgExclusiveLock(PgExclusiveLock&& other) noexcept;
  PgExclusiveLock& operator=(PgExclusiveLock&&) = delete;
  PgExclusiveLock(const PgExclusiveLock&) = delete;
  PgExclusiveLock& operator=(const PgExclusiveLock&) = delete;
  ~PgExclusiveLock();

  // The connection that holds the lock, for the work done under it.
  PgConnection& connection() { return *lease_; }

 private:
  PgExclusiveLock(PgLease lease, std::int64_t key) : lease_(std::move(lease)), key_(key) {}
  PgLease lease_;
  std::int64_t key_;
  bool held_ = true;
};

}  // namespace toolmux
