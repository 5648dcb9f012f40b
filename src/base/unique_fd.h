// An owned file descriptor: closed when it goes. Move-only; not thread-safe
// (one owner).
#pragma once

namespace toolmux {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  // Gives the descriptor up without closing it; -1 after.
  int release();
  // Closes the one held, if any, and holds `fd`.
  void reset(int fd = -1);
  // Closes it now: 0, or the errno of close(2). Holds none after.
  int close();

 private:
  int fd_ = -1;
};

}  // namespace toolmux
