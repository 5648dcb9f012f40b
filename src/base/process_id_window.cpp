#include "src/base/process_id_window.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace toolmux {
namespace {

// The number in a small /proc/sys file, or nullopt.
std::optional<long> read_number(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[32];
  ssize_t n = 0;
  do {
    n = ::read(fd, buffer, sizeof buffer - 1);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buffer[n] = '\0';
  char* end = nullptr;
  const long value = std::strtol(buffer, &end, 10);
  if (end == buffer || value < 0) return std::nullopt;
  return value;
}

std::optional<long> last_pid() { return read_number("/proc/sys/kernel/ns_last_pid"); }

}  // namespace

ProcessIdWindow ProcessIdWindow::open_now() {
  static const std::optional<long> pid_max = read_number("/proc/sys/kernel/pid_max");
  return ProcessIdWindow(pid_max ? last_pid() : std::nullopt, pid_max.value_or(0));
}

ProcessIdWindow::ProcessIdWindow(std::optional<long> last, long pid_max)
    : first_(last.value_or(0)),
      last_(first_),
      pid_max_(pid_max),
      everything_(!last || pid_max <= 0) {}

void ProcessIdWindow::sample_now() {
  if (!everything_) advance_to(last_pid());
}

void ProcessIdWindow::advance_to(std::optional<long> last) {
  if (everything_) return;
  if (!last || *last >= pid_max_) {
    everything_ = true;
    return;
  }
  // Past pid_max the counter starts again low: counting the wrap as the
  // whole way round to *last overestimates, which only gives up sooner.
  travelled_ += *last >= last_ ? *last - last_ : pid_max_ - last_ + *last;
  last_ = *last;
  if (travelled_ >= pid_max_ / 2) everything_ = true;
}

std::optional<std::vector<long>> ProcessIdWindow::pids(long most) const {
  if (everything_) return std::nullopt;
  const long count = first_ <= last_ ? last_ - first_ : pid_max_ - first_ - 1 + last_;
  if (count > most) return std::nullopt;
  std::vector<long> out;
  out.reserve(static_cast<std::size_t>(count));
  // After a wrap the counter starts again at a low number (300 in the first
  // pid namespace): listing from 1 includes those below it, which are not there.
  long pid = first_;
  for (long i = 0; i < count; ++i) {
    pid = pid + 1 == pid_max_ ? 1 : pid + 1;
    out.push_back(pid);
  }
  return out;
}

bool ProcessIdWindow::covers(long pid) const {
  if (everything_) return true;
  if (first_ <= last_) return pid > first_ && pid <= last_;
  return pid > first_ || pid <= last_;
}

}  // namespace toolmux
