#include "src/store/search_memory_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace toolmux {

namespace {

namespace fs = std::filesystem;

std::string errno_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// Closes a descriptor when it goes.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now; 0 or the errno of close().
  int close() {
    const int fd = std::exchange(fd_, -1);
    return fd >= 0 && ::close(fd) != 0 ? errno : 0;
  }

 private:
  int fd_;
};

}  // namespace

Result<std::string> read_search_memory_file(const fs::path& file) {
  Descriptor fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (fd.get() < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::not_found("no " + file.string());
    return Status::io_error("cannot open " + file.string() + ": " + errno_text(errno));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0)
    return Status::io_error("cannot read " + file.string() + ": " + errno_text(errno));
  if (!S_ISREG(info.st_mode)) return Status::io_error(file.string() + " is not a regular file");
  // Read up to one byte past the bound, whatever the size said: the file may grow.
  std::string bytes;
  char chunk[1 << 16];
  while (bytes.size() <= SearchMemory::kMaxBytes) {
    const ssize_t n = ::read(fd.get(), chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::io_error("cannot read " + file.string() + ": " + errno_text(errno));
    if (n == 0) return bytes;
    bytes.append(chunk, static_cast<std::size_t>(n));
  }
  return Status::resource_exhausted(file.string() + " is larger than " +
                                    std::to_string(SearchMemory::kMaxBytes) + " bytes");
}

Status write_search_memory_file(const fs::path& file, std::string_view bytes) {
  const fs::path folder = file.parent_path();
  std::error_code ec;
  if (!folder.empty()) fs::create_directories(folder, ec);
  if (ec)
    return Status::io_error("cannot make the folder " + folder.string() + ": " + ec.message());
  // This process's own temporary name: two processes saving at once do not
  // write into one file.
  const fs::path temporary = file.string() + "." + std::to_string(::getpid()) + ".tmp";
  Descriptor fd(
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (fd.get() < 0) {
    return Status::io_error("cannot write " + temporary.string() + ": " + errno_text(errno));
  }
  int error = 0;
  for (std::string_view rest = bytes; !rest.empty() && error == 0;) {
    const ssize_t n = ::write(fd.get(), rest.data(), rest.size());
    if (n >= 0) {
      rest.remove_prefix(static_cast<std::size_t>(n));
    } else if (errno != EINTR) {
      error = errno;
    }
  }
  // On disk before it replaces the old file: a crash leaves one or the other.
  if (error == 0 && ::fsync(fd.get()) != 0) error = errno;
  if (const int closed = fd.close(); error == 0) error = closed;
  if (error == 0 && ::rename(temporary.c_str(), file.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    return Status::io_error("cannot write " + file.string() + ": " + errno_text(error));
  }
  // The rename on disk too (best effort: some file systems refuse).
  const fs::path where = folder.empty() ? fs::path(".") : folder;
  if (Descriptor dir(::open(where.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); dir.get() >= 0)
    ::fsync(dir.get());
  return Status::ok_status();
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
