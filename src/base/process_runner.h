// Runs one external program to completion, without a shell.
//
// The child gets its own process group, stdin from /dev/null, and the
// environment given plus one entry, TOOLMUX_RUN_ID=<random hex>, that marks
// this run. stdout and stderr are captured up to a cap each (the rest is read
// and dropped, so the child never blocks on a full pipe). When the deadline
// passes or should_stop() turns true, the whole process group is killed. Once
// the child exits or is killed, any process it left behind is killed too: in
// its group, and anywhere else that still carries the run's marker (a
// grandchild that left the group with setsid), so nothing it started outlives
// the call or holds it open. A process that clears its environment escapes
// the marker. Only processes created since the run began are looked at
// (process_id_window.h), so the cost does not grow with the machine's others.
// Thread-safe: each call is independent.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/base/status.h"

namespace toolmux {

// Resolves argv[0] (`name`) the way execvp would, but in `path` (a PATH
// value) and with `cwd` for relative PATH entries: the first executable
// regular file, or `name` itself when it holds a '/'. nullopt when nothing
// matches.
std::optional<std::string> find_program(const std::string& name, const std::string& path,
                                        const std::filesystem::path& cwd);

struct ProcessRequest {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH when it has no '/'
  std::filesystem::path cwd;      // empty = inherit
  std::vector<std::string> env;   // "NAME=value" entries; the child's environment (run_process
                                  // adds TOOLMUX_RUN_ID)
  std::size_t max_stdout_bytes = 1 << 20;
  std::size_t max_stderr_bytes = 64 << 10;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// How a run went. `start` is ok when the child started; otherwise it says why
// not (e.g. not_found "no such program: foo") and nothing below is set.
struct ProcessOutcome {
  Status start;
  int exit_code = -1;      // when it exited normally
  int term_signal = 0;     // when a signal ended it
  bool timed_out = false;  // killed because the deadline passed
  bool stopped = false;    // killed because should_stop() turned true
  std::string stdout_text;
  std::string stderr_text;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  std::size_t stdout_total_bytes = 0;  // everything the child wrote, kept or not
};

// Starts request.argv the way run_process does (own process group, default
// signal handling, the given environment and working directory, no other
// descriptors) with its stdin, stdout and stderr on the given descriptors
// (stdin_fd -1: /dev/null), and returns at once: the pid, or why it could not
// start (invalid_argument: no program, a working directory that is not one;
// not_found: no such program; io_error: the system refused). The caller owns
// the child: it reaps it (waitpid) and may kill its group (-pid). request's
// caps and deadline are not used.
Result<int> spawn_child(const ProcessRequest& request, int stdin_fd, int stdout_fd, int stderr_fd);

// should_stop is polled at least every 50 ms while the child runs; may be empty.
ProcessOutcome run_process(const ProcessRequest& request,
                           const std::function<bool()>& should_stop = {});

}  // namespace toolmux
