// The key that seals the 2026-07-28 protocol's requestState
// (src/base/sealed_box.h), kept in the data directory so that a state made
// before a restart still opens after it, and one made by another toolmux
// (another data directory) never does.
#pragma once

#include <filesystem>

#include "src/base/sealed_box.h"
#include "src/base/status.h"

namespace toolmux {

// The key in `dir`/state.key, made (32 random bytes, mode 0600, written to a
// temporary file and renamed into place) when there is none. io_error naming
// the file when it cannot be read or made; invalid_argument when it is not
// 32 bytes (a damaged or foreign file: toolmux does not replace it).
Result<SealingKey> load_or_create_state_key(const std::filesystem::path& dir);

}  // namespace toolmux
