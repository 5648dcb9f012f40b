#include "src/base/random_id.h"

#include <sys/random.h>

#include <cerrno>
#include <system_error>
#include <vector>

#include "src/base/base64.h"

namespace toolmux {

std::string random_id(std::size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  std::size_t filled = 0;
  while (filled < bytes) {
    const ssize_t n = ::getrandom(raw.data() + filled, bytes - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "getrandom");
    }
    filled += static_cast<std::size_t>(n);
  }
  return base64url_encode(std::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()));
}

}  // namespace toolmux
