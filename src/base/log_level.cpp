#include "src/base/log_level.h"

#include <array>
#include <utility>

namespace toolmux {
namespace {

constexpr std::array<std::pair<std::string_view, LogLevel>, 8> kLogLevels{{
    {"debug", LogLevel::debug},
    {"info", LogLevel::info},
    {"notice", LogLevel::notice},
    {"warning", LogLevel::warning},
    {"error", LogLevel::error},
    {"critical", LogLevel::critical},
    {"alert", LogLevel::alert},
    {"emergency", LogLevel::emergency},
}};

}  // namespace

std::optional<LogLevel> log_level_from_name(std::string_view name) {
  for (const auto& [text, level] : kLogLevels) {
    if (text == name) return level;
  }
  return std::nullopt;
}

std::string_view log_level_name(LogLevel level) {
  for (const auto& [text, value] : kLogLevels) {
    if (value == level) return text;
  }
  return "unknown";
}

}  // namespace toolmux
