// What toolmux writes down about calls: the journal of mutations (each
// non-read-only call's intent before it runs, its outcome after) and the audit
// trail (one record per call, of every class), kept for a retention period.
// An interface with two implementations, one contract (the comments here hold
// for both unless they name one):
//
// - RocksDbJournalStore (rocksdb_journal_store.h): RocksDB databases in the
//   data directory, for one machine (the default).
// - PgJournalStore (pg_journal_store.h): PostgreSQL, shared by every toolmux
//   instance of a deployment: a call journaled through one instance is
//   replayed through any other, and the audit trail is one for all.
//
// Crash safety: begin() and finish() are durable before they return (RocksDB:
// written with sync; PostgreSQL: committed, as the server's synchronous_commit
// has it), so an intent that begin() accepted survives a kill -9. What open()
// gives is in front of a spool (spooled_journal_store.h, unless
// options.spool is off): an outcome or audit record the store cannot take
// (PostgreSQL unreachable) is kept, durably, and written once it can. An intent
// with no outcome whose process died is a call that was running then: it is
// marked interrupted (an outcome "interrupted" and an audit record, written
// together) and listed in interrupted() of the open that marked it; nothing
// is ever re-run. RocksDB marks at the next open of the dead process's slot;
// PostgreSQL notices a dead instance by the lock it no longer holds, at any
// instance's next open, its maintenance pass, or find_by_key of that call.
//
// Replay: a call that carries an idempotency key is indexed by (principal,
// key); find_by_key() gives its entry, with the recorded result once it has
// an outcome, so a repeated call is answered without running again. RocksDB
// indexes per slot (per process); PostgreSQL across every instance, with a
// unique index, so two instances beginning one key at once give one winner.
//
// Retention: audit records older than audit_retention are deleted at open and
// then at most once an hour, on the next finish() or audit() (PostgreSQL: by
// one instance at a time). A journal entry that has an outcome goes with the
// same retention, counted from its end (with its recorded result and its
// idempotency key, which can then be used again); an entry with no outcome is
// kept until it gets one.
//
// Bounds: a result recorded for replay is at most kMaxReplayResultBytes of
// JSON text; a larger one is not kept and its entry says so
// (result_too_large), so that a repeat can be refused rather than run twice.
// An audit record's arguments are kept up to kMaxAuditArgumentsBytes of JSON
// text; larger ones are replaced by a string saying how large they were.
//
// Thread-safe: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/store_transaction.h"
#include "src/base/status.h"

namespace toolmux {

class Logger;   // src/base/logger.h
class PgStore;  // src/store/pg_store.h

// The largest result recorded for replay, in bytes of JSON text.
inline constexpr std::size_t kMaxReplayResultBytes = std::size_t{1} << 20;
// The largest arguments kept in an audit record, in bytes of JSON text.
inline constexpr std::size_t kMaxAuditArgumentsBytes = std::size_t{16} << 10;

struct JournalStoreOptions {
  // PostgreSQL when set (data_dir and max_slots are not used then), else
  // RocksDB. The store keeps one of the PgStore's pooled connections for as
  // long as it is open.
  std::shared_ptr<PgStore> postgres;
  std::filesystem::path data_dir;               // RocksDB: data_dir/journal/slot-N
  std::chrono::hours audit_retention{24 * 30};  // audit records older than this are removed
  std::size_t max_slots = 16;                   // RocksDB: processes sharing data_dir at once
  // PostgreSQL: this instance's id, written with each entry and record.
  std::string instance_id;
  // PostgreSQL: how often finish() and audit() look for calls of instances
  // that are gone (besides each open).
  std::chrono::seconds maintenance_interval{60};
  // PostgreSQL: after the server (re)started, how long an entry begun before
  // that start whose instance holds no lock is still taken for running: every
  // instance lost its lock with the server, and a live one takes it again
  // within seconds (keep_alive()); only one that does not is gone.
  std::chrono::seconds restart_grace{15};
  // The wall clock, replaceable in tests of retention.
  std::function<std::chrono::system_clock::time_point()> now = std::chrono::system_clock::now;
  // open() puts the store in front of a spool of what it cannot write
  // (spooled_journal_store.h): RocksDB's beside its slot, PostgreSQL's in
  // data_dir/journal.
  bool spool = true;
  // Where the spool tells of records kept and written (may be null).
  Logger* logger = nullptr;
};

// Written before a non-read-only tool runs.
struct JournalIntent {
  std::string call_id;           // toolmux's id of the call (CallContext::call_id)
  std::string tool;              // canonical name
  std::string side_effect;       // "local_mutation", "remote_mutation", "destructive"
  std::string arguments_digest;  // SHA-256 (hex) of the validated arguments' canonical JSON
  std::string principal;
  std::string session;          // the session's label ("" = none: a 2026-07-28 request)
  std::string approver;         // "" = not confirmed (no confirmation was needed)
  std::string rationale;        // redacted; "" = none
  std::string idempotency_key;  // as sent, for replay ("" = none); shown redacted
  std::chrono::system_clock::time_point started;
};

// One call, as `toolmux audit` shows it. Argument values are redacted before
// they get here.
struct AuditRecord {
  std::chrono::system_clock::time_point time;  // when the call ended
  std::string call_id;
  std::string principal;
  std::string session;       // "" = none
  std::string tool;          // canonical name, or as requested (redacted) when it resolved to none
  std::string side_effect;   // "" when no tool was resolved
  nlohmann::json arguments;  // redacted target arguments as sent (null = none)
  // Redacted: the arguments the tool's schema defaults filled in, by name
  // (null = none was).
  nlohmann::json defaults;
  std::string confirmation;     // "not_required", "accepted", "declined", "cancelled",
                                // "unavailable" (the client cannot be asked), "asked",
                                // "reused" (its answer was used already), "replayed"
  std::string approver;         // "" = none
  std::string rationale;        // redacted; "" = none
  std::string outcome;          // call_outcome_name, or "interrupted"
  double duration_ms = 0;       // to the microsecond (to_the_microsecond)
  std::string idempotency_key;  // redacted; "" = none
  // The instance that wrote the record (PostgreSQL; "" in RocksDB). Set by
  // the store.
  std::string instance;
};

// A journaled call: its intent, and its outcome once it has one.
struct JournalEntry {
  JournalIntent intent;
  std::optional<std::string> outcome;  // nullopt = running (or died with its process)
  std::optional<std::chrono::system_clock::time_point> ended;
  // The result the tool returned (CallToolResult JSON), recorded with the
  // outcome for replay; null when none was recorded (no outcome yet, an
  // interrupted call, a result too large, and always in read_journal).
  nlohmann::json result;
  // The call has an outcome, but its result was larger than
  // kMaxReplayResultBytes and was not recorded: it cannot be replayed.
  bool result_too_large = false;
  // Only from read_journal: no outcome, and a live process holds its slot
  // (PostgreSQL: its instance holds its lock), so the call may still be
  // running. No outcome and not running: the process died during the call,
  // and it is marked interrupted soon (see above).
  bool running = false;
  // The instance that began the call (PostgreSQL; "" in RocksDB).
  std::string instance;
  // Only from find_by_key of a spool (spooled_journal_store.h): the call
  // ended and this process knows its outcome, but could not write it to the
  // store yet. outcome is nullopt; the call must not run again.
  bool outcome_pending = false;
};

struct AuditQuery {
  std::optional<std::chrono::system_clock::time_point> since;
  std::string tool;       // "" = any
  std::string principal;  // "" = any
  std::size_t limit = 0;  // 0 = all; else the newest `limit`
};

// Called with each entry or record in turn by the for_each_ readers below;
// returning false stops the reading there (with success).
using JournalEntryFn = std::function<bool(const JournalEntry&)>;
using AuditRecordFn = std::function<bool(const AuditRecord&)>;

// A transaction of the store lent to the tool of a journaled call
// (catalog/store_transaction.h), ended by JournalStore::finish_in.
class LentTransaction : public StoreTransaction {
 public:
  // The tool ran a statement in it: its change is to commit with the
  // outcome (finish_in), or roll_back().
  virtual bool begun() const = 0;
  // Rolls back the tool's change and closes the transaction; does nothing
  // when it is closed. The destructor does it too.
  virtual void roll_back() = 0;
  // After a failed finish_in: the connection broke during COMMIT, so whether
  // the change and the outcome committed (both or neither) is not known.
  virtual bool fate_unknown() const = 0;
};

class JournalStore {
 public:
  // Opens the store the options name (PostgreSQL when options.postgres is
  // set, else RocksDB), creating what is missing, and marks the intents left
  // without an outcome by dead processes interrupted (interrupted()); removes
  // audit records past the retention. That implementation's open says how it
  // fails.
  static Result<std::unique_ptr<JournalStore>> open(const JournalStoreOptions& options);
  virtual ~JournalStore() = default;

  // Writes the intent (durably) and, when it has an idempotency key, indexes
  // it under (principal, key). invalid_argument when the call id is already
  // journaled or the key is already indexed for this principal (find_by_key
  // first), unless that call ended without finishing (an outcome other than
  // "ok" or "tool_error": interrupted, timed out, cancelled, ...): then the
  // call starts again in an entry of its own, which the id and the key now
  // name, the earlier entry left as it was. io_error on a storage failure
  // (unavailable when a shared store cannot be reached).
  virtual Status begin(const JournalIntent& intent) = 0;
  // Records the outcome of a journaled call, with `result` for replay, and
  // appends `audit`, atomically and durably: both are written or neither.
  // not_found when `call_id` has no intent; invalid_argument when it has an
  // outcome already, unless that outcome is "interrupted" and the entry is
  // the newest of its call id: then the call was taken for dead while it
  // ran (its instance lost the store, or its outcome waited in a spool), and
  // what it came to replaces "interrupted" (the audit trail keeps both).
  virtual Status finish(const std::string& call_id, const std::string& outcome,
                        const nlohmann::json& result, const AuditRecord& audit) = 0;
  // A transaction for the tool of a journaled call to make its change in,
  // begun by its first statement; null when this store lends none (RocksDB).
  virtual std::shared_ptr<LentTransaction> lend_transaction() { return nullptr; }
  // finish(), written in `transaction` (begun()) and committed with the tool's
  // change: all of it or none. On failure, finish()'s Status, or the commit's,
  // and nothing is written: the change is rolled back, unless
  // transaction.fate_unknown(). The transaction is closed after it.
  virtual Status finish_in(LentTransaction& transaction, const std::string& call_id,
                           const std::string& outcome, const nlohmann::json& result,
                           const AuditRecord& audit) {
    transaction.roll_back();
    return finish(call_id, outcome, result, audit);
  }
  // Appends one audit record (a call that wrote no intent: a read, a refusal,
  // a replay). RocksDB does not sync it (the operating system writes it
  // soon); PostgreSQL commits it.
  virtual Status audit(const AuditRecord& record) = 0;

  // The journaled call `principal` made with idempotency key `key`, if any:
  // running (no outcome), finished (its outcome and recorded result, or
  // result_too_large), or "interrupted" (no result: the call died with an
  // earlier process and must not be run again by itself). nullopt too when
  // the store cannot be read; begin() then refuses a key in use all the same.
  virtual std::optional<JournalEntry> find_by_key(const std::string& principal,
                                                  const std::string& key) const = 0;
  // The newest `limit` audit records, newest first: RocksDB, of this store's
  // slot (the calls this process and earlier holders of its slot made);
  // PostgreSQL, of every instance. Records that cannot be read are skipped.
  virtual std::vector<AuditRecord> latest_audit(std::size_t limit) const = 0;
  // The calls open() found interrupted, oldest first (at most the 1024
  // oldest; every one is marked in the store).
  virtual const std::vector<JournalEntry>& interrupted() const = 0;
  // Where the journal is, for logs: a folder, or a PostgreSQL host, port and
  // database (never a password).
  virtual std::string where() const = 0;

  // Checks the store's hold on its calls and takes it again when it was lost
  // (PostgreSQL: this instance's lock, after the server restarted); a spool
  // calls it every few seconds. Nothing to do for RocksDB.
  virtual Status keep_alive() { return Status::ok_status(); }
  // Whether a call's audit record can be written or kept now: a failure when
  // the store is unreachable and its spool is full, so that a new call can
  // be refused rather than run unaudited.
  virtual Status writable() const { return Status::ok_status(); }
  // Records kept in a spool, waiting for the store (0 without one).
  virtual std::size_t kept() const { return 0; }
};

// For `toolmux journal` and `toolmux audit` on RocksDB (PostgreSQL's readers
// are in pg_journal_store.h): every slot of data_dir/journal,
// opened read-only (a running server keeps writing meanwhile; nothing is
// written). A slot whose process died with intents not yet marked shows them
// with no outcome and running false. Entries oldest first (by start), records
// oldest first (by time), merged across slots; a data directory with no
// journal has none. io_error naming the slot when one cannot be read.
//
// The readers hold one iterator per slot, not the whole journal: the
// for_each_ forms hand over one entry or record at a time (read_audit with a
// limit holds at most `limit` records, to give the newest in time order).
Result<std::vector<JournalEntry>> read_journal(const std::filesystem::path& data_dir);
Result<std::vector<AuditRecord>> read_audit(const std::filesystem::path& data_dir,
                                            const AuditQuery& query);
Status for_each_journal_entry(const std::filesystem::path& data_dir, const JournalEntryFn& fn);
Status for_each_audit_record(const std::filesystem::path& data_dir, const AuditQuery& query,
                             const AuditRecordFn& fn);

}  // namespace toolmux
