// A backup of a data directory (`toolmux store backup DIR`) and its restore
// (`toolmux store restore DIR`), beside running servers.
//
// What a backup holds: each RocksDB database of the data directory (every
// folder that holds one, a CURRENT file: journal/slot-N, results/slot-N,
// sessions) as a new database with the same keys and values, and every other
// regular file byte for byte with its permissions (state.key, search-memory,
// logins/, upstreams/, journal/spent/), but not the write freeze's file,
// symbolic links, or RocksDB's LOCK and info log files. A manifest,
// toolmux-backup.json, lists every file of the backup with its size and
// SHA-256, and each database with its count of keys.
//
// Consistency: a database is read through a read-only open (db_slots.h),
// which replays the writer's log: it sees every write the process holding it
// made before the open, synced or not, and nothing after. Every database is
// opened before any is copied, so the backup holds every write acknowledged
// before it started; the servers keep writing meanwhile, and what they write
// during the backup may or may not be in it.
//
// Both functions are one command's, on one thread; neither changes the data
// directory it backs up.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "src/base/status.h"

namespace toolmux {

// The manifest's name inside a backup.
inline constexpr const char* kBackupManifest = "toolmux-backup.json";

// One database or file of a backup, as a command prints it.
struct BackupItem {
  std::string path;         // relative to the data directory: "journal/slot-0"
  bool database = false;    // a RocksDB database (keys counted) or a plain file
  std::uint64_t keys = 0;   // a database's keys
  std::uint64_t bytes = 0;  // the size in the backup (a database: its files)
};

struct BackupSummary {
  std::vector<BackupItem> items;  // databases first, then files, each in path order
  std::uint64_t bytes = 0;        // every file of the backup, the manifest too
};

// Backs up `data_dir` into `dir`, which must not exist, or be an empty
// folder, and must not be a symbolic link nor lie inside `data_dir`. It is
// written as a folder beside `dir` (".NAME.backup-RANDOM", mode 0700: it
// holds the state key and the upstream logins), every file synced, and then
// renamed to `dir`: `dir` is a whole backup or is not there. Failures, each
// naming what was wrong: invalid_argument for such a `dir`, not_found when
// `data_dir` does not exist, resource_exhausted past kMaxBackupFiles files,
// io_error with the path and the system's or RocksDB's reason otherwise
// (nothing is left behind).
Result<BackupSummary> back_up_state(const std::filesystem::path& data_dir,
                                    const std::filesystem::path& dir);

// Most files a backup holds (the database files it writes included).
inline constexpr std::size_t kMaxBackupFiles = 100'000;

// Checks the backup in `dir` as restore_state does first: its manifest is
// there and readable, every file it lists is a regular file of that size and
// SHA-256, and every database opens, passes RocksDB's checksums of every
// block (VerifyChecksum) and holds the keys counted. invalid_argument naming
// every problem found (at most 20 named, then how many more), one a line.
Result<BackupSummary> verify_backup(const std::filesystem::path& dir);

// Restores the backup in `dir` into `data_dir`, after verify_backup. Refused
// (invalid_argument) when a live process holds a database of `data_dir`
// (a server runs on it: stop it first), even with `force`; and when
// `data_dir` exists and is not empty, unless `force`. The state is written
// beside `data_dir` (".NAME.restore-RANDOM"), every file synced, and renamed
// into place; with `force` the old data directory is moved aside first and
// removed once the new one is in place (put back when a server took one of
// its databases in between). A symbolic link at `data_dir` is followed: the
// folder it names is replaced.
Result<BackupSummary> restore_state(const std::filesystem::path& dir,
                                    const std::filesystem::path& data_dir, bool force);

}  // namespace toolmux
