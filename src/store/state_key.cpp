#include "src/store/state_key.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "src/base/file_io.h"
#include "src/store/pg_connection.h"
#include "src/store/pg_store.h"

namespace toolmux {

namespace {

// The key in `path`; nullopt when there is no such file.
std::optional<Result<SealingKey>> read_key(const std::filesystem::path& path) {
  Result<std::string> bytes = read_regular_file(path, SealingKey::kBytes, SymbolicLinks::refuse);
  if (bytes.status().is_not_found()) return std::nullopt;
  if (!bytes.ok() && !bytes.status().is_resource_exhausted()) {
    return Result<SealingKey>(Status::io_error("the state key: " + bytes.message()));
  }
  if (!bytes.ok() || bytes->size() != SealingKey::kBytes) {
    return Result<SealingKey>(Status::invalid_argument(
        "the state key " + path.string() + " is not " + std::to_string(SealingKey::kBytes) +
        " bytes; move it away to have a new one made"));
  }
  SealingKey key;
  std::copy(bytes->begin(), bytes->end(), key.bytes.begin());
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
  // Another toolmux on the same directory may make one meanwhile: the first
  // to put its file in place wins, and both use the key on disk.
  AtomicWriteOptions how;
  how.mode = 0600;
  how.replace = false;
  const Status made = write_file_atomically(
      path, std::string_view(reinterpret_cast<const char*>(key.bytes.data()), key.bytes.size()),
      how);
  if (made.ok()) return key;
  if (auto existing = read_key(path)) return std::move(*existing);
  return Status::io_error("the state key: " + made.message());
}

Result<SealingKey> load_state_key(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "state.key";
  if (auto existing = read_key(path)) return std::move(*existing);
  return Status::not_found("there is no state key " + path.string());
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
