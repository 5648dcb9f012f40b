// MCP's logging levels (RFC 5424 severities): what toolmux's log and the
// notifications/message it sends are graded by.
#pragma once

#include <optional>
#include <string_view>

namespace toolmux {

// Lowest first.
enum class LogLevel { debug, info, notice, warning, error, critical, alert, emergency };
// "debug" -> LogLevel::debug, ...; nullopt for any other text.
std::optional<LogLevel> log_level_from_name(std::string_view name);
std::string_view log_level_name(LogLevel level);

}  // namespace toolmux
