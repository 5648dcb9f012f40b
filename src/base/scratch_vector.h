// Working storage that a function keeps on its thread between calls, so that a
// short walk over a JSON value (every message and result is walked a few
// times) allocates nothing once the thread has warmed up.
#pragma once

#include <cstddef>
#include <vector>

namespace toolmux {

// Lends `storage`, a thread_local vector of the caller's, emptied; gives it
// back emptied too, and releases its memory if a deep value made it hold more
// than `Keep` elements. Not reentrant: while a function holds its storage it
// must not call anything that borrows the same storage.
template <typename T, std::size_t Keep = 256>
class ScratchVector {
 public:
  explicit ScratchVector(std::vector<T>& storage) : items_(storage) { items_.clear(); }
  ~ScratchVector() {
    if (items_.capacity() > Keep) {
      std::vector<T>().swap(items_);
    } else {
      items_.clear();
    }
  }
  ScratchVector(const ScratchVector&) = delete;
  ScratchVector& operator=(const ScratchVector&) = delete;

  std::vector<T>& operator*() { return items_; }

 private:
  std::vector<T>& items_;
};

}  // namespace toolmux
