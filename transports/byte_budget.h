// A number of bytes that holders share (a counting semaphore in bytes): the
// HTTP transport takes a request body's size from it before reading the body
// and gives it back once the parsed message is handed on, so that the bodies
// read and parsed at once (a parsed message can take many times its size)
// stay within it, however many requests come at once.
//
// Thread-safe. A holder asking for more than the whole budget is given the
// whole budget (it then holds it alone).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace toolmux {

class ByteBudget {
 public:
  explicit ByteBudget(std::size_t capacity) : capacity_(capacity) {}

  // Takes `bytes` (at most the capacity), waiting up to `wait` for them to be
  // given back by others; false, taking nothing, when they were not.
  bool acquire(std::size_t bytes, std::chrono::milliseconds wait);
  // Gives back what one acquire() took (the same `bytes`).
  void release(std::size_t bytes);

  std::size_t capacity() const { return capacity_; }
  std::size_t in_use() const;

  // Holds `bytes` of a budget until destroyed (or release()d).
  class Hold {
   public:
    Hold() = default;
    Hold(ByteBudget& budget, std::size_t bytes) : budget_(&budget), bytes_(bytes) {}
    Hold(Hold&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) {
      other.budget_ = nullptr;
    }
    Hold& operator=(Hold&& other) noexcept;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    ~Hold() { release(); }
    void release();

   private:
    ByteBudget* budget_ = nullptr;
    std::size_t bytes_ = 0;
  };

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::size_t used_ = 0;
};

}  // namespace toolmux
