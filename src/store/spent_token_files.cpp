#include "src/store/spent_token_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

#include "src/base/unique_fd.h"

namespace toolmux {

namespace {

using Clock = std::chrono::system_clock;

std::string why(const std::filesystem::path& path, const char* doing) {
  return "cannot " + std::string(doing) + " " + path.string() + ": " + std::strerror(errno);
}

timespec to_timespec(Clock::time_point t) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch());
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(ns);
  timespec out{};
  out.tv_sec = static_cast<time_t>(s.count());
  out.tv_nsec = static_cast<long>((ns - s).count());
  return out;
}

Clock::time_point from_timespec(const timespec& t) {
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(
      std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec)));
}

std::int64_t seconds_of(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace

SpentTokenFiles::SpentTokenFiles(std::filesystem::path folder, UniqueFd folder_fd,
                                 std::function<Clock::time_point()> now)
    : folder_(std::move(folder)), folder_fd_(std::move(folder_fd)), now_(std::move(now)) {}

Result<std::unique_ptr<SpentTokenFiles>> SpentTokenFiles::open(
    const std::filesystem::path& folder, std::function<Clock::time_point()> now) {
  std::error_code ec;
  std::filesystem::create_directories(folder.parent_path(), ec);
  if (ec) {
    return Status::io_error("cannot make " + folder.parent_path().string() + ": " + ec.message());
  }
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::io_error(why(folder, "make"));
  }
  // O_NOFOLLOW: a symbolic link planted in place of the folder is refused.
  UniqueFd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return Status::io_error(why(folder, "open the folder"));
  if (!now) now = Clock::now;
  std::unique_ptr<SpentTokenFiles> files(
      new SpentTokenFiles(folder, std::move(fd), std::move(now)));
  files->last_sweep_s_ = seconds_of(files->now_());
  files->forget_expired();
  return files;
}

Result<bool> SpentTokenFiles::spend(const std::string& token, Clock::time_point expires) {
  if (Status bad = check_spent_token(token); !bad.ok()) return bad;
  const std::int64_t now_s = seconds_of(now_());
  if (std::int64_t last = last_sweep_s_.load();
      now_s - last >= 60 && last_sweep_s_.compare_exchange_strong(last, now_s)) {
    forget_expired();
  }
  const std::filesystem::path path = folder_ / token;
  UniqueFd file(::openat(folder_fd_.get(), token.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!file) {
    if (errno == EEXIST) return false;
    return Status::io_error(why(path, "create"));
  }
  // The expiry is the file's modification time. Until it is set the file
  // reads as made now, which forget_expired() keeps for kForgetAfter.
  const timespec stamp = to_timespec(expires);
  const timespec times[2] = {stamp, stamp};
  const bool kept = ::futimens(file.get(), times) == 0 && ::fsync(file.get()) == 0;
  const int saved = errno;
  file.close();
  errno = saved;
  if (!kept || ::fsync(folder_fd_.get()) != 0) {
    const std::string failed = why(path, "write");
    ::unlinkat(folder_fd_.get(), token.c_str(), 0);
    return Status::io_error(failed);
  }
  return true;
}

void SpentTokenFiles::forget_expired() {
  // A descriptor of its own: reading the folder moves its offset.
  UniqueFd fd(::openat(folder_fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return;
  DIR* dir = ::fdopendir(fd.get());
  if (!dir) return;
  fd.release();  // the DIR has it now
  const Clock::time_point forget_before = now_() - kForgetAfter;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;  // ".", "..", and no token starts with '.'
    struct stat st {};
    if (::fstatat(folder_fd_.get(), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || from_timespec(st.st_mtim) >= forget_before) continue;
    ::unlinkat(folder_fd_.get(), entry->d_name, 0);  // gone already: another process swept it
  }
  ::closedir(dir);
}

}  // namespace toolmux
