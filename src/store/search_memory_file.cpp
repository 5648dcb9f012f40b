#include "src/store/search_memory_file.h"

#include <system_error>
#include <utility>

#include "src/base/file_io.h"

namespace toolmux {

namespace fs = std::filesystem;

Result<std::string> read_search_memory_file(const fs::path& file) {
  return read_regular_file(file, SearchMemory::kMaxBytes, SymbolicLinks::refuse);
}

Status write_search_memory_file(const fs::path& file, std::string_view bytes) {
  const fs::path folder = file.parent_path();
  std::error_code ec;
  if (!folder.empty()) fs::create_directories(folder, ec);
  if (ec)
    return Status::io_error("cannot make the folder " + folder.string() + ": " + ec.message());
  AtomicWriteOptions how;
  how.mode = 0600;
  return write_file_atomically(file, bytes, how);
}

SearchMemoryFile::SearchMemoryFile(const fs::path& data_dir, std::shared_ptr<SearchMemory> memory,
                                   Logger& logger, std::chrono::milliseconds period)
    : path_(data_dir / kSearchMemoryFile),
      memory_(std::move(memory)),
      logger_(logger),
      period_(period) {
  load();
  if (period_.count() > 0) saver_ = std::thread([this] { run(); });
}

SearchMemoryFile::~SearchMemoryFile() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_wake_.notify_all();
  if (saver_.joinable()) saver_.join();
  (void)save_now();
}

void SearchMemoryFile::load() {
  std::lock_guard lock(save_mutex_);
  Result<std::string> bytes = read_search_memory_file(path_);
  Status loaded = bytes.ok() ? memory_->from_bytes(*bytes) : bytes.status();
  saved_at_ = memory_->changes();
  if (loaded.ok() || loaded.is_not_found()) return;
  // Set aside, so that the next save does not destroy what may be looked at.
  std::error_code ec;
  const fs::path damaged = path_.parent_path() / kDamagedSearchMemoryFile;
  fs::rename(path_, damaged, ec);
  logger_.write(LogLevel::warning, "search_memory_unreadable",
                {{"path", path_.string()},
                 {"reason", loaded.message()},
                 {"moved_to", ec ? std::string() : damaged.string()},
                 {"effect", "tool_search starts learning from nothing"}});
}

Status SearchMemoryFile::save_now() {
  std::lock_guard lock(save_mutex_);
  const std::uint64_t changes = memory_->changes();
  if (changes == saved_at_) return Status::ok_status();
  Status status = write_search_memory_file(path_, memory_->to_bytes());
  if (!status.ok()) {
    logger_.write(LogLevel::warning, "search_memory_not_saved",
                  {{"path", path_.string()}, {"reason", status.message()}});
    return status;
  }
  saved_at_ = changes;
  return status;
}

void SearchMemoryFile::run() {
  std::unique_lock lock(stop_mutex_);
  while (!stopping_) {
    if (stop_wake_.wait_for(lock, period_, [this] { return stopping_; })) break;
    lock.unlock();
    (void)save_now();
    lock.lock();
  }
}

}  // namespace toolmux
