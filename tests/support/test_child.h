// A second process for tests of what several processes share (a data
// directory's slots, a kill -9 in the middle of a write): this test binary run
// again (fork + exec; RocksDB's background threads do not survive a bare
// fork) for one hidden test case, which does nothing unless
// TOOLMUX_STORE_CHILD_DIR is set. The child writes to fd kChildOutFd and may
// wait for EOF on fd kChildInFd; its stdout and stderr go to /dev/null.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

extern char** environ;

namespace toolmux::testing {

inline constexpr int kChildOutFd = 100;
inline constexpr int kChildInFd = 101;
inline constexpr const char* kChildDirVariable = "TOOLMUX_STORE_CHILD_DIR";

struct Child {
  pid_t pid = -1;
  int from_child = -1;  // kChildOutFd's other end
  int to_child = -1;    // kChildInFd's other end
};

// Runs this binary's test case `test_name` in a child, with
// TOOLMUX_STORE_CHILD_DIR=data_dir.
inline Child spawn_child(const std::string& test_name, const std::filesystem::path& data_dir) {
  Child child;
  int out[2];
  int in[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
  std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  env_strings.push_back(std::string(kChildDirVariable) + "=" + data_dir.string());
  std::vector<char*> envp;
  envp.reserve(env_strings.size() + 1);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string name = test_name;
  char* argv[] = {exe.data(), name.data(), nullptr};
  int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  REQUIRE(devnull >= 0);
  child.pid = ::fork();
  REQUIRE(child.pid >= 0);
  if (child.pid == 0) {
    if (::dup2(out[1], kChildOutFd) < 0 || ::dup2(in[0], kChildInFd) < 0 ||
        ::dup2(devnull, 1) < 0 || ::dup2(devnull, 2) < 0) {
      ::_exit(120);
    }
    ::execve(exe.c_str(), argv, envp.data());
    ::_exit(121);
  }
  ::close(devnull);
  ::close(out[1]);
  ::close(in[0]);
  child.from_child = out[0];
  child.to_child = in[1];
  return child;
}

// Waits for the child (after SIGKILL when `kill_it`; else it sees EOF on
// kChildInFd); its exit status (-1 when killed).
inline int finish(Child& child, bool kill_it) {
  if (kill_it) ::kill(child.pid, SIGKILL);
  if (child.to_child >= 0) ::close(child.to_child);
  child.to_child = -1;
  int status = 0;
  if (::waitpid(child.pid, &status, 0) != child.pid) return -2;
  ::close(child.from_child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace toolmux::testing
