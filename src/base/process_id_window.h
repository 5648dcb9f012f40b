// The process ids handed out since a moment: lets the search for a run's
// leftover processes (process_runner) read only the processes created after
// the run began, not every process on the machine (reading each one's
// environment cost about 17 µs a process, 35 ms a call with 2,000 processes).
//
// Linux gives out pids in increasing order and wraps at pid_max back to a low
// number; /proc/sys/kernel/ns_last_pid is the last one given. The window is
// (the counter when it opened, the counter when last sampled], cyclic. It
// follows how far the counter travelled between samples, and covers every pid
// once that is half of pid_max or more (it may have gone round past the
// start), or when the counter cannot be read.
//
// Not thread-safe: one run samples its own window.
#pragma once

#include <optional>
#include <vector>

namespace toolmux {

class ProcessIdWindow {
 public:
  // Opens at the counter's value now, read from /proc.
  static ProcessIdWindow open_now();
  // Opens at `last` (nullopt: the counter is unreadable; covers everything).
  ProcessIdWindow(std::optional<long> last, long pid_max);

  // Reads the counter and moves the window's end to it.
  void sample_now();
  // Moves the window's end to `last` (nullopt: unreadable).
  void advance_to(std::optional<long> last);
  // Covers every pid from now on (e.g. a pid known to be new is not inside).
  void give_up() { everything_ = true; }

  bool covers(long pid) const;
  // The pids in the window, in the order given out, when there are at most
  // `most` (looking at each is then cheaper than listing /proc); else nullopt.
  std::optional<std::vector<long>> pids(long most) const;
  bool covers_everything() const { return everything_; }

 private:
  long first_ = 0;
  long last_ = 0;
  long pid_max_ = 0;
  long travelled_ = 0;
  bool everything_ = false;
};

}  // namespace toolmux
