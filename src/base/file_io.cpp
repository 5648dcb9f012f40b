#include "src/base/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "src/base/random_id.h"
#include "src/base/unique_fd.h"

namespace toolmux {

namespace {

std::string errno_text(int error) { return std::generic_category().message(error); }

// Gives `fd` `mode` when set, writes `bytes` whole into it and syncs it: 0,
// or the errno value of what failed.
int write_whole(int fd, std::string_view bytes, std::optional<mode_t> mode) {
  if (mode && ::fchmod(fd, *mode) != 0) return errno;
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return ::fsync(fd) == 0 ? 0 : errno;
}

// A name no one can guess, for a file beside the target; "" when the kernel
// gives no random bytes.
std::string temporary_name() {
  try {
    return ".toolmux-" + random_id(9) + ".tmp";
  } catch (const std::system_error&) {
    return "";
  }
}

// How many fresh names are tried before giving up: a taken one means that
// someone made a file of that random name, which happens by chance hardly ever.
constexpr int kNameAttempts = 16;

}  // namespace

std::string file_type_words(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a file of a known type";
}

Result<std::string> read_regular_file(const std::filesystem::path& path, std::size_t max_bytes,
                                      SymbolicLinks links) {
  const std::string where = "cannot read " + path.string() + ": ";
  const int no_follow = links == SymbolicLinks::refuse ? O_NOFOLLOW : 0;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | no_follow));
  if (!fd) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) return Status::not_found(where + errno_text(error));
    if (error == ELOOP && no_follow != 0) {
      return Status::invalid_argument(where + "it is a symbolic link, not a regular file");
    }
    return Status::io_error(where + errno_text(error));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return Status::io_error(where + errno_text(errno));
  if (!S_ISREG(info.st_mode)) {
    return Status::invalid_argument(where + "it is " + file_type_words(info.st_mode) +
                                    ", not a regular file");
  }
  std::string bytes;
  char chunk[1 << 16];
  while (bytes.size() <= max_bytes) {
    const std::size_t want = std::min(sizeof chunk, max_bytes + 1 - bytes.size());
    const ssize_t n = ::read(fd.get(), chunk, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::io_error(where + errno_text(errno));
    if (n == 0) return bytes;
    bytes.append(chunk, static_cast<std::size_t>(n));
  }
  return Status::resource_exhausted(where + "the file is larger than " + std::to_string(max_bytes) +
                                    " bytes");
}

Status write_file_atomically_at(int dir_fd, const std::string& name, std::string_view bytes,
                                const AtomicWriteOptions& options) {
  auto failed = [](int error) { return Status::io_error(errno_text(error)); };
  std::string temporary;  // when not empty: a file of that name holds the whole content
  // A file with no name until it is whole, so that a process killed midway
  // leaves nothing behind. Linking it needs /proc (linkat with AT_EMPTY_PATH
  // would need CAP_DAC_READ_SEARCH).
  if (::access("/proc/self/fd", X_OK) == 0) {
    UniqueFd fd(::openat(dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, options.mode));
    if (fd) {
      if (const int error = write_whole(fd.get(), bytes, options.exact_mode)) return failed(error);
      const std::string self = "/proc/self/fd/" + std::to_string(fd.get());
      if (!options.replace) {
        if (::linkat(AT_FDCWD, self.c_str(), dir_fd, name.c_str(), AT_SYMLINK_FOLLOW) != 0) {
          return failed(errno);
        }
        ::fsync(dir_fd);
        return Status::ok_status();
      }
      for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
        const std::string candidate = temporary_name();
        if (candidate.empty()) break;
        if (::linkat(AT_FDCWD, self.c_str(), dir_fd, candidate.c_str(), AT_SYMLINK_FOLLOW) == 0) {
          temporary = candidate;
          break;
        }
        if (errno != EEXIST) break;
      }
    }
  }
  if (temporary.empty()) {
    UniqueFd fd;
    std::string candidate;
    for (int attempt = 0; attempt < kNameAttempts && !fd; ++attempt) {
      candidate = temporary_name();
      if (candidate.empty()) return failed(EAGAIN);
      fd.reset(::openat(dir_fd, candidate.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, options.mode));
      if (!fd && errno != EEXIST) break;
    }
    if (!fd) return failed(errno);
    int error = write_whole(fd.get(), bytes, options.exact_mode);
    if (error == 0) error = fd.close();
    if (error != 0) {
      fd.reset();
      ::unlinkat(dir_fd, candidate.c_str(), 0);
      return failed(error);
    }
    temporary = candidate;
  }
  const bool placed = options.replace
                          ? ::renameat(dir_fd, temporary.c_str(), dir_fd, name.c_str()) == 0
                          : ::linkat(dir_fd, temporary.c_str(), dir_fd, name.c_str(), 0) == 0;
  const int error = placed ? 0 : errno;
  if (!placed || !options.replace) ::unlinkat(dir_fd, temporary.c_str(), 0);
  if (error != 0) return failed(error);
  // The new name on disk too (best effort: some file systems refuse).
  ::fsync(dir_fd);
  return Status::ok_status();
}

Status write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                             const AtomicWriteOptions& options) {
  const std::string where = "cannot write " + path.string() + ": ";
  const std::string name = path.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return Status::invalid_argument(where + "it names a folder, not a file");
  }
  const std::filesystem::path folder = path.parent_path().empty() ? "." : path.parent_path();
  UniqueFd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  // A folder one may write in but not list: written all the same, only its
  // sync is lost.
  if (!dir && errno == EACCES) dir.reset(::open(folder.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return Status::io_error(where + errno_text(errno));
  Status written = write_file_atomically_at(dir.get(), name, bytes, options);
  if (!written.ok()) return Status::io_error(where + written.message());
  return written;
}

}  // namespace toolmux
