// The journal store (journal_store.h) in PostgreSQL, shared by every toolmux
// instance on one database: a call journaled through one instance is found
// by find_by_key() through any other, and the audit trail is one for all.
//
// Tables (migration 2, pg_schema.cpp): toolmux_journal, one row per entry,
// and toolmux_audit, one row per record. begin() is one INSERT, committed
// before it returns; the partial unique indexes on (call id) and (principal,
// idempotency key) over live entries (no outcome yet, or finished) make two
// instances beginning one key at once give one winner, the other an
// invalid_argument. finish() is one statement that sets the outcome and
// inserts the audit record: both are committed or neither. A native tool's
// change joins them: lend_transaction() gives it a transaction on a pooled
// connection, and finish_in() runs that statement in it and commits.
//
// Dead instances: each store holds a session-level advisory lock,
// (kPgJournalHolderSpace, N) with N new from toolmux_journal_holders, on a
// connection of the pool it keeps while open, and writes N into each entry
// it begins (begin() checks, in its INSERT, that the lock is held). When the
// instance dies its connection closes and the server releases the lock. An
// entry with no outcome whose lock nobody holds is marked interrupted (its
// outcome and an audit record, in one transaction): by the maintenance pass
// (at open and then at most every maintenance_interval, on finish() or
// audit(); one instance at a time, under kPgLockJournalMaintenance, the
// others skip it), and by find_by_key() when it meets one. A call is never
// run again by the store. If the kept connection breaks while the instance
// lives (the server restarted, say), the store takes its lock again on a new
// connection at the next begin() or keep_alive(). After the server starts,
// an entry begun before that start is judged dead only once
// options.restart_grace has passed, so that every live instance has had
// time to take its lock again. A running call that another instance marked
// interrupted meanwhile gets its real outcome when it finishes (finish()
// replaces "interrupted" on the newest entry of its call id).
//
// Retention runs in the maintenance pass, at most hourly; it is the only
// DELETE the audit table lets through (migration 10's trigger, which
// refuses every UPDATE), and when this login may not delete there (a
// retention role of its own, docs/shared-store.md) the audit records stay
// and the rest of the pass goes on. The times compared
// are each instance's clock (options.now): instances' clocks should agree to
// well within the retention.
//
// Thread-safe: every method may be called from any thread; each takes a
// connection from the pool for its duration.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "src/store/journal_store.h"
#include "src/store/pg_connection.h"
#include "src/store/pg_store.h"

namespace toolmux {

class PgJournalStore final : public JournalStore {
 public:
  // The store on options.postgres (which must be set):
  // takes this instance's lock, marks the calls of dead instances
  // interrupted (interrupted()) and applies the retention. The pool's Status
  // when no connection can be had, the connection's when a statement fails.
  static Result<std::unique_ptr<PgJournalStore>> open(const JournalStoreOptions& options);
  ~PgJournalStore() override;
  PgJournalStore(const PgJournalStore&) = delete;
  PgJournalStore& operator=(const PgJournalStore&) = delete;

  Status begin(const JournalIntent& intent) override;
  Status finish(const std::string& call_id, const std::string& outcome,
                const nlohmann::json& result, const AuditRecord& audit) override;
  // A transaction on a connection of the pool, held from the tool's first
  // statement to finish_in (or its roll_back).
  std::shared_ptr<LentTransaction> lend_transaction() override;
  Status finish_in(LentTransaction& transaction, const std::string& call_id,
                   const std::string& outcome, const nlohmann::json& result,
                   const AuditRecord& audit) override;
  Status audit(const AuditRecord& record) override;
  std::optional<JournalEntry> find_by_key(const std::string& principal,
                                          const std::string& key) const override;
  std::vector<AuditRecord> latest_audit(std::size_t limit) const override;
  const std::vector<JournalEntry>& interrupted() const override { return interrupted_; }
  std::string where() const override { return postgres_->target(); }
  Status keep_alive() override;

  // The maintenance pass now: marks the calls of dead instances interrupted
  // and, when `retention` is true, deletes what is past the retention. Does
  // nothing when another instance is running it. The calls it marked, oldest
  // first (at most 1024 listed).
  Result<std::vector<JournalEntry>> maintain(bool retention);

  // The id written with this instance's entries and records.
  const std::string& instance_id() const { return instance_; }

 private:
  explicit PgJournalStore(JournalStoreOptions options);
  // This instance's lock number, taken again (on a new connection) when the
  // kept connection is gone.
  // Const: find_by_key() takes it again too, before it judges a call dead.
  Result<std::int32_t> hold() const;
  // Gives up the kept connection (unlocking first, when it still works).
  void release();
  void maybe_maintain();
  // finish()'s statement, on `connection` (in a transaction or not).
  Status finish_on(PgConnection& connection, const std::string& call_id, const std::string& outcome,
                   const nlohmann::json& result, const AuditRecord& audit);
  std::int64_t now_ns() const;

  JournalStoreOptions options_;
  std::shared_ptr<PgStore> postgres_;
  PgPool& pool_;
  std::string instance_;
  // SQL: whether entry j's instance may be alive, and an entry's columns
  // (with that), for options_.restart_grace.
  std::string alive_;
  std::string entry_columns_;
  mutable std::mutex keeper_mutex_;
  mutable std::optional<PgLease> keeper_;  // guarded by keeper_mutex_
  mutable std::int32_t holder_ = 0;        // guarded by keeper_mutex_
  std::vector<JournalEntry> interrupted_;
  // When the maintenance pass and the retention last ran here, in
  // options_.now's nanoseconds.
  std::atomic<std::int64_t> last_pass_ns_{0};
  std::atomic<std::int64_t> last_retention_ns_{0};
};

// For `toolmux journal` and `toolmux audit` on PostgreSQL: every instance's
// entries and records, with the same order and filters as the RocksDB readers
// (journal_store.h). Read in pages of a few hundred rows, never all at once
// (read_audit with a limit holds at most `limit` records). An entry without
// an outcome is running when its instance still holds its lock. The pool's
// or the connection's Status on failure.
Status for_each_journal_entry(PgPool& pool, const JournalEntryFn& fn);
Status for_each_audit_record(PgPool& pool, const AuditQuery& query, const AuditRecordFn& fn);
Result<std::vector<JournalEntry>> read_journal(PgPool& pool);

// For `toolmux audit verify` on PostgreSQL, whose audit rows carry no hash
// chain: what keeps them append-only instead. The pool's or the connection's
// Status on failure (a database no toolmux migrated: toolmux_audit missing).
struct PgAuditGuard {
  std::uint64_t records = 0;
  // Migration 10's trigger is there and enabled: UPDATE, TRUNCATE and every
  // DELETE but retention's are refused.
  bool trigger = false;
  std::string role;              // the login that checked
  bool role_may_change = false;  // it holds UPDATE or DELETE on toolmux_audit
};
Result<PgAuditGuard> pg_audit_guard(PgPool& pool);
Result<std::vector<AuditRecord>> read_audit(PgPool& pool, const AuditQuery& query);

}  // namespace toolmux
