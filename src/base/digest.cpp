#include "src/base/digest.h"

#include <array>

#include <sodium.h>

namespace toolmux {

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
  crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(bytes.data()),
                     bytes.size());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(digest.size() * 2);
  for (unsigned char byte : digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 0x0f];
  }
  return out;
}

std::string json_digest(const nlohmann::json& value) {
  return sha256_hex(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace toolmux
