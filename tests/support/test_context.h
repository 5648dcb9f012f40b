// A CallContext for tests that call a tool handler directly.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/tool.h"

namespace toolmux::testing {

// Cancelled once `cancel` is set or `timeout` has passed; keeps every progress
// report (from any thread) and ignores logs.
class TestContext : public CallContext {
 public:
  struct Progress {
    double progress;
    std::optional<double> total;
    std::string message;
  };

  explicit TestContext(std::chrono::milliseconds timeout = std::chrono::seconds(20))
      : deadline_(std::chrono::steady_clock::now() + timeout) {}

  bool cancelled() const override {
    return cancel.load() || std::chrono::steady_clock::now() >= deadline_;
  }
  std::chrono::steady_clock::time_point deadline() const override { return deadline_; }
  void report_progress(double progress, std::optional<double> total,
                       std::string_view message) override {
    std::lock_guard<std::mutex> lock(mutex_);
    progress_.push_back({progress, total, std::string(message)});
  }
  void log(LogLevel, const json&) override {}

  // The progress reports so far, oldest first.
  std::vector<Progress> progress() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return progress_;
  }

  std::atomic<bool> cancel{false};

 private:
  const std::chrono::steady_clock::time_point deadline_;
  mutable std::mutex mutex_;
  std::vector<Progress> progress_;
};

}  // namespace toolmux::testing
