#include "src/app/write_freeze.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "src/base/file_io.h"
#include "src/base/redact.h"
#include "src/base/terminal_text.h"
#include "src/base/utf8.h"

namespace toolmux {

namespace {

namespace fs = std::filesystem;

// The reason as kept and shown: valid UTF-8, every character a terminal
// would act on (a newline the editor added, an escape sequence) a space
// (src/base/terminal_text.h), redacted (an operator may paste a token into
// it; it reaches clients' refusals and the status page), surrounding spaces
// trimmed, at most kMaxFreezeReasonBytes, cut at a character boundary after
// redaction, so that no secret is cut in two.
std::string clean_reason(std::string_view raw) {
  std::string text = redact(terminal_text(raw, Unprintable::space));
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
  // On disk before it is in place, and never through a name someone else
  // made (src/base/file_io.h): a freeze must survive a power cut too.
  AtomicWriteOptions how;
  how.mode = 0644;
  return write_file_atomically(data_dir / kWriteFreezeFile, clean_reason(reason), how);
}

Status thaw_writes(const std::filesystem::path& data_dir) {
  const fs::path path = data_dir / kWriteFreezeFile;
  if (::unlink(path.c_str()) != 0 && errno != ENOENT && errno != ENOTDIR) {
    return Status::io_error("could not remove " + path.string() + ": " + errno_text(errno));
  }
  return Status::ok_status();
}

}  // namespace toolmux
