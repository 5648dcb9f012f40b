// Counts tool handlers still running, including those the deadline stage
// stopped waiting for after a timeout or a cancellation, so that shutdown can
// wait for them to stop (a command tool kills its process group when told to).
// Thread-safe; shared with the handler threads, which may outlive the server.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace toolmux {

class RunningHandlers {
 public:
  void enter();
  void leave();
  // True when none is running, waiting up to `timeout` for that.
  bool wait_until_idle(std::chrono::milliseconds timeout);

 private:
  std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t count_ = 0;
};

}  // namespace toolmux
