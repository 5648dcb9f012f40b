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

struct JournalStoreOptions {
  std::filesystem::path data_dir;  // the journal lives in data_dir/journal/slot-N
  std::chrono::hours audit_retention{24 * 30};  // audit records older than this are removed
  std::size_t max_slots = 16;
  // The wall clock, replaceable in tests of retention.
  std::function<std::chrono::system_clock::time_point()> now = std::chrono::system_clock::now;
};

// Written before a non-read-only tool runs.
struct JournalIntent {
  std::string call_id;          // toolmux's id of the call (CallContext::call_id)
  std::string tool;             // canonical name
  std::string side_effect;      // "local_mutation", "remote_mutation", "destructive"
  std::string arguments_digest; // SHA-256 (hex) of the validated arguments' canonical JSON
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
  std::string session;  // "" = none
  std::string tool;     // canonical name, or as requested when it resolved to none
  std::string side_effect;         // "" when no tool was resolved
  nlohmann::json arguments;        // redacted target arguments (null = none)
  std::string confirmation;        // "not_required", "accepted", "declined", "cancelled",
                                   // "unavailable" (the client cannot be asked), "replayed"
  std::string approver;            // "" = none
  std::string rationale;           // redacted; "" = none
  std::string outcome;             // call_outcome_name, or "interrupted"
  double duration_ms = 0;
  std::string idempotency_key;     // "" = none
};

// A journaled call: its intent, and its outcome once it has one.
struct JournalEntry {
  JournalIntent intent;
  std::optional<std::string> outcome;  // nullopt = running (or died with its process)
  std::optional<std::chrono::system_clock::time_point> ended;
  // The result the tool returned (CallToolResult JSON), recorded with the
  // outcome for replay; null when none was recorded.
  nlohmann::json result;
};

struct AuditQuery {
  std::optional<std::chrono::system_clock::time_point> since;
  std::string tool;       // "" = any
  std::string principal;  // "" = any
  std::size_t limit = 0;  // 0 = all; else the newest `limit`
};

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
  // first); io_error on a storage failure.
  Status begin(const JournalIntent& intent);
  // Records the outcome of a journaled call, with `result` for replay, and
  // appends `audit`, in one atomic, synced batch. not_found when `call_id`
  // has no intent; invalid_argument when it has an outcome already.
  Status finish(const std::string& call_id, const std::string& outcome,
                const nlohmann::json& result, const AuditRecord& audit);
  // Appends one audit record (a call that wrote no intent: a read, a refusal,
  // a replay). Not synced: the operating system writes it soon.
  Status audit(const AuditRecord& record);

  // The journaled call `principal` made with idempotency key `key`, if any.
  std::optional<JournalEntry> find_by_key(const std::string& principal,
                                          const std::string& key) const;
  // The calls open() found interrupted, oldest first.
  const std::vector<JournalEntry>& interrupted() const;
  // The slot folder this store holds (data_dir/journal/slot-N).
  const std::filesystem::path& folder() const;

 private:
  struct Impl;
  explicit JournalStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// For `toolmux journal` and `toolmux audit`: every slot of data_dir/journal,
// opened read-only (a running server keeps writing meanwhile). A slot whose
// process died with intents not yet marked shows them with no outcome.
// Entries oldest first.
Result<std::vector<JournalEntry>> read_journal(const std::filesystem::path& data_dir);
Result<std::vector<AuditRecord>> read_audit(const std::filesystem::path& data_dir,
                                            const AuditQuery& query);

}  // namespace toolmux
