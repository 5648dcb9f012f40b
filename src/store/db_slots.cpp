#include "src/store/db_slots.h"

#include <fcntl.h>
#include <unistd.h>

#include <rocksdb/env.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdarg>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

namespace toolmux {

namespace {

namespace fs = std::filesystem;

// The slots this process holds, by folder (SlotClaim).
struct Claims {
  std::mutex mutex;
  std::set<std::string> folders;
};

Claims& claims() {
  static Claims* all = new Claims();  // never destroyed: claims may go at exit
  return *all;
}

// One spelling per folder, symbolic links resolved: a reader that names the
// data directory another way must still find this process's claim.
std::string claim_key(const fs::path& folder) {
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(folder, ec);
  return (ec ? folder : resolved).lexically_normal().string();
}

bool claimed(const fs::path& folder) {
  Claims& all = claims();
  std::lock_guard<std::mutex> lock(all.mutex);
  return all.folders.count(claim_key(folder)) > 0;
}

// N of a folder named slot-N; false for any other name.
bool slot_number(const std::string& name, std::size_t& n) {
  constexpr std::string_view kPrefix = "slot-";
  if (name.size() <= kPrefix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0) {
    return false;
  }
  const char* first = name.data() + kPrefix.size();
  const char* last = name.data() + name.size();
  auto [end, ec] = std::from_chars(first, last, n);
  return ec == std::errc() && end == last;
}

// A read-only open may race a writer's flush or compaction (a file it listed
// is gone when it opens it): it is tried again this many times.
constexpr int kReadOnlyOpenAttempts = 4;

// RocksDB's info log, for readers: nothing (see open_slot_read_only).
class NoInfoLog final : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
};

}  // namespace

SlotClaim::SlotClaim(const fs::path& folder) : folder_(claim_key(folder)) {
  Claims& all = claims();
  std::lock_guard<std::mutex> lock(all.mutex);
  all.folders.insert(folder_.string());
}

SlotClaim::SlotClaim(SlotClaim&& other) noexcept : folder_(std::move(other.folder_)) {
  other.folder_.clear();
}

SlotClaim& SlotClaim::operator=(SlotClaim&& other) noexcept {
  if (this != &other) {
    release();
    folder_ = std::move(other.folder_);
    other.folder_.clear();
  }
  return *this;
}

SlotClaim::~SlotClaim() { release(); }

void SlotClaim::release() {
  if (folder_.empty()) return;
  Claims& all = claims();
  std::lock_guard<std::mutex> lock(all.mutex);
  all.folders.erase(folder_.string());
  folder_.clear();
}

rocksdb::Options small_db_options() {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 1 << 20;
  options.max_write_buffer_number = 2;
  options.max_background_jobs = 1;
  options.max_open_files = 32;
  options.keep_log_file_num = 2;
  options.max_log_file_size = 1 << 20;
  options.max_manifest_file_size = 4 << 20;
  options.max_total_wal_size = 8 << 20;
  return options;
}

Result<OpenedSlot> open_free_slot(const fs::path& base, std::size_t max_slots,
                                  const rocksdb::Options& options, const std::string& store) {
  std::error_code ec;
  fs::create_directories(base, ec);
  if (ec) {
    return Status::io_error("could not create " + store + " folder " + base.string() + ": " +
                            ec.message());
  }
  if (max_slots == 0) {
    return Status::resource_exhausted("no slot allowed for " + store + " in " + base.string() +
                                      " (max_slots is 0)");
  }
  std::string first_failure;
  for (std::size_t slot = 0; slot < max_slots; ++slot) {
    fs::path folder = base / ("slot-" + std::to_string(slot));
    rocksdb::DB* raw = nullptr;
    rocksdb::Status status = rocksdb::DB::Open(options, folder.string(), &raw);
    if (!status.ok()) {
      // Held by another process (or this one): IOError "lock hold by current
      // process" / "Resource temporarily unavailable". Any other failure also
      // moves on to the next slot, but is what the error reports first.
      if (first_failure.empty() || !status.IsIOError()) {
        first_failure = folder.string() + ": " + status.ToString();
      }
      continue;
    }
    OpenedSlot opened;
    opened.db.reset(raw);
    opened.claim = SlotClaim(folder);
    opened.folder = std::move(folder);
    return opened;
  }
  return Status::resource_exhausted("could not open " + store + ": none of the " +
                                    std::to_string(max_slots) + " slots in " + base.string() +
                                    " is free (" + first_failure + ")");
}

Result<std::unique_ptr<rocksdb::DB>> open_slot_read_only(const fs::path& folder,
                                                         const std::string& store) {
  rocksdb::Options options;
  options.create_if_missing = false;
  options.max_open_files = -1;
  options.info_log = silent_info_log();
  rocksdb::Status status;
  for (int attempt = 0; attempt < kReadOnlyOpenAttempts; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50 * attempt));
    rocksdb::DB* raw = nullptr;
    status = rocksdb::DB::OpenForReadOnly(options, folder.string(), &raw);
    if (status.ok()) return std::unique_ptr<rocksdb::DB>(raw);
  }
  return Status::io_error("could not read " + store + " in " + folder.string() + ": " +
                          status.ToString());
}

std::shared_ptr<rocksdb::Logger> silent_info_log() { return std::make_shared<NoInfoLog>(); }

std::vector<fs::path> existing_slots(const fs::path& base) {
  std::vector<std::pair<std::size_t, fs::path>> found;
  std::error_code ec;
  for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    std::size_t n = 0;
    if (!slot_number(it->path().filename().string(), n)) continue;
    std::error_code exists_ec;
    if (fs::exists(it->path() / "CURRENT", exists_ec)) found.emplace_back(n, it->path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  out.reserve(found.size());
  for (auto& [n, folder] : found) out.push_back(std::move(folder));
  return out;
}

bool slot_held(const fs::path& folder) {
  // This process's own slots first: opening their LOCK file here and closing
  // it again would release the lock RocksDB holds (see SlotClaim).
  if (claimed(folder)) return true;
  const int fd = ::open((folder / "LOCK").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // no LOCK: never opened for writing
  // RocksDB locks the whole file with fcntl(F_SETLK, F_WRLCK); F_GETLK says
  // whether another process holds a conflicting lock, without taking one.
  struct flock query {};
  query.l_type = F_WRLCK;
  query.l_whence = SEEK_SET;
  query.l_start = 0;
  query.l_len = 0;
  const bool held = ::fcntl(fd, F_GETLK, &query) == 0 && query.l_type != F_UNLCK;
  ::close(fd);
  return held;
}

}  // namespace toolmux
