// The key that seals the 2026-07-28 protocol's requestState
// (src/base/sealed_box.h), kept in the data directory so that a state made
// before a restart still opens after it, and one made by another toolmux
// (another data directory) never does; or kept in a deployment's PostgreSQL
// store, so that a state made by one instance opens on every other.
#pragma once

#include <filesystem>

#include "src/base/sealed_box.h"
#include "src/base/status.h"

namespace toolmux {

class PgStore;  // src/store/pg_store.h

// The key in `dir`/state.key, made (32 random bytes, mode 0600, written
// atomically, src/base/file_io.h) when there is none; a symbolic link or
// anything else but a regular file there is refused, never followed. io_error naming
// the file when it cannot be read or made; invalid_argument when it is not
// 32 bytes (a damaged or foreign file: toolmux does not replace it).
Result<SealingKey> load_or_create_state_key(const std::filesystem::path& dir);
// The key in `dir`/state.key, never made: not_found when there is none; else
// as load_or_create_state_key. For readers that must write nothing.
Result<SealingKey> load_state_key(const std::filesystem::path& dir);

// The key shared by every instance on `store` (table toolmux_state_key): 32
// random bytes inserted when the database has none (if no other instance
// inserted one first), then the one in the database read back, so that every
// instance gets the same key. The store's Status (unavailable, io_error) when
// it cannot be reached or read; invalid_argument when the stored key is not
// 32 bytes.
Result<SealingKey> load_or_create_state_key(PgStore& store);

}  // namespace toolmux
