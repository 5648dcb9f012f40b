#include "src/pipeline/running_handlers.h"

namespace toolmux {

void RunningHandlers::enter() {
  std::lock_guard lock(mutex_);
  ++count_;
}

void RunningHandlers::leave() {
  std::lock_guard lock(mutex_);
  if (--count_ == 0) idle_.notify_all();
}

bool RunningHandlers::wait_until_idle(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return idle_.wait_for(lock, timeout, [this] { return count_ == 0; });
}

}  // namespace toolmux
