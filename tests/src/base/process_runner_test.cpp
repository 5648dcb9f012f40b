#include "src/base/process_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/processes.h"
#include "tests/support/temp_dir.h"

using namespace toolmux;
using namespace toolmux::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// The PID a script wrote to `file`, waiting for it to appear.
pid_t read_pid(const fs::path& file) {
  auto until = Clock::now() + 3s;
  while (Clock::now() < until) {
    std::string text = read_file(file);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    std::this_thread::sleep_for(10ms);
  }
  return 0;
}

std::vector<std::string> base_env() {
  const char* path = std::getenv("PATH");
  return {std::string("PATH=") + (path ? path : "/usr/bin:/bin")};
}

ProcessRequest request(std::vector<std::string> argv) {
  ProcessRequest r;
  r.argv = std::move(argv);
  r.env = base_env();
  r.deadline = Clock::now() + 20s;
  return r;
}

}  // namespace

TEST_CASE("run_process captures stdout, stderr and the exit code") {
  auto outcome = run_process(request({"sh", "-c", "printf 'out'; printf 'err' >&2; exit 3"}));
  CHECK(outcome.start.ok());
  CHECK(outcome.start.message().empty());
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.term_signal == 0);
  CHECK(outcome.stdout_text == "out");
  CHECK(outcome.stderr_text == "err");
  CHECK(outcome.stdout_total_bytes == 3);
  CHECK_FALSE(outcome.timed_out);
  CHECK_FALSE(outcome.stopped);
  CHECK_FALSE(outcome.stdout_truncated);
}

TEST_CASE("run_process passes arguments verbatim, without a shell") {
  auto outcome = run_process(request({"printf", "%s|", "a b", "; rm -rf x", "$HOME", "*"}));
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.stdout_text == "a b|; rm -rf x|$HOME|*|");
}

TEST_CASE("run_process reports a missing program as a start error") {
  auto outcome = run_process(request({"toolmux-no-such-program-xyz", "a"}));
  CHECK_FALSE(outcome.start.ok());
  CHECK(outcome.start.message() == "no such program: toolmux-no-such-program-xyz");
  CHECK(outcome.start.is_not_found());

  auto absolute = run_process(request({"/nonexistent/dir/prog"}));
  CHECK_FALSE(absolute.start.ok());
  CHECK(absolute.start.message() == "no such program: /nonexistent/dir/prog");
}

TEST_CASE("run_process reports an exec failure instead of an exit status") {
  TempDir dir;
  auto script = dir.path() / "not-executable";
  write_file(script, "#!/bin/sh\necho hi\n");
  fs::permissions(script, fs::perms::owner_read | fs::perms::owner_write);
  auto outcome = run_process(request({script.string()}));
  CHECK_FALSE(outcome.start.ok());
  CHECK(outcome.start.message().find("Permission denied") != std::string::npos);
  CHECK(outcome.exit_code == -1);
}

TEST_CASE("run_process looks the program up in the child's PATH") {
  TempDir dir;
  write_file(dir.path() / "toolmux-test-tool", "#!/bin/sh\necho from-private-path\n", true);
  auto r = request({"toolmux-test-tool"});
  r.env = {"PATH=" + dir.path().string()};
  auto outcome = run_process(r);
  REQUIRE(outcome.start.ok());
  CHECK(outcome.stdout_text == "from-private-path\n");

  // Not in toolmux's own PATH, so without the child's PATH it is not found.
  auto without = request({"toolmux-test-tool"});
  without.env = {};
  CHECK_FALSE(run_process(without).start.ok());
}

TEST_CASE("run_process gives the child the environment given, and the run's marker") {
  ::setenv("TOOLMUX_RUNNER_SECRET", "leak", 1);
  auto r = request({"/usr/bin/env"});
  r.env = {"ONLY=this", "OTHER=x y"};
  auto outcome = run_process(r);
  ::unsetenv("TOOLMUX_RUNNER_SECRET");
  REQUIRE(outcome.start.ok());
  const std::string prefix = "ONLY=this\nOTHER=x y\nTOOLMUX_RUN_ID=";
  REQUIRE(outcome.stdout_text.rfind(prefix, 0) == 0);
  CHECK(outcome.stdout_text.size() == prefix.size() + 33);  // 32 hex digits and a newline
}

// A grandchild that left the process group (setsid) survived the timeout kill.
TEST_CASE("run_process kills a grandchild that left the group with setsid, at the deadline") {
  TempDir dir;
  auto pidfile = dir.path() / "pid";
  auto r =
      request({"sh", "-c", "setsid sh -c 'echo $$ > \"$1\"; exec sleep 30' sh \"$1\" & sleep 30",
               "sh", pidfile.string()});
  r.deadline = Clock::now() + 500ms;
  auto outcome = run_process(r);
  CHECK(outcome.timed_out);
  pid_t escaped = read_pid(pidfile);
  REQUIRE(escaped > 0);
  CHECK(eventually_gone(escaped));
}

TEST_CASE("run_process kills a daemonised grandchild once the child has exited") {
  TempDir dir;
  auto pidfile = dir.path() / "pid";
  // Double fork: the grandchild's parent exits at once, and it has its own session.
  auto r = request({"sh", "-c",
                    "(setsid sh -c 'echo $$ > \"$1\"; exec sleep 30' sh \"$1\" >/dev/null 2>&1 &); "
                    "while [ ! -s \"$1\" ]; do sleep 0.01; done; echo done",
                    "sh", pidfile.string()});
  auto outcome = run_process(r);
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.stdout_text == "done\n");
  pid_t escaped = read_pid(pidfile);
  REQUIRE(escaped > 0);
  CHECK(eventually_gone(escaped));
}

TEST_CASE("run_process runs the child in the working directory given") {
  TempDir dir;
  auto r = request({"pwd"});
  r.cwd = dir.path();
  auto outcome = run_process(r);
  CHECK(outcome.stdout_text == dir.path().string() + "\n");

  r.cwd = dir.path() / "missing";
  auto missing = run_process(r);
  CHECK_FALSE(missing.start.ok());
  CHECK(missing.start.message().find("working directory") != std::string::npos);
}

TEST_CASE("run_process gives the child /dev/null as stdin and no other descriptors") {
  auto outcome = run_process(request({"cat"}));
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.stdout_text.empty());

  // Even a descriptor toolmux opened without O_CLOEXEC does not reach the child.
  int stray = ::open("/dev/null", O_RDONLY);
  REQUIRE(stray > 2);
  auto fds = run_process(request(
      {"sh", "-c", "for f in $(seq 0 64); do [ -e /proc/$$/fd/$f ] && printf '%s ' $f; done"}));
  ::close(stray);
  CHECK(fds.stdout_text == "0 1 2 ");
}

TEST_CASE("run_process caps captured output but reads all of it") {
  auto r = request({"sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' a; echo done >&2"});
  r.max_stdout_bytes = 1000;
  r.max_stderr_bytes = 2;
  auto outcome = run_process(r);
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.stdout_text == std::string(1000, 'a'));
  CHECK(outcome.stdout_truncated);
  CHECK(outcome.stdout_total_bytes == 3000000);
  CHECK(outcome.stderr_text == "do");
  CHECK(outcome.stderr_truncated);
}

TEST_CASE("run_process reports the signal that ended the child") {
  auto outcome = run_process(request({"sh", "-c", "kill -TERM $$"}));
  CHECK(outcome.start.ok());
  CHECK(outcome.term_signal == SIGTERM);
  CHECK(outcome.exit_code == -1);
}

TEST_CASE("run_process kills the whole process group at the deadline") {
  TempDir dir;
  auto pidfile = dir.path() / "pid";
  auto r = request({"sh", "-c", "sleep 30 & echo $! > \"$1\"; sleep 30", "sh", pidfile.string()});
  r.deadline = Clock::now() + 300ms;
  auto start = Clock::now();
  auto outcome = run_process(r);
  auto took = Clock::now() - start;
  CHECK(outcome.start.ok());
  CHECK(outcome.timed_out);
  CHECK_FALSE(outcome.stopped);
  CHECK(outcome.term_signal == SIGKILL);
  CHECK(took < 5s);
  pid_t grandchild = read_pid(pidfile);
  REQUIRE(grandchild > 0);
  CHECK(eventually_gone(grandchild));
}

TEST_CASE("run_process kills the process group when should_stop turns true") {
  TempDir dir;
  auto pidfile = dir.path() / "pid";
  auto r = request({"sh", "-c", "sleep 30 & echo $! > \"$1\"; sleep 30", "sh", pidfile.string()});
  auto start = Clock::now();
  std::atomic<int> polls{0};
  auto outcome = run_process(r, [&] {
    ++polls;
    return Clock::now() - start > 300ms;
  });
  CHECK(outcome.stopped);
  CHECK_FALSE(outcome.timed_out);
  CHECK(Clock::now() - start < 5s);
  CHECK(polls >= 4);  // polled at least every 50 ms
  pid_t grandchild = read_pid(pidfile);
  REQUIRE(grandchild > 0);
  CHECK(eventually_gone(grandchild));
}

TEST_CASE("run_process does not wait for a leftover grandchild holding the pipes") {
  TempDir dir;
  auto pidfile = dir.path() / "pid";
  auto r = request({"sh", "-c", "sleep 30 & echo $! > \"$1\"; echo done", "sh", pidfile.string()});
  auto start = Clock::now();
  auto outcome = run_process(r);
  CHECK(Clock::now() - start < 5s);
  CHECK(outcome.exit_code == 0);
  CHECK_FALSE(outcome.timed_out);
  CHECK(outcome.stdout_text == "done\n");
  pid_t grandchild = read_pid(pidfile);
  REQUIRE(grandchild > 0);
  CHECK(eventually_gone(grandchild));
}

TEST_CASE("run_process is safe to call from many threads at once") {
  constexpr int kThreads = 8;
  std::vector<std::string> outputs(kThreads);
  std::vector<int> codes(kThreads, -2);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([i, &outputs, &codes] {
      for (int round = 0; round < 5; ++round) {
        auto outcome = run_process(request(
            {"sh", "-c", "echo $1; exit $2", "sh", std::to_string(i), std::to_string(i % 3)}));
        outputs[i] = outcome.stdout_text;
        codes[i] = outcome.exit_code;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int i = 0; i < kThreads; ++i) {
    CHECK(outputs[i] == std::to_string(i) + "\n");
    CHECK(codes[i] == i % 3);
  }
}
