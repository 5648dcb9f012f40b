#include "transports/stdio_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "src/base/process_runner.h"

namespace toolmux {
namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string describe_status(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return "exited with status " + std::to_string(info.si_status);
  const char* name = ::sigabbrev_np(info.si_status);
  return "was killed by signal " + std::to_string(info.si_status) +
         (name ? " (SIG" + std::string(name) + ")" : std::string());
}

}  // namespace

Result<std::unique_ptr<StdioChild>> StdioChild::start(const ChildCommand& command,
                                                      StderrSink on_stderr) {
  // Writing to a child that has exited must fail with EPIPE, not end toolmux
  // with SIGPIPE (serve ignores it too, but upstreams start before it serves).
  ::signal(SIGPIPE, SIG_IGN);
  int in[2], out[2], err[2];
  auto pipe_error = [] {
    return Status::io_error(std::string("cannot create a pipe: ") + ::strerror(errno));
  };
  if (::pipe2(in, O_CLOEXEC) != 0) return pipe_error();
  if (::pipe2(out, O_CLOEXEC) != 0) {
    Status failed = pipe_error();
    ::close(in[0]), ::close(in[1]);
    return failed;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    Status failed = pipe_error();
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    return failed;
  }
  ProcessRequest request;
  request.argv = command.argv;
  request.cwd = command.cwd;
  request.env = command.env;
  const Result<int> pid = spawn_child(request, in[0], out[1], err[1]);
  ::close(in[0]), ::close(out[1]), ::close(err[1]);
  if (!pid.ok()) {
    ::close(in[1]), ::close(out[0]), ::close(err[0]);
    return pid.status();
  }
  std::unique_ptr<StdioChild> child(new StdioChild());
  child->pid_ = *pid;
  child->stdin_fd_ = in[1];
  child->stdout_fd_ = out[0];
  child->stderr_fd_ = err[0];
  child->transport_ = std::make_unique<StdioTransport>(out[0], in[1], command.max_message_bytes);
  child->stderr_thread_ =
      std::thread([raw = child.get(), sink = std::move(on_stderr)] { raw->drain_stderr(sink); });
  return child;
}

StdioChild::~StdioChild() {
  stop();
  close_fd(stdin_fd_);
  close_fd(stdout_fd_);
  close_fd(stderr_fd_);
}

void StdioChild::drain_stderr(StderrSink sink) {
  std::string line;
  bool cut = false;  // past kMaxStderrLine: drop bytes until "\n"
  char buffer[4096];
  auto emit = [&] {
    if (sink && !line.empty()) sink(line);
    line.clear();
  };
  while (true) {
    pollfd fd{stderr_fd_, POLLIN, 0};
    const int ready = ::poll(&fd, 1, 100);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) {
      if (stopping_.load()) break;
      continue;
    }
    const ssize_t got = ::read(stderr_fd_, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    for (ssize_t i = 0; i < got; ++i) {
      const char c = buffer[i];
      if (c == '\n') {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        emit();
        cut = false;
      } else if (!cut) {
        line.push_back(c);
        if (line.size() >= kMaxStderrLine) {
          emit();
          cut = true;
        }
      }
    }
  }
  emit();
}

std::optional<std::string> StdioChild::exit_description(std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  std::lock_guard lock(mutex_);
  while (!status_) {
    siginfo_t info{};
    // WNOWAIT: the child stays a zombie until stop() reaps it, so its process
    // group id cannot be reused while we may still signal it.
    const int rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    if (rc == 0 && info.si_pid == pid_) {
      status_ = describe_status(info);
    } else if (rc != 0 && errno != EINTR) {
      status_ = "has ended";  // ECHILD: already reaped
    } else if (std::chrono::steady_clock::now() >= until) {
      break;
    } else {
      ::usleep(10000);
    }
  }
  return status_;
}

void StdioChild::stop(std::chrono::milliseconds grace) {
  {
    std::lock_guard lock(mutex_);
    if (reaped_ || pid_ < 0) return;
  }
  stopping_.store(true);
  if (!exit_description()) {
    ::kill(-pid_, SIGTERM);
    if (!exit_description(grace)) ::kill(-pid_, SIGKILL);
  }
  std::lock_guard lock(mutex_);
  // Whatever the child left in its group goes too, before the group id is freed.
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  if (!status_) {
    status_ = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                : "was killed by signal " + std::to_string(WTERMSIG(status));
  }
  reaped_ = true;
  if (stderr_thread_.joinable()) stderr_thread_.join();
}

}  // namespace toolmux
