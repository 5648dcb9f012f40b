// A journal store (journal_store.h) in front of another that keeps what the
// other could not write: the outcome of a call that finished while the store
// was unreachable (PostgreSQL stopped, a disk that failed a write), and the
// audit record of any call. A call that ran has acted, so what it came to
// must reach the journal, or a repeat of its idempotency key would find it
// still "running" and, once its instance is gone, "interrupted", and run it
// a second time.
//
// What cannot be written is kept in memory and in a spool file beside the
// store (appended, an outcome synced before finish() returns), and written
// in order by a thread of its own, every `retry` while any is kept, and at
// once when a repeat of a kept call's key asks for it. A spool file left by a
// process that died is written by the next one to open it, before the store
// is used (then interrupted() leaves out the calls whose outcome it wrote).
//
// find_by_key() of a key whose call's outcome is kept and still cannot be
// written gives an entry with outcome_pending set and no outcome: the call
// ended, but what it came to is not in the store yet, so a repeat must
// neither run it again nor be answered with a result the journal lacks.
//
// Bounds: at most `max_items` records and `max_bytes` of spool file; when
// they are reached, finish() and audit() fail as the store did (the record
// is lost and the caller logs it) and writable() says why, so that new
// calls can be refused until the store is back.
//
// The thread also calls the store's keep_alive() every `keep_alive`, so that
// a PostgreSQL instance takes its lock again soon after the server returns.
//
// Thread-safe: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/base/logger.h"
#include "src/store/journal_store.h"

namespace toolmux {

struct SpoolOptions {
  // The spool files are <base>-0.spool .. <base>-15.spool: this process writes
  // the first it can lock (flock) and writes what the others it can lock hold.
  std::filesystem::path base;
  std::size_t max_items = 10000;
  std::size_t max_bytes = std::size_t{64} << 20;
  std::chrono::milliseconds retry{1000};
  std::chrono::milliseconds keep_alive{2000};
  // Told when records start to be kept, when they have all been written, and
  // of records dropped (bounds, records the store refuses). May be null.
  Logger* logger = nullptr;
};

class SpooledJournalStore final : public JournalStore {
 public:
  // `store` in front of its spool: reads the spool files it can lock and
  // writes what they hold to `store` (what it cannot write stays kept), then
  // starts the thread. io_error when no spool file can be opened or locked.
  static Result<std::unique_ptr<SpooledJournalStore>> open(std::unique_ptr<JournalStore> store,
                                                           SpoolOptions options);
  ~SpooledJournalStore() override;
  SpooledJournalStore(const SpooledJournalStore&) = delete;
  SpooledJournalStore& operator=(const SpooledJournalStore&) = delete;

  Status begin(const JournalIntent& intent) override;
  Status finish(const std::string& call_id, const std::string& outcome,
                const nlohmann::json& result, const AuditRecord& audit) override;
  std::shared_ptr<LentTransaction> lend_transaction() override {
    return store_->lend_transaction();
  }
  // The store's finish_in; nothing is kept when it fails (the change is not
  // made, or nobody can tell yet): the caller finishes the call apart.
  Status finish_in(LentTransaction& transaction, const std::string& call_id,
                   const std::string& outcome, const nlohmann::json& result,
                   const AuditRecord& audit) override;
  Status audit(const AuditRecord& record) override;
  std::optional<JournalEntry> find_by_key(const std::string& principal,
                                          const std::string& key) const override;
  std::vector<AuditRecord> latest_audit(std::size_t limit) const override;
  const std::vector<JournalEntry>& interrupted() const override { return interrupted_; }
  std::string where() const override { return store_->where(); }
  Status keep_alive() override { return store_->keep_alive(); }
  Status writable() const override;
  std::size_t kept() const override;

  // Writes what is kept now, in order, until the store refuses; how many are
  // left. For tests and shutdown; the thread does it by itself.
  std::size_t write_kept() const;

 private:
  struct Kept {
    std::uint64_t id = 0;
    bool outcome = false;      // an outcome (with its audit record), else an audit record
    JournalIntent intent;      // outcome: the call's intent (principal, key, tool, digest)
    std::string outcome_name;  // outcome
    nlohmann::json result;     // outcome: for replay (null when none or too large)
    AuditRecord record;
  };
  struct SpoolFile {
    int fd = -1;  // flock()ed while open
    std::filesystem::path path;
    std::uint64_t bytes = 0;
  };

  SpooledJournalStore(std::unique_ptr<JournalStore> store, SpoolOptions options);
  Status open_spools();
  static std::string spool_line(const Kept& item);
  // Keeps `item` (appends it to the spool; synced for an outcome); false when
  // the bounds or the spool file refuse it.
  bool keep(Kept item, bool sync);
  // Writes one kept record to the store: ok (or a refusal that makes it
  // moot), or the store's failure. Not under mutex_.
  Status write_one(const Kept& item) const;
  void run();
  void log(LogLevel level, const std::string& event, const nlohmann::json& fields) const;

  // What find_by_key() (const) changes by writing kept records is mutable.

  std::unique_ptr<JournalStore> store_;
  SpoolOptions options_;
  std::vector<JournalEntry> interrupted_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  mutable std::deque<Kept> kept_;  // in order; guarded by mutex_
  std::uint64_t next_id_ = 1;      // guarded by mutex_
  mutable SpoolFile spool_;        // this process's, flock()ed; guarded by mutex_
  // Intents begun and not yet finished: what finish() keeps with an outcome.
  std::map<std::string, JournalIntent> running_;  // guarded by mutex_
  mutable bool keeping_logged_ = false;           // guarded by mutex_
  // One writer of kept records at a time (the thread, a find_by_key, open).
  mutable std::mutex writer_mutex_;
  std::thread thread_;
};

}  // namespace toolmux
