// A long-lived child process spoken to over its stdin and stdout: the stdio
// transport of an upstream MCP server (toolmux is its client). Lines move
// through the same StdioTransport toolmux serves its own stdio with.
//
// The child is started without a shell, in its own process group, with
// exactly the environment given. Its stderr is read all the time by a thread
// of its own and handed over line by line (each line cut at a bound), so the
// child never blocks on a full stderr pipe. stop() (and the destructor) ends
// the whole process group and reaps the child.
//
// transport().read_line() is for one reader thread; write_line() may be
// called from any thread. exit_description() and stop() are thread-safe.
// Starting a child sets SIGPIPE to be ignored, process-wide: a write to a
// child that has gone fails (EPIPE) instead of ending toolmux.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "src/base/status.h"
#include "transports/stdio_transport.h"

namespace toolmux {

struct ChildCommand {
  std::vector<std::string> argv;  // argv[0] is looked up in the child's PATH when it has no '/'
  std::filesystem::path cwd;      // empty = inherit
  std::vector<std::string> env;   // "NAME=value" entries: the child's whole environment
  std::size_t max_message_bytes = std::size_t{64} << 20;  // one line on stdout, at most
};

class StdioChild {
 public:
  // Called from the stderr thread with each line (without "\n"), at most
  // kMaxStderrLine bytes of it.
  using StderrSink = std::function<void(std::string_view line)>;
  static constexpr std::size_t kMaxStderrLine = 4096;

  // Starts the child, or says why it cannot be started (spawn_child's
  // failures, src/base/process_runner.h; io_error when no pipe can be made).
  static Result<std::unique_ptr<StdioChild>> start(const ChildCommand& command,
                                                   StderrSink on_stderr);
  ~StdioChild();
  StdioChild(const StdioChild&) = delete;
  StdioChild& operator=(const StdioChild&) = delete;

  // read_line() gives the child's stdout; nullopt once it closed it (exited).
  // write_line() writes to its stdin; false once it has gone.
  StdioTransport& transport() { return *transport_; }
  pid_t pid() const { return pid_; }

  // "exited with status N" or "was killed by signal N (NAME)" once the child
  // has exited; nullopt while it runs. Waits up to `wait` for it to exit.
  std::optional<std::string> exit_description(
      std::chrono::milliseconds wait = std::chrono::milliseconds(0));

  // Ends the child: SIGTERM to its process group, SIGKILL after `grace`, then
  // reaps it. Idempotent. The transport must no longer be read after this
  // (read_line() returns nullopt once the child's stdout is closed).
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(1000));

 private:
  StdioChild() = default;
  void drain_stderr(StderrSink sink);

  pid_t pid_ = -1;
  int stdin_fd_ = -1;   // ours: the write end of the child's stdin
  int stdout_fd_ = -1;  // ours: the read end of the child's stdout
  int stderr_fd_ = -1;  // ours: the read end of the child's stderr
  std::unique_ptr<StdioTransport> transport_;
  std::thread stderr_thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;  // guards reaped_ and status_
  bool reaped_ = false;
  std::optional<std::string> status_;
};

}  // namespace toolmux
