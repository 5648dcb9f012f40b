// The operator's log: one JSON object per line on stderr (stdout belongs to
// the protocol). Thread-safe; a line is written whole or not at all.
// Secrets never reach it: callers log names, sizes and outcomes, not argument
// values or tool output, and every string written is redacted
// (src/base/redact.h) all the same: known secrets and credential shapes in any
// field, and the whole value of a write() field whose key names a secret.
//
// write() writes a record at once. write_batched() is for the records of the
// hot path, one per call (tool_call): with buffer_for(interval), those below
// warning that come within `interval` of the last write wait in memory and go
// out together, so that a busy server does not pay a write system call for
// each, while a quiet one's still go out at once. A waiting record goes out at
// most `interval` after it came, when kBufferBytes are waiting, before any
// record written with write() or any warning or worse (so a crash right after
// it cannot lose it, and what the server reports of its life, such as a
// reload, is in the log when the client hears of it), on flush(), and when
// the logger is destroyed. The lines and their order are the same either way.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>

#include "src/base/log_level.h"

namespace toolmux {

// The fields of a record of the hot path, written as JSON text as they are
// added, with no JSON tree between: a call's record costs a few appends.
// Strings that are not valid UTF-8 have their bad bytes replaced by U+FFFD;
// a number that is not finite is written as null. Not thread-safe.
class LogFields {
 public:
  LogFields& add(std::string_view key, std::string_view value);
  LogFields& add(std::string_view key, const char* value) {
    return add(key, std::string_view(value));
  }
  LogFields& add(std::string_view key, double value);
  LogFields& add(std::string_view key, std::uint64_t value);
  LogFields& add(std::string_view key, bool value);
  // A duration in milliseconds, to the microsecond (append_json_milliseconds).
  LogFields& add_milliseconds(std::string_view key, double ms);
  // ,"key":value,... (empty when none was added)
  std::string_view text() const { return text_; }

 private:
  void key(std::string_view key);
  std::string text_;
};

class Logger {
 public:
  static constexpr std::size_t kBufferBytes = std::size_t{64} * 1024;

  explicit Logger(std::FILE* out = stderr, LogLevel min_level = LogLevel::info)
      : out_(out), min_level_(min_level) {}
  // Writes what is waiting.
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  // {"ts":"...","level":"info","event":"<event>", ...fields}, its keys in order
  void write(LogLevel level, std::string_view event, const nlohmann::json& fields = {});
  // {"ts":"...","level":"info","event":"<event>", ...fields} in that order,
  // for a record of the hot path, which may wait (see above).
  void write_batched(LogLevel level, std::string_view event, const LogFields& fields = {});
  bool enabled(LogLevel level) const { return level >= min_level_; }

  // From now on, batched records below warning wait up to `interval` (see above).
  // Starts the thread that writes them; call once, before sharing the logger.
  void buffer_for(std::chrono::milliseconds interval);
  // Writes what is waiting now.
  void flush();

 private:
  // Writes or buffers one whole line, by the rules above.
  void push(LogLevel level, const std::string& text, bool may_wait);
  // Writes what is waiting; called with `lock` (of mutex_) held, returns with
  // it released: the write itself holds only write_mutex_, so that other
  // threads go on adding records meanwhile.
  void write_out(std::unique_lock<std::mutex>& lock);

  std::FILE* out_;
  LogLevel min_level_;
  std::mutex mutex_;
  std::string pending_;  // records waiting, guarded by mutex_
  // Taken under mutex_ and held while writing: the writes go out in order.
  std::mutex write_mutex_;
  std::string
      writing_;  // what is being written (pending_'s buffer before), guarded by write_mutex_
  bool buffered_ = false;  // guarded by mutex_
  std::chrono::milliseconds interval_{0};
  std::chrono::steady_clock::time_point last_out_;  // of the last write, guarded by mutex_
  std::condition_variable wake_;                    // pending_ got its first record, or stopping_
  bool stopping_ = false;
  std::thread flusher_;
};

}  // namespace toolmux
