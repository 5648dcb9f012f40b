#include "src/base/unique_fd.h"

#include <unistd.h>

#include <cerrno>
#include <utility>

namespace toolmux {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

UniqueFd::~UniqueFd() { reset(); }

int UniqueFd::release() { return std::exchange(fd_, -1); }

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

int UniqueFd::close() {
  const int fd = release();
  return fd >= 0 && ::close(fd) != 0 ? errno : 0;
}

}  // namespace toolmux
