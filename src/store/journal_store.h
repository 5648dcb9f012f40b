// What toolmux writes down about calls, in a RocksDB database in the data
// directory: the journal of mutations (each non-read-only call's intent before
// it runs, its outcome after) and the audit trail (one record per call, of
// every class), kept for a retention period.
//
// Crash safety: begin() and finish() write with sync, so an intent that
// begin() accepted survives a kill -9 or a power cut. At open, every intent
// with no outcome is a call that was running when its process died: open()
// marks each one interrupted (an outcome "interrupted" and an audit record, in
// one batch) and lists it in interrupted(); nothing is ever re-run.
//
// Replay: a call that carries an idempotency key is indexed by (principal,
// key); find_by_key() gives its entry, with the recorded result once it has
// an outcome, so a repeated call is answered without running again.
//
// Several processes may use one data directory at once: as the result store,
// the journal lives in numbered slots, data_dir/journal/slot-N, a process
// taking the lowest free one (a process restarted alone gets slot 0 back, and
// with it the intents its predecessor left). Replay and interruption are per
// slot; read_journal and read_audit read every slot.
//
// Retention: audit records older than audit_retention are deleted at open and
// then at most once an hour, on the next finish() or audit(). A journal entry
// that has an outcome goes with the same retention, counted from its end
// (with its recorded result and its idempotency key, which can then be used
// again); an entry with no outcome is kept until it gets one.
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

#include "src/base/status.h"

namespace toolmux {

// The largest result recorded for replay, in bytes of JSON text.
inline constexpr std::size_t kMaxReplayResultBytes = std::size_t{1} << 20;
// The largest arguments kept in an audit record, in bytes of JSON text.
inline constexpr std::size_t kMaxAuditArgumentsBytes = std::size_t{16} << 10;

struct JournalStoreOptions {
  std::filesystem::path data_dir;               // the journal lives in data_dir/journal/slot-N
  std::chrono::hours audit_retention{24 * 30};  // audit records older than this are removed
  std::size_t max_slots = 16;
  // The wall clock, replaceable in tests of retention.
  std::function<std::chrono::system_clock::time_point()> now = std::chrono::system_clock::now;
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
  std::string idempotency_key;  // "" = none
  std::chrono::system_clock::time_point started;
};

// One call, as `toolmux audit` shows it. Argument values are redacted before
// they get here.
struct AuditRecord {
  std::chrono::system_clock::time_point time;  // when the call ended
  std::string call_id;
  std::string principal;
  std::string session;       // "" = none
  std::string tool;          // canonical name, or as requested when it resolved to none
  std::string side_effect;   // "" when no tool was resolved
  nlohmann::json arguments;  // redacted target arguments (null = none)
  std::string confirmation;  // "not_required", "accepted", "declined", "cancelled",
                             // "unavailable" (the client cannot be asked), "replayed"
  std::string approver;      // "" = none
  std::string rationale;     // redacted; "" = none
  std::string outcome;       // call_outcome_name, or "interrupted"
  double duration_ms = 0;
  std::string idempotency_key;  // "" = none
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
  // Only from read_journal: no outcome, and a live process holds its slot, so
  // the call may still be running. No outcome and not running: the process
  // died during the call, and the next one to open the slot marks it
  // interrupted.
  bool running = false;
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

class JournalStore {
 public:
  // Opens the store (creating what is missing) and marks the intents left
  // without an outcome interrupted (interrupted()); removes audit records past
  // the retention. A Status naming the folder and RocksDB's reason when no
  // slot could be opened: resource_exhausted when every slot is taken,
  // io_error otherwise.
  static Result<std::unique_ptr<JournalStore>> open(const JournalStoreOptions& options);
  ~JournalStore();

  // Writes the intent (synced) and, when it has an idempotency key, indexes
  // it under (principal, key). invalid_argument when the call id is already
  // journaled or the key is already indexed for this principal (find_by_key
  // first), unless that call ended without finishing (an outcome other than
  // "ok" or "tool_error": interrupted, timed out, cancelled, ...): then the
  // call starts again in an entry of its own, which the id and the key now
  // name, the earlier entry left as it was. io_error on a storage failure.
  Status begin(const JournalIntent& intent);
  // Records the outcome of a journaled call, with `result` for replay, and
  // appends `audit`, in one atomic, synced batch. not_found when `call_id`
  // has no intent; invalid_argument when it has an outcome already.
  Status finish(const std::string& call_id, const std::string& outcome,
                const nlohmann::json& result, const AuditRecord& audit);
  // Appends one audit record (a call that wrote no intent: a read, a refusal,
  // a replay). Not synced: the operating system writes it soon.
  Status audit(const AuditRecord& record);

  // The journaled call `principal` made with idempotency key `key`, if any:
  // running (no outcome), finished (its outcome and recorded result, or
  // result_too_large), or "interrupted" (no result: the call died with an
  // earlier process and must not be run again by itself).
  std::optional<JournalEntry> find_by_key(const std::string& principal,
                                          const std::string& key) const;
  // The newest `limit` audit records of this store's slot (the calls this
  // process and earlier holders of its slot made), newest first. Records that
  // cannot be read are skipped.
  std::vector<AuditRecord> latest_audit(std::size_t limit) const;
  // The calls open() found interrupted, oldest first (at most the 1024
  // oldest; every one is marked in the store).
  const std::vector<JournalEntry>& interrupted() const;
  // The slot folder this store holds (data_dir/journal/slot-N).
  const std::filesystem::path& folder() const;

 private:
  struct Impl;
  explicit JournalStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// For `toolmux journal` and `toolmux audit`: every slot of data_dir/journal,
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
