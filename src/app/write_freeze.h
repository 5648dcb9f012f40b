// The run-time write freeze: while the file data_dir/write-freeze exists,
// every tool but read_only ones is refused and left out of tools/list and
// tool_search (as with `serve --read-only`); reads keep working. `toolmux
// freeze on|off|status` writes, removes and reads it; a running server looks
// at it every second (src/app/catalog_host.h) and tells its clients the tool
// list changed. The file's text is the operator's reason, shown in refusals.
// A file survives a restart: a frozen server stays frozen.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace toolmux {

// The file's name inside the data directory.
inline constexpr const char* kWriteFreezeFile = "write-freeze";
// The longest reason kept, in bytes (a longer one is cut at a UTF-8 boundary).
inline constexpr std::size_t kMaxFreezeReasonBytes = 500;

// A reason as kept and shown: valid UTF-8, control characters as spaces,
// redacted (src/base/redact.h: the secrets this process knows and credential
// shapes), surrounding spaces trimmed, at most kMaxFreezeReasonBytes (cut at a
// character boundary). It is cleaned when written and again when read (a
// server knows secrets that `toolmux freeze` does not); the shared store's
// freeze is cleaned so too.
std::string clean_freeze_reason(std::string_view raw);

// The reason when the freeze is on ("" when the file is empty), nullopt when
// it is off. A file that cannot be read counts as on (failing safe), with a
// reason saying so.
std::optional<std::string> read_write_freeze(const std::filesystem::path& data_dir);
// Switches the freeze on with `reason` (written atomically: a temporary file
// renamed into place), or off. io_error naming the path on failure.
Status freeze_writes(const std::filesystem::path& data_dir, const std::string& reason);
Status thaw_writes(const std::filesystem::path& data_dir);

}  // namespace toolmux
