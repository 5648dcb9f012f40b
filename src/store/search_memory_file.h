// The search memory (catalog/search_memory.h) kept in the data directory, in
// one plain file, data_dir/search-memory, written whole and atomically
// (src/base/file_io.h): a temporary file of a fresh random name, synced,
// renamed over the old one, the folder synced; a reader or a crash sees the
// old file or the new one, never part of one. The file holds only what SearchMemory keeps
// (normalized query terms, tool names, counts) and is made readable by its owner only (0600).
//
// SearchMemoryFile loads the file into the memory when it is made, saves the
// memory every `period` when it changed (SearchMemory::changes), and once
// more when it is destroyed. Nothing here is fatal: a file that cannot be
// read or is damaged is logged (warning search_memory_unreadable), renamed
// search-memory.damaged (replacing an earlier one) so that it can be looked
// at, and the memory starts empty; the next save writes a good file. A save
// that fails is logged (warning search_memory_not_saved) and tried again at
// the next period.
//
// Several processes may share a data directory: each loads the file when it
// starts and keeps its own memory, and each save replaces the file whole, so
// the last save wins. What another process learned meanwhile is then lost;
// that costs learning, never correctness.
//
// Thread-safe: save_now() may be called from any thread. The saving thread
// is this object's own; the destructor stops and joins it. The memory is
// shared (SearchMemory is thread-safe) and must outlive nothing here: it is
// held by a shared_ptr.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "catalog/search_memory.h"
#include "src/base/logger.h"
#include "src/base/status.h"
#include "src/store/search_memory_keeper.h"

namespace toolmux {

// The file's name inside the data directory, and a damaged file's.
inline constexpr const char* kSearchMemoryFile = "search-memory";
inline constexpr const char* kDamagedSearchMemoryFile = "search-memory.damaged";

// The file's bytes (read_regular_file): not_found when there is none,
// resource_exhausted when it is larger than SearchMemory::kMaxBytes,
// invalid_argument when it is not a regular file (a symbolic link included:
// none is followed), io_error naming the path when it cannot be read.
Result<std::string> read_search_memory_file(const std::filesystem::path& file);
// Writes `bytes` to `file` atomically (see above), creating its folder. io_error
// naming the path on failure, with no temporary file left behind.
Status write_search_memory_file(const std::filesystem::path& file, std::string_view bytes);

class SearchMemoryFile final : public SearchMemoryKeeper {
 public:
  // Loads data_dir/search-memory into `memory` (see above). A period of zero
  // starts no thread: the memory is saved only by save_now() and the destructor.
  SearchMemoryFile(const std::filesystem::path& data_dir, std::shared_ptr<SearchMemory> memory,
                   Logger& logger, std::chrono::milliseconds period = std::chrono::minutes(5));
  SearchMemoryFile(const SearchMemoryFile&) = delete;
  SearchMemoryFile& operator=(const SearchMemoryFile&) = delete;
  // Stops the thread, then saves when the memory changed.
  ~SearchMemoryFile() override;

  // Saves now when the memory changed since it was loaded or last saved; ok
  // when there was nothing to save. The failure is also logged.
  Status save_now() override;
  std::string where() const override { return path_.string(); }

  const std::filesystem::path& path() const { return path_; }

 private:
  void load();
  void run();

  std::filesystem::path path_;
  std::shared_ptr<SearchMemory> memory_;
  Logger& logger_;
  std::chrono::milliseconds period_;
  std::mutex save_mutex_;       // one save at a time
  std::uint64_t saved_at_ = 0;  // memory_->changes() at the last load or save; under save_mutex_
  std::mutex stop_mutex_;
  std::condition_variable stop_wake_;
  bool stopping_ = false;  // under stop_mutex_
  std::thread saver_;
};

}  // namespace toolmux
