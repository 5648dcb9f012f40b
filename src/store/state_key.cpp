#include "src/store/state_key.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include "src/store/pg_connection.h"
#include "src/store/pg_store.h"

namespace toolmux {

namespace {

std::string why(const std::filesystem::path& path, const char* doing) {
  return "cannot " + std::string(doing) + " the state key " + path.string() + ": " +
         std::strerror(errno);
}

// The key in `path`; nullopt when there is no such file.
std::optional<Result<SealingKey>> read_key(const std::filesystem::path& path) {
  SealingKey key;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    return Result<SealingKey>(Status::io_error(why(path, "open")));
  }
  {
    unsigned char extra = 0;
    const ssize_t got = ::read(fd, key.bytes.data(), key.bytes.size());
    const ssize_t more = got == static_cast<ssize_t>(key.bytes.size()) ? ::read(fd, &extra, 1) : 0;
    const int saved = errno;
    ::close(fd);
    errno = saved;
    if (got < 0 || more < 0) return Result<SealingKey>(Status::io_error(why(path, "read")));
    if (got != static_cast<ssize_t>(key.bytes.size()) || more != 0) {
      return Result<SealingKey>(Status::invalid_argument(
          "the state key " + path.string() + " is not " + std::to_string(SealingKey::kBytes) +
          " bytes; move it away to have a new one made"));
    }
  }
  return Result<SealingKey>(key);
}

}  // namespace

Result<SealingKey> load_or_create_state_key(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "state.key";
  if (auto existing = read_key(path)) return std::move(*existing);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Status::io_error("cannot make the data directory " + dir.string() + ": " + ec.message());
  }
  const SealingKey key = SealingKey::random();
  const std::filesystem::path temp = dir / ("state.key.tmp." + std::to_string(::getpid()));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Status::io_error(why(temp, "create"));
  const bool written =
      ::write(fd, key.bytes.data(), key.bytes.size()) == static_cast<ssize_t>(key.bytes.size()) &&
      ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  errno = saved;
  if (!written) {
    ::unlink(temp.c_str());
    return Status::io_error(why(temp, "write"));
  }
  // Another toolmux on the same directory may have made one meanwhile: the
  // first to link wins, and both use the key on disk.
  if (::link(temp.c_str(), path.c_str()) != 0) {
    const bool raced = errno == EEXIST;
    ::unlink(temp.c_str());
    if (raced) {
      if (auto existing = read_key(path)) return std::move(*existing);
    }
    return Status::io_error(why(path, "create"));
  }
  ::unlink(temp.c_str());
  return key;
}

Result<SealingKey> load_or_create_state_key(PgStore& store) {
  auto lease = store.pool().acquire();
  if (!lease.ok()) return lease.status();
  const SealingKey made = SealingKey::random();
  const std::string_view made_bytes(reinterpret_cast<const char*>(made.bytes.data()),
                                    made.bytes.size());
  // The first instance's insert wins; the others' do nothing.
  auto inserted = (*lease)->exec(
      "INSERT INTO toolmux_state_key (name, key) VALUES ('requestState', $1) "
      "ON CONFLICT (name) DO NOTHING",
      {PgParam::bytes(made_bytes)});
  if (!inserted.ok()) return inserted.status();
  auto stored = (*lease)->exec("SELECT key FROM toolmux_state_key WHERE name = 'requestState'");
  if (!stored.ok()) return stored.status();
  const std::string bytes = stored->rows() == 1 ? stored->bytes(0, 0) : std::string();
  SealingKey key;
  if (bytes.size() != key.bytes.size()) {
    return Status::invalid_argument("the state key in the store at " + store.target() + " is not " +
                                    std::to_string(SealingKey::kBytes) + " bytes");
  }
  std::copy(bytes.begin(), bytes.end(), key.bytes.begin());
  return key;
}

}  // namespace toolmux
