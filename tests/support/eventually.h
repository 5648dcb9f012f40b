// Waiting in tests for something another thread does.
#pragma once

#include <chrono>
#include <thread>

namespace toolmux::testing {

// Polls `done` until it is true (then true) or `timeout` passes (then false).
template <typename Predicate>
bool eventually(Predicate done, std::chrono::milliseconds timeout = std::chrono::seconds(3)) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace toolmux::testing
