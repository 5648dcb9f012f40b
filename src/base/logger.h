// The operator's log: one JSON object per line on stderr (stdout belongs to
// the protocol). Thread-safe; a line is written whole or not at all.
// Secrets never reach it: callers log names, sizes and outcomes, not argument
// values or tool output.
#pragma once

#include <cstdio>
#include <mutex>
#include <string_view>

#include <nlohmann/json.hpp>

#include "src/base/log_level.h"

namespace toolmux {

class Logger {
 public:
  explicit Logger(std::FILE* out = stderr, LogLevel min_level = LogLevel::info)
      : out_(out), min_level_(min_level) {}

  // {"ts":"...","level":"info","event":"<event>", ...fields}
  void write(LogLevel level, std::string_view event, const nlohmann::json& fields = {});
  bool enabled(LogLevel level) const { return level >= min_level_; }

 private:
  std::FILE* out_;
  LogLevel min_level_;
  std::mutex mutex_;
};

}  // namespace toolmux
