// A FIFO for tests of code that must never wait on one: when the code under
// test still waits (in open or read) after `patience`, the guard opens the
// other end and closes it, so the wait ends (an empty read) and the test
// fails on what it checks instead of hanging the suite.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace toolmux::testing {

class FifoGuard {
 public:
  explicit FifoGuard(std::filesystem::path path,
                     std::chrono::milliseconds patience = std::chrono::seconds(5))
      : path_(std::move(path)) {
    if (::mkfifo(path_.c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
    guard_ = std::thread([this, patience] {
      std::unique_lock lock(mutex_);
      if (stop_wake_.wait_for(lock, patience, [this] { return stopping_; })) return;
      while (!stopping_) {
        // Opens only while a reader has the FIFO open or waits to.
        const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
          ::close(fd);
          fired_ = true;
        }
        stop_wake_.wait_for(lock, std::chrono::milliseconds(20), [this] { return stopping_; });
      }
    });
  }
  FifoGuard(const FifoGuard&) = delete;
  FifoGuard& operator=(const FifoGuard&) = delete;
  ~FifoGuard() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    stop_wake_.notify_all();
    guard_.join();
  }

  const std::filesystem::path& path() const { return path_; }
  // True when something waited on the FIFO past the patience.
  bool fired() const { return fired_; }

 private:
  std::filesystem::path path_;
  std::mutex mutex_;
  std::condition_variable stop_wake_;
  bool stopping_ = false;
  std::atomic<bool> fired_{false};
  std::thread guard_;
};

}  // namespace toolmux::testing
