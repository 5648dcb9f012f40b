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

Logger::~Logger() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  flush();
}

void Logger::buffer_for(std::chrono::milliseconds interval) {
  if (interval.count() <= 0 || flusher_.joinable()) return;
  interval_ = interval;
  {
    std::lock_guard lock(mutex_);
    buffered_ = true;
  }
  flusher_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      // Asleep while nothing waits; then the records that come within the
      // interval go out together.
      wake_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      if (stopping_) break;
      wake_.wait_for(lock, interval_, [this] { return stopping_; });
      write_out_locked();
    }
  });
}

void Logger::flush() {
  std::lock_guard lock(mutex_);
  write_out_locked();
}

void Logger::write_out_locked() {
  if (pending_.empty()) return;
  std::fwrite(pending_.data(), 1, pending_.size(), out_);
  std::fflush(out_);
  pending_.clear();
  last_out_ = std::chrono::steady_clock::now();
}

void Logger::write(LogLevel level, std::string_view event, const nlohmann::json& fields) {
  append(level, event, fields, false);
}

void Logger::write_batched(LogLevel level, std::string_view event, const nlohmann::json& fields) {
  append(level, event, fields, true);
}

void Logger::append(LogLevel level, std::string_view event, const nlohmann::json& fields,
                    bool may_wait) {
  if (!enabled(level)) return;
  nlohmann::json line{{"ts", utc_timestamp()}, {"level", log_level_name(level)}, {"event", event}};
  if (fields.is_object()) line.update(fields);
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  bool first = false;
  {
    std::lock_guard lock(mutex_);
    first = pending_.empty();
    pending_ += text;
    // Unbuffered, not a batched record, a warning or worse, enough waiting, or
    // the first record in a while: out now (with what waited before it, in order).
    if (!buffered_ || !may_wait || level >= LogLevel::warning || pending_.size() >= kBufferBytes ||
        std::chrono::steady_clock::now() - last_out_ >= interval_) {
      write_out_locked();
      return;
    }
  }
  if (first) wake_.notify_one();
}

}  // namespace toolmux
