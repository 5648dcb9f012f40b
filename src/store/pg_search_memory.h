// tool_search's memory of use (catalog/search_memory.h) shared by the
// instances of a deployment through its PostgreSQL store
// (toolmux_search_memory: per query term and tool, a count as of a time, and
// the revision of its last change).
//
// Each instance ranks with its own SearchMemory, in memory, as a single
// instance does. Every `period` its keeper's thread sends the clicks recorded
// since the last time (the memory's outbox, summed by term and tool), adding
// them to the stored counts with the same decay (count x 2^(-age / half
// life) + clicks), then reads the pairs whose revision is newer than the
// last it read, every instance's clicks, its own included, and sets them in
// its memory (SearchMemory::merge). So a tool found and called through one
// instance ranks higher on all of them within about a period. Revisions are
// taken and committed one writer at a time (kPgLockSearchMemoryWrites), so a
// reader never skips a change committed later with a smaller revision.
//
// Bounds: the store is trimmed to the memory's own bounds (max_terms terms,
// max_tools tools a term, no forgotten count) by one instance at a time
// (kPgLockSearchMemoryTrim), when the keeper starts and every
// `trim_period`; the outbox holds at most `outbox_limit` pairs (a click on a
// further pair is learned here but not shared, and counted). What a trim
// deletes stays in an instance's memory until it decays there, or the
// memory's bounds push it out.
//
// Failure costs learning, never a call: a send that fails puts the clicks
// back in the outbox for the next period (within its limit), and is logged
// once (warning search_memory_not_shared) until a send succeeds again
// (info search_memory_shared). What the store holds is read as untrusted:
// SearchMemory::merge skips what it would not have recorded.
//
// Thread-safe: sync_now() and save_now() may be called from any thread. The
// thread is this object's own; the destructor stops it and sends the outbox
// once more.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "catalog/search_memory.h"
#include "src/base/logger.h"
#include "src/base/status.h"
#include "src/store/pg_connection.h"
#include "src/store/search_memory_keeper.h"

namespace toolmux {

struct PgSearchMemoryOptions {
  // Sends and reads every period. Zero starts no thread: sync_now() and
  // trim_now() only (tests).
  std::chrono::milliseconds period{2000};
  std::chrono::milliseconds trim_period{std::chrono::minutes(10)};
  std::size_t outbox_limit = 20000;
  // The most pairs read in one statement.
  std::size_t read_batch = 5000;
};

class PgSearchMemory final : public SearchMemoryKeeper {
 public:
  // Turns on `memory`'s outbox; the first sync (which reads everything the
  // store holds) runs on the thread, so that nothing waits for the store.
  PgSearchMemory(PgPool& pool, std::shared_ptr<SearchMemory> memory, Logger& logger,
                 PgSearchMemoryOptions options = {});
  PgSearchMemory(const PgSearchMemory&) = delete;
  PgSearchMemory& operator=(const PgSearchMemory&) = delete;
  ~PgSearchMemory() override;

  std::string where() const override { return "postgresql"; }
  // Sends the outbox (only: reading is the thread's work).
  Status save_now() override;
  // Sends the outbox, then reads and merges what changed in the store.
  Status sync_now();
  // Trims the store to the bounds when no other instance is at it; the
  // number of pairs deleted.
  Result<std::size_t> trim_now();

 private:
  Status send();
  Status read_news();
  void note(const Status& status);
  void run();

  PgPool& pool_;
  std::shared_ptr<SearchMemory> memory_;
  Logger& logger_;
  PgSearchMemoryOptions options_;
  std::mutex sync_mutex_;           // one sync at a time
  std::int64_t read_revision_ = 0;  // the newest revision merged; under sync_mutex_
  bool failing_ = false;            // under sync_mutex_
  std::mutex stop_mutex_;
  std::condition_variable stop_wake_;
  bool stopping_ = false;  // under stop_mutex_
  std::thread thread_;
};

}  // namespace toolmux
