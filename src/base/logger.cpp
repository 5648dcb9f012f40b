#include "src/base/logger.h"

#include <chrono>
#include <ctime>
#include <string>

#include "src/base/json_text.h"
#include "src/base/redact.h"

namespace toolmux {
namespace {

// Appends the wall-clock time as 2026-12-02T00:37:21.368Z. The part up to
// the second is formatted once per second per thread.
void append_utc_timestamp(std::string& out) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  thread_local std::time_t cached_secs = -1;
  thread_local char cached[64];
  if (secs != cached_secs) {
    std::tm tm{};
    gmtime_r(&secs, &tm);
    std::snprintf(cached, sizeof cached, "%04d-%02d-%02dT%02d:%02d:%02d.", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    cached_secs = secs;
  }
  out += cached;
  const auto ms = static_cast<int>(millis);
  out += static_cast<char>('0' + ms / 100);
  out += static_cast<char>('0' + ms / 10 % 10);
  out += static_cast<char>('0' + ms % 10);
  out += 'Z';
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
      write_out(lock);
      lock.lock();
    }
  });
}

void Logger::flush() {
  std::unique_lock lock(mutex_);
  write_out(lock);
}

void Logger::write_out(std::unique_lock<std::mutex>& lock) {
  if (pending_.empty()) {
    lock.unlock();
    return;
  }
  const std::lock_guard writing(write_mutex_);
  writing_.clear();
  writing_.swap(pending_);
  last_out_ = std::chrono::steady_clock::now();
  lock.unlock();
  std::fwrite(writing_.data(), 1, writing_.size(), out_);
  std::fflush(out_);
}

void LogFields::key(std::string_view key) {
  text_ += ',';
  append_json_string(text_, key);
  text_ += ':';
}

LogFields& LogFields::add(std::string_view key, std::string_view value) {
  this->key(key);
  // The scan alone on the hot path: a copy only for a value that holds a secret.
  if (needs_redaction(value)) {
    append_json_string(text_, redact(value));
  } else {
    append_json_string(text_, value);
  }
  return *this;
}

LogFields& LogFields::add(std::string_view key, double value) {
  this->key(key);
  append_json_number(text_, value);
  return *this;
}

LogFields& LogFields::add_milliseconds(std::string_view key, double ms) {
  this->key(key);
  append_json_milliseconds(text_, ms);
  return *this;
}

LogFields& LogFields::add(std::string_view key, std::uint64_t value) {
  this->key(key);
  append_json_number(text_, value);
  return *this;
}

LogFields& LogFields::add(std::string_view key, bool value) {
  this->key(key);
  text_ += value ? "true" : "false";
  return *this;
}

void Logger::write(LogLevel level, std::string_view event, const nlohmann::json& fields) {
  if (!enabled(level)) return;
  // One object with its keys in order (ts, level and event among them): the
  // lines of the server's life read as they always have.
  std::string ts;
  append_utc_timestamp(ts);
  nlohmann::json line{{"ts", ts}, {"level", log_level_name(level)}, {"event", event}};
  if (fields.is_object()) line.update(redact_json(fields));
  std::string text = json_text(line);
  text += '\n';
  push(level, text, false);
}

void Logger::write_batched(LogLevel level, std::string_view event, const LogFields& fields) {
  if (!enabled(level)) return;
  std::string text;
  text.reserve(64 + event.size() + fields.text().size());
  text += "{\"ts\":\"";
  append_utc_timestamp(text);
  text += "\",\"level\":";
  append_json_string(text, log_level_name(level));
  text += ",\"event\":";
  append_json_string(text, event);
  text += fields.text();
  text += "}\n";
  push(level, text, true);
}

void Logger::push(LogLevel level, const std::string& text, bool may_wait) {
  std::unique_lock lock(mutex_);
  const bool first = pending_.empty();
  pending_ += text;
  // Unbuffered, not a batched record, a warning or worse, enough waiting, or
  // the first record in a while: out now (with what waited before it, in order).
  if (!buffered_ || !may_wait || level >= LogLevel::warning || pending_.size() >= kBufferBytes ||
      std::chrono::steady_clock::now() - last_out_ >= interval_) {
    write_out(lock);
    return;
  }
  lock.unlock();
  if (first) wake_.notify_one();
}

}  // namespace toolmux
