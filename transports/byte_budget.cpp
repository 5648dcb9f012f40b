#include "transports/byte_budget.h"

#include <algorithm>

namespace toolmux {

bool ByteBudget::acquire(std::size_t bytes, std::chrono::milliseconds wait) {
  bytes = std::min(bytes, capacity_);
  std::unique_lock lock(mutex_);
  if (!freed_.wait_for(lock, wait, [&] { return capacity_ - used_ >= bytes; })) return false;
  used_ += bytes;
  return true;
}

void ByteBudget::release(std::size_t bytes) {
  bytes = std::min(bytes, capacity_);
  {
    std::lock_guard lock(mutex_);
    used_ -= std::min(used_, bytes);
  }
  freed_.notify_all();
}

std::size_t ByteBudget::in_use() const {
  std::lock_guard lock(mutex_);
  return used_;
}

ByteBudget::Hold& ByteBudget::Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    release();
    budget_ = other.budget_;
    bytes_ = other.bytes_;
    other.budget_ = nullptr;
  }
  return *this;
}

void ByteBudget::Hold::release() {
  if (budget_) budget_->release(bytes_);
  budget_ = nullptr;
}

}  // namespace toolmux
