#include "src/base/process_runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string_view>
#include <system_error>
#include <vector>

#include "src/base/process_id_window.h"

namespace toolmux {
namespace {

using Clock = std::chrono::steady_clock;

// How often the loop wakes up at the latest (should_stop is polled this often).
constexpr std::chrono::milliseconds kPollInterval{50};
// After the child exited and its group was killed, how long to keep reading
// pipes that something outside the group may still hold open.
constexpr std::chrono::milliseconds kDrainGrace{500};
// How often the pid window follows the counter while the child runs.
constexpr std::chrono::milliseconds kWindowSampleEvery{10};

std::string errno_text(int error) { return std::generic_category().message(error); }

// The environment entry that marks one run's processes.
std::string new_run_marker() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device random;
  std::string marker = "TOOLMUX_RUN_ID=";
  for (int i = 0; i < 32; ++i) marker += kHex[random() & 0xF];
  return marker;
}

// Whether the environment of `pid` (as /proc shows it) holds `entry`.
bool environment_holds(const char* pid, const std::string& entry) {
  const std::string path = std::string("/proc/") + pid + "/environ";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // gone, or another user's
  // Enough for any environment we give; a longer one is not searched past it.
  constexpr std::size_t kMaxEnviron = std::size_t{1} << 20;
  std::string text;
  char buffer[16384];
  while (text.size() < kMaxEnviron) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  std::size_t at = text.find(entry);
  while (at != std::string::npos) {
    const bool starts = at == 0 || text[at - 1] == '\0';
    const std::size_t end = at + entry.size();
    if (starts && (end == text.size() || text[end] == '\0')) return true;
    at = text.find(entry, at + 1);
  }
  return false;
}

// Kills every process of this user whose environment holds `marker`, among
// those created since the run began (`window`). Passes until one finds none
// (a process may fork while a pass runs), at most a few.
void kill_marked_processes(const std::string& marker, ProcessIdWindow& window) {
  // Up to this many pids given out during the run, each is looked at; past
  // it, /proc is listed (its cost grows with every process on the machine).
  constexpr long kMostToProbe = 4096;
  const long self = ::getpid();
  for (int pass = 0; pass < 4; ++pass) {
    window.sample_now();
    int found = 0;
    auto consider = [&](long pid) {
      if (pid == self) return;
      if (!environment_holds(std::to_string(pid).c_str(), marker)) return;
      ::kill(static_cast<pid_t>(pid), SIGKILL);
      ++found;
    };
    if (auto pids = window.pids(kMostToProbe)) {
      for (const long pid : *pids) consider(pid);
    } else {
      DIR* proc = ::opendir("/proc");
      if (!proc) return;
      while (const dirent* entry = ::readdir(proc)) {
        const char* name = entry->d_name;
        if (name[0] < '1' || name[0] > '9') continue;
        // /proc lists every process; window.pids() gave only the window's.
        const long pid = std::strtol(name, nullptr, 10);
        if (window.covers(pid)) consider(pid);
      }
      ::closedir(proc);
    }
    if (found == 0) return;
  }
}

// A file descriptor closed on scope exit.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int* receive() { return &fd_; }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read_end;
  Fd write_end;
};

int make_pipe(Pipe& pipe) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errno;
  *pipe.read_end.receive() = fds[0];
  *pipe.write_end.receive() = fds[1];
  return 0;
}

bool is_executable_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return false;
  return S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The PATH the child's program is looked up in: the one in the child's
// environment when it has one, otherwise toolmux's own.
std::string search_path(const std::vector<std::string>& env) {
  for (const auto& entry : env) {
    if (entry.rfind("PATH=", 0) == 0) return entry.substr(5);
  }
  const char* own = std::getenv("PATH");
  return own ? own : "/usr/local/bin:/usr/bin:/bin";
}

// Captures one stream up to a cap, counting everything. The kept bytes
// gather in chunks and are joined once at the end: a growing string would copy
// itself at each doubling and hold two large buffers at once.
struct Capture {
  std::string* text = nullptr;
  std::size_t cap = 0;
  bool* truncated = nullptr;
  std::size_t total = 0;
  Fd* fd = nullptr;
  bool open = true;
  std::size_t kept = 0;
  std::vector<std::string> chunks;

  static constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

  // Reads what is available; returns false at end of stream or on error.
  bool read_available() {
    std::array<char, 65536> buffer;
    while (true) {
      ssize_t got = ::read(fd->get(), buffer.data(), buffer.size());
      if (got > 0) {
        auto n = static_cast<std::size_t>(got);
        total += n;
        if (kept < cap) {
          std::size_t keep = std::min(n, cap - kept);
          keep_bytes(buffer.data(), keep);
          if (keep < n) *truncated = true;
        } else {
          *truncated = true;
        }
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      return false;  // 0 = end of stream; other errors end the stream too
    }
  }

  void keep_bytes(const char* data, std::size_t n) {
    kept += n;
    while (n > 0) {
      if (chunks.empty() || chunks.back().size() == kChunkBytes) {
        chunks.emplace_back();
        chunks.back().reserve(std::min(kChunkBytes, cap));
      }
      std::string& chunk = chunks.back();
      const std::size_t take = std::min(n, kChunkBytes - chunk.size());
      chunk.append(data, take);
      data += take;
      n -= take;
    }
  }

  // Joins the chunks into *text, freeing each as it goes.
  void finish() {
    text->reserve(kept);
    for (std::string& chunk : chunks) {
      text->append(chunk);
      std::string().swap(chunk);
    }
    chunks.clear();
  }

  void close() {
    fd->reset();
    open = false;
  }
};

class SpawnAttributes {
 public:
  SpawnAttributes() { ok_ = ::posix_spawnattr_init(&attr_) == 0; }
  ~SpawnAttributes() {
    if (ok_) ::posix_spawnattr_destroy(&attr_);
  }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  posix_spawnattr_t* get() { return &attr_; }
  bool ok() const { return ok_; }

 private:
  posix_spawnattr_t attr_{};
  bool ok_ = false;
};

class SpawnFileActions {
 public:
  SpawnFileActions() { ok_ = ::posix_spawn_file_actions_init(&actions_) == 0; }
  ~SpawnFileActions() {
    if (ok_) ::posix_spawn_file_actions_destroy(&actions_);
  }
  SpawnFileActions(const SpawnFileActions&) = delete;
  SpawnFileActions& operator=(const SpawnFileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }
  bool ok() const { return ok_; }

 private:
  posix_spawn_file_actions_t actions_{};
  bool ok_ = false;
};

// Sets up the child: own process group, default signal handling, empty signal
// mask, stdin from `stdin_fd` (-1: /dev/null), stdout/stderr into the pipes, working directory,
// and no other descriptors. Returns an errno value (0 on success).
int prepare_spawn(SpawnAttributes& attr, SpawnFileActions& actions, const ProcessRequest& request,
                  int stdin_fd, int stdout_fd, int stderr_fd) {
  if (!attr.ok() || !actions.ok()) return ENOMEM;
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaddset(&defaults, sig);
  }
  sigset_t empty;
  sigemptyset(&empty);
  short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  if (int rc = ::posix_spawnattr_setflags(attr.get(), flags)) return rc;
  if (int rc = ::posix_spawnattr_setpgroup(attr.get(), 0)) return rc;
  if (int rc = ::posix_spawnattr_setsigdefault(attr.get(), &defaults)) return rc;
  if (int rc = ::posix_spawnattr_setsigmask(attr.get(), &empty)) return rc;

  auto* fa = actions.get();
  if (stdin_fd >= 0) {
    if (int rc = ::posix_spawn_file_actions_adddup2(fa, stdin_fd, STDIN_FILENO)) return rc;
  } else if (int rc =
                 ::posix_spawn_file_actions_addopen(fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0)) {
    return rc;
  }
  if (int rc = ::posix_spawn_file_actions_adddup2(fa, stdout_fd, STDOUT_FILENO)) return rc;
  if (int rc = ::posix_spawn_file_actions_adddup2(fa, stderr_fd, STDERR_FILENO)) return rc;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  // Everything toolmux opens is O_CLOEXEC; this also covers descriptors a
  // library may have opened without it.
  if (int rc = ::posix_spawn_file_actions_addclosefrom_np(fa, 3)) return rc;
#endif
  if (!request.cwd.empty()) {
    if (int rc = ::posix_spawn_file_actions_addchdir_np(fa, request.cwd.c_str())) return rc;
  }
  return 0;
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// True when the child has exited (it stays a zombie: not reaped, so its pid,
// which is also its process group's id, cannot be reused yet).
bool child_has_exited(pid_t pid) {
  siginfo_t info{};
  while (true) {
    int rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (rc == 0) return info.si_pid == pid;
    if (errno == EINTR) continue;
    return true;  // ECHILD: nothing to wait for (someone else reaped it)
  }
}

}  // namespace

std::optional<std::string> find_program(const std::string& name, const std::string& path,
                                        const std::filesystem::path& cwd) {
  if (name.find('/') != std::string::npos) return name;
  std::string_view rest = path;
  while (true) {
    auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty()) dir = ".";
    std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (candidate.is_relative() && !cwd.empty()) candidate = cwd / candidate;
    if (is_executable_file(candidate.string())) return candidate.string();
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

Result<int> spawn_child(const ProcessRequest& request, int stdin_fd, int stdout_fd, int stderr_fd) {
  if (request.argv.empty() || request.argv[0].empty()) {
    return Status::invalid_argument("no program given");
  }
  const std::string& program_name = request.argv[0];
  if (!request.cwd.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(request.cwd, ec)) {
      return Status::invalid_argument(
          "working directory " + request.cwd.string() +
          (ec ? ": " + ec.message() : std::string(" is not a directory")));
    }
  }
  auto program = find_program(program_name, search_path(request.env), request.cwd);
  if (!program) return Status::not_found("no such program: " + program_name);
  std::vector<char*> argv;
  argv.reserve(request.argv.size() + 1);
  for (const auto& arg : request.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(request.env.size() + 1);
  for (const auto& entry : request.env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  SpawnAttributes attr;
  SpawnFileActions actions;
  if (int rc = prepare_spawn(attr, actions, request, stdin_fd, stdout_fd, stderr_fd); rc != 0) {
    return Status::io_error("cannot prepare to start " + program_name + ": " + errno_text(rc));
  }
  pid_t pid = -1;
  // glibc's posix_spawn reports a failed exec (and a failed chdir) as its result.
  int spawn_rc =
      ::posix_spawn(&pid, program->c_str(), actions.get(), attr.get(), argv.data(), envp.data());
  if (spawn_rc == ENOENT) return Status::not_found("no such program: " + program_name);
  if (spawn_rc != 0) {
    return Status::io_error("cannot start " + program_name + ": " + errno_text(spawn_rc));
  }
  return static_cast<int>(pid);
}

ProcessOutcome run_process(const ProcessRequest& request,
                           const std::function<bool()>& should_stop) {
  ProcessOutcome outcome;
  Pipe out;
  Pipe err;
  if (int rc = make_pipe(out); rc != 0) {
    outcome.start = Status::io_error("cannot create a pipe: " + errno_text(rc));
    return outcome;
  }
  if (int rc = make_pipe(err); rc != 0) {
    outcome.start = Status::io_error("cannot create a pipe: " + errno_text(rc));
    return outcome;
  }
  ProcessRequest marked = request;
  const std::string marker = new_run_marker();
  marked.env.push_back(marker);
  ProcessIdWindow window = ProcessIdWindow::open_now();
  const Result<int> spawned = spawn_child(marked, -1, out.write_end.get(), err.write_end.get());
  if (!spawned.ok()) {
    outcome.start = spawned.status();
    return outcome;
  }
  const pid_t pid = *spawned;
  window.sample_now();
  // A /proc or counter of another pid namespace than the one pids come from.
  if (!window.covers(pid)) window.give_up();
  Clock::time_point sampled = Clock::now();
  out.write_end.reset();
  err.write_end.reset();
  set_nonblocking(out.read_end.get());
  set_nonblocking(err.read_end.get());

  Capture captures[2];
  captures[0].text = &outcome.stdout_text;
  captures[0].cap = request.max_stdout_bytes;
  captures[0].truncated = &outcome.stdout_truncated;
  captures[0].fd = &out.read_end;
  captures[1].text = &outcome.stderr_text;
  captures[1].cap = request.max_stderr_bytes;
  captures[1].truncated = &outcome.stderr_truncated;
  captures[1].fd = &err.read_end;

  bool killed = false;
  bool exited = false;
  Clock::time_point drain_until{};
  // The group, then whatever left it (setsid) but still carries the marker.
  auto kill_group = [&] {
    ::kill(-pid, SIGKILL);
    kill_marked_processes(marker, window);
  };

  while (true) {
    // Often enough that the counter cannot go half way round unseen.
    if (Clock::now() - sampled >= kWindowSampleEvery) {
      window.sample_now();
      sampled = Clock::now();
    }
    if (!exited && child_has_exited(pid)) {
      exited = true;
      // Whatever the child left behind in its group goes too, so that a
      // leftover holding the pipes cannot keep the call open.
      kill_group();
      drain_until = Clock::now() + kDrainGrace;
    }
    if (!captures[0].open && !captures[1].open) {
      if (exited) break;
    }
    if (exited && Clock::now() >= drain_until) break;
    if (!killed && !exited) {
      if (Clock::now() >= request.deadline) {
        outcome.timed_out = true;
        killed = true;
        kill_group();
      } else if (should_stop && should_stop()) {
        outcome.stopped = true;
        killed = true;
        kill_group();
      }
    }

    auto wait = kPollInterval;
    if (!killed && !exited && request.deadline != Clock::time_point::max()) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(request.deadline - Clock::now());
      wait = std::clamp(left, std::chrono::milliseconds(0), kPollInterval);
    }
    if (exited) wait = std::min(wait, std::chrono::milliseconds(10));

    pollfd fds[2];
    nfds_t count = 0;
    Capture* polled[2];
    for (auto& capture : captures) {
      if (!capture.open) continue;
      fds[count] = pollfd{capture.fd->get(), POLLIN, 0};
      polled[count] = &capture;
      ++count;
    }
    if (count == 0) {
      // Both pipes are closed but the child has not exited yet: wait for it.
      ::poll(nullptr, 0, static_cast<int>(std::min(wait, std::chrono::milliseconds(10)).count()));
      continue;
    }
    int ready = ::poll(fds, count, static_cast<int>(wait.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      // Should not happen; avoid a busy loop and fall through to the checks.
      ::poll(nullptr, 0, 10);
      continue;
    }
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      if (!polled[i]->read_available()) polled[i]->close();
    }
  }

  // Pipes held open by something outside the group are abandoned here.
  for (auto& capture : captures) {
    if (capture.open) {
      capture.read_available();
      capture.close();
    }
  }
  for (auto& capture : captures) capture.finish();
  outcome.stdout_total_bytes = captures[0].total;

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      status = -1;
      break;
    }
  }
  if (status != -1) {
    if (WIFEXITED(status)) {
      outcome.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      outcome.term_signal = WTERMSIG(status);
    }
  }
  return outcome;
}

}  // namespace toolmux
