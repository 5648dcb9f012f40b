#include "src/base/logger.h"

#include <chrono>
#include <ctime>
#include <string>

namespace toolmux {
namespace {

std::string utc_timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(millis));
  return buf;
}

}  // namespace

void Logger::write(LogLevel level, std::string_view event, const nlohmann::json& fields) {
  if (!enabled(level)) return;
  nlohmann::json line{{"ts", utc_timestamp()}, {"level", log_level_name(level)}, {"event", event}};
  if (fields.is_object()) line.update(fields);
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  std::lock_guard lock(mutex_);
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
}

}  // namespace toolmux
