// Where the call pipeline writes down calls: the journal of mutations and the
// audit trail (src/store/journal_store.h), shared by the replay, journal and
// record stages, and by the server, which tells a session of the calls an
// earlier process left interrupted; and where the verify_confirmation stage
// spends the confirmations it lets through (src/store/spent_tokens.h), in the
// same place: the data directory, or the shared store.
//
// Opening the store (RocksDB: its files, recovery, a synced manifest) takes
// longer than the rest of toolmux's start, so `serve` opens it on a thread of
// its own (opening()): the client gets its initialize and tools/list answers
// meanwhile, and whatever needs the store (store(), unavailable()) waits for
// the open to end.
//
// Thread-safe: every method may be called from any thread at once.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "src/store/journal_store.h"
#include "src/store/spent_tokens.h"

namespace toolmux {

class CallJournal {
 public:
  // What opening the store came to.
  struct Opened {
    // Null when journaling is off (serve --no-journal) or the store could
    // not be opened.
    std::shared_ptr<JournalStore> store;
    // Why the store could not be opened ("" = it is open, or journaling is
    // off by choice). While set, a call that would be journaled does not run,
    // and no confirmation is spent.
    std::string unavailable;
    // Where spent confirmations are kept beside the store (null: in this
    // process's memory, when there is no store by choice).
    std::shared_ptr<SpentTokens> spent{};
  };

  // Journaling off: nothing is journaled or audited; spent confirmations are
  // kept in this process's memory.
  CallJournal();
  // An open store (null: off), or why there is none; spent confirmations kept
  // in `spent` (null: in this process's memory).
  explicit CallJournal(std::shared_ptr<JournalStore> store, std::string unavailable = {},
                       std::shared_ptr<SpentTokens> spent = nullptr);
  // The store as `open` makes it, on a thread of its own, started now. The
  // destructor waits for that thread.
  static std::shared_ptr<CallJournal> opening(std::function<Opened()> open);

  CallJournal(const CallJournal&) = delete;
  CallJournal& operator=(const CallJournal&) = delete;
  ~CallJournal();

  // Wait for the open to end.
  const std::shared_ptr<JournalStore>& store() const { return opened().store; }
  const std::string& unavailable() const { return opened().unavailable; }
  // The open has ended: store() and unavailable() answer at once.
  bool ready() const;

  // Spends the answer id of a confirmation (SpentTokens::spend), waiting for
  // the open: true the first time, false when it was spent before, by this
  // process or by any other that shares the store. unavailable when the
  // store could not be opened, and the store's Status when it cannot be
  // reached: the confirmation must not be acted on then.
  Result<bool> spend(const std::string& token, std::chrono::system_clock::time_point expires) const;

  // `hook` runs once the open has ended: on the opening thread, or at once
  // (here) when it already has. One hook at a time: a second replaces the
  // first, an empty one removes it, and once this returns a removed hook is
  // not running and will not run. For the one server of the process, which
  // tells its sessions of interrupted calls when it can.
  void on_ready(std::function<void()> hook) const;

 private:
  struct PrivateTag {};
  explicit CallJournal(PrivateTag) {}  // opening(): the value comes from its thread
  const Opened& opened() const { return opened_.get(); }
  void opened_now();

  std::promise<Opened> promise_;
  std::shared_future<Opened> opened_ = promise_.get_future().share();
  // Spent tokens when the open gave no place for them.
  const std::shared_ptr<SpentTokens> memory_ = std::make_shared<MemorySpentTokens>();
  std::thread opener_;                  // joinable while opening() opens (until the destructor)
  mutable std::mutex hook_mutex_;       // held while the hook runs
  mutable std::function<void()> hook_;  // guarded by hook_mutex_
  bool hook_due_ = true;                // the open has not ended; guarded by hook_mutex_
};

}  // namespace toolmux
