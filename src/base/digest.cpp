#include "src/base/digest.h"

#include <array>

#include <sodium.h>

namespace toolmux {

namespace {

using Digest = std::array<unsigned char, crypto_hash_sha256_BYTES>;

std::string hex_of(const Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(digest.size() * 2);
  for (unsigned char byte : digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 0x0f];
  }
  return out;
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Digest digest{};
  crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(bytes.data()),
                     bytes.size());
  return hex_of(digest);
}

static_assert(sizeof(crypto_hash_sha256_state) <= 128 && alignof(crypto_hash_sha256_state) <= 8);

Sha256Stream::Sha256Stream() : state_{} {
  crypto_hash_sha256_init(reinterpret_cast<crypto_hash_sha256_state*>(state_));
}

void Sha256Stream::update(std::string_view bytes) {
  crypto_hash_sha256_update(reinterpret_cast<crypto_hash_sha256_state*>(state_),
                            reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

std::string Sha256Stream::hex() {
  Digest digest{};
  crypto_hash_sha256_final(reinterpret_cast<crypto_hash_sha256_state*>(state_), digest.data());
  return hex_of(digest);
}

std::string json_digest(const nlohmann::json& value) {
  return sha256_hex(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace toolmux
