// Numbered RocksDB databases in one folder, base/slot-0, slot-1, ..., so that
// several processes can share a data directory: RocksDB allows one writer per
// database, so each process opens the lowest slot that no other holds, and a
// process restarted alone gets slot 0 back with what its predecessor left.
// The result store (data_dir/results) and the journal (data_dir/journal) keep
// their databases this way. Internal to src/store: it names RocksDB's types.
//
// Thread-safe: the functions may be called from any thread.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include "src/base/status.h"

namespace toolmux {

// This process's claim on a slot it opened for writing, so that slot_held()
// can answer for it without touching the slot's LOCK file (closing any
// descriptor of that file would drop the lock RocksDB holds on it: POSIX
// record locks are per process). Move-only; gives the claim up when
// destroyed, which must come after the database is closed.
class SlotClaim {
 public:
  SlotClaim() = default;
  explicit SlotClaim(const std::filesystem::path& folder);
  SlotClaim(SlotClaim&& other) noexcept;
  SlotClaim& operator=(SlotClaim&& other) noexcept;
  SlotClaim(const SlotClaim&) = delete;
  SlotClaim& operator=(const SlotClaim&) = delete;
  ~SlotClaim();

 private:
  void release();
  std::filesystem::path folder_;  // empty = no claim
};

// What every store's database starts from: created when missing, two write
// buffers of 1 MiB, one background job, 32 open files, two info log files of
// at most 1 MiB, an 8 MiB write-ahead log. A store that needs more sets more.
rocksdb::Options small_db_options();

// A slot opened for writing. Close `db` before `claim` goes.
struct OpenedSlot {
  std::unique_ptr<rocksdb::DB> db;
  std::filesystem::path folder;  // base/slot-N
  SlotClaim claim;
};

// Opens the lowest of base/slot-0 .. slot-(max_slots - 1) that no process
// holds, creating base and the database as needed. `store` names the store
// in messages ("the result store"). On failure a Status naming the folder and
// RocksDB's reason: resource_exhausted when every slot is taken or max_slots
// is 0, io_error when base cannot be created.
Result<OpenedSlot> open_free_slot(const std::filesystem::path& base, std::size_t max_slots,
                                  const rocksdb::Options& options, const std::string& store);

// Opens the database in `folder` read-only, for a reader beside the process
// that may hold the slot: every table file opened up front (max_open_files
// -1), so that the writer's compactions cannot pull a file from under it,
// and no info log of its own (a read-only open would otherwise rotate the
// writer's LOG file). An open that races the writer's flush or compaction (a
// file it listed is gone) is tried again a few times. io_error naming
// `store` ("the journal"), the folder and RocksDB's reason when it fails.
Result<std::unique_ptr<rocksdb::DB>> open_slot_read_only(const std::filesystem::path& folder,
                                                         const std::string& store);

// An info log that writes nothing, for a database whose own LOG file would be
// in the way (a reader beside a writer, a backup's copy).
std::shared_ptr<rocksdb::Logger> silent_info_log();

// The slot folders in `base` that hold a database (a CURRENT file), in slot
// order; none when `base` does not exist.
std::vector<std::filesystem::path> existing_slots(const std::filesystem::path& base);

// Whether a live process holds the slot's database open for writing: this one
// (a claim), or another, seen by its lock on folder/LOCK without taking the
// lock (so a process starting meanwhile still gets the slot). A process that
// died holds nothing: the kernel drops its locks.
bool slot_held(const std::filesystem::path& folder);

}  // namespace toolmux
