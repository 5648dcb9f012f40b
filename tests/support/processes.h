// Checks on child processes, for tests of the command runner.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "tests/support/temp_dir.h"

namespace toolmux::testing {

// Whether `pid` has exited. A zombie (which nothing may reap in a container
// without an init) counts as gone.
inline bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return true;
  char state = stat[close + 2];
  return state == 'Z' || state == 'X';
}

// Waits up to 3 s for `pid` to be gone; false if it is still there.
inline bool eventually_gone(pid_t pid) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < until) {
    if (process_gone(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace toolmux::testing
