#include "src/app/write_freeze.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "src/base/redact.h"
#include "src/base/utf8.h"

namespace toolmux {

namespace {

namespace fs = std::filesystem;

// The reason as kept and shown: valid UTF-8, control characters (a newline
// the editor added, a terminal escape) as spaces, redacted (an operator may
// paste a token into it; it reaches clients' refusals and the status page),
// surrounding spaces trimmed, at most kMaxFreezeReasonBytes, cut at a
// character boundary after redaction, so that no secret is cut in two.
std::string clean_reason(std::string_view raw) {
  std::string text = lossy_utf8(raw);
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  text = redact(text);
  const auto first = text.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  text = text.substr(first, text.find_last_not_of(' ') - first + 1);
  return std::string(utf8_prefix(text, kMaxFreezeReasonBytes));
}

std::string errno_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

}  // namespace

std::string clean_freeze_reason(std::string_view raw) { return clean_reason(raw); }

std::optional<std::string> read_write_freeze(const std::filesystem::path& data_dir) {
  const fs::path path = data_dir / kWriteFreezeFile;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    // Off only when there is no such file; anything else fails safe.
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    return "the write freeze file " + path.string() + " exists but could not be read (" +
           errno_text(errno) + "), so writes are refused";
  }
  // Bounded: a few bytes past the longest reason kept, so that one cut inside
  // a character can still be repaired.
  std::string raw(kMaxFreezeReasonBytes + 4, '\0');
  std::size_t got = 0;
  int error = 0;
  while (got < raw.size()) {
    const ssize_t n = ::read(fd, raw.data() + got, raw.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (error != 0) {
    return "the write freeze file " + path.string() + " exists but could not be read (" +
           errno_text(error) + "), so writes are refused";
  }
  raw.resize(got);
  return clean_reason(utf8_without_cut_tail(raw));
}

Status freeze_writes(const std::filesystem::path& data_dir, const std::string& reason) {
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  if (ec) {
    return Status::io_error("could not create the data directory " + data_dir.string() + ": " +
                            ec.message());
  }
  const fs::path path = data_dir / kWriteFreezeFile;
  // A process's own temporary name, so that two `toolmux freeze on` at once
  // do not write into one file.
  const fs::path temporary =
      data_dir / (std::string(kWriteFreezeFile) + "." + std::to_string(::getpid()) + ".tmp");
  const std::string text = clean_reason(reason);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::io_error("could not write " + temporary.string() + ": " + errno_text(errno));
  }
  std::size_t written = 0;
  int error = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno;
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  // On disk before the rename: a freeze must survive a power cut too.
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    return Status::io_error("could not write " + path.string() + ": " + errno_text(error));
  }
  // The rename itself on disk too (best effort: some file systems refuse).
  if (const int dir = ::open(data_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return Status::ok_status();
}

Status thaw_writes(const std::filesystem::path& data_dir) {
  const fs::path path = data_dir / kWriteFreezeFile;
  if (::unlink(path.c_str()) != 0 && errno != ENOENT && errno != ENOTDIR) {
    return Status::io_error("could not remove " + path.string() + ": " + errno_text(errno));
  }
  return Status::ok_status();
}

}  // namespace toolmux
