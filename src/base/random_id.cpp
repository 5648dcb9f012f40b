#include "src/base/random_id.h"

#include <pthread.h>
#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <system_error>

#include "src/base/base64.h"

namespace toolmux {

namespace {

void kernel_random(unsigned char* out, std::size_t size) {
  std::size_t filled = 0;
  while (filled < size) {
    const ssize_t n = ::getrandom(out + filled, size - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "getrandom");
    }
    filled += static_cast<std::size_t>(n);
  }
}

// The kernel's bytes taken kBytes at a time for this thread alone: one system
// call per sixteen call ids instead of one per id. Each byte is handed out
// once, and wiped when it is.
struct Pool {
  static constexpr std::size_t kBytes = 256;
  std::array<unsigned char, kBytes> bytes{};
  std::size_t left = 0;  // the unused bytes: the first `left`
};
thread_local Pool pool;

// A forked child starts with a copy of its parent's pool: it must not hand
// out what the parent will.
void forget_pool_in_child() {
  std::memset(pool.bytes.data(), 0, pool.bytes.size());
  pool.left = 0;
}

}  // namespace

std::string random_id(std::size_t bytes) {
  static std::once_flag forked;
  std::call_once(forked, [] { ::pthread_atfork(nullptr, nullptr, forget_pool_in_child); });
  const auto as_text = [bytes](unsigned char* raw) {
    std::string id = base64url_encode(std::string_view(reinterpret_cast<const char*>(raw), bytes));
    std::memset(raw, 0, bytes);
    return id;
  };
  if (bytes > Pool::kBytes / 4) {  // more than a pool's share: straight from the kernel
    std::string raw(bytes, '\0');
    kernel_random(reinterpret_cast<unsigned char*>(raw.data()), bytes);
    return as_text(reinterpret_cast<unsigned char*>(raw.data()));
  }
  if (pool.left < bytes) {
    kernel_random(pool.bytes.data(), pool.bytes.size());
    pool.left = pool.bytes.size();
  }
  pool.left -= bytes;
  return as_text(pool.bytes.data() + pool.left);
}

}  // namespace toolmux
