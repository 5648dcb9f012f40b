#include "src/base/digest.h"

#include <array>

#include <sodium.h>

namespace toolmux {

namespace {

template <std::size_t N>
std::string hex_of(const std::array<unsigned char, N>& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(N * 2, '0');
  for (std::size_t i = 0; i < N; ++i) {
    out[2 * i] = kHex[bytes[i] >> 4];
    out[2 * i + 1] = kHex[bytes[i] & 0x0f];
  }
  return out;
}

const unsigned char* unsigned_bytes(std::string_view bytes) {
  return reinterpret_cast<const unsigned char*>(bytes.data());
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
  crypto_hash_sha256(digest.data(), unsigned_bytes(bytes), bytes.size());
  return hex_of(digest);
}

std::string blake2b_256_hex(std::string_view bytes) {
  // Its vectorised code is picked by sodium_init(); before it, the portable one.
  static const bool ready = sodium_init() >= 0;
  (void)ready;
  std::array<unsigned char, crypto_generichash_BYTES> digest{};
  static_assert(crypto_generichash_BYTES == 32);
  crypto_generichash(digest.data(), digest.size(), unsigned_bytes(bytes), bytes.size(), nullptr, 0);
  return hex_of(digest);
}

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, unsigned_bytes(key), key.size());
  crypto_auth_hmacsha256_update(&state, unsigned_bytes(message), message.size());
  std::array<unsigned char, crypto_auth_hmacsha256_BYTES> mac{};
  crypto_auth_hmacsha256_final(&state, mac.data());
  return hex_of(mac);
}

static_assert(sizeof(crypto_hash_sha256_state) <= 128 && alignof(crypto_hash_sha256_state) <= 8);

Sha256Stream::Sha256Stream() : state_{} {
  crypto_hash_sha256_init(reinterpret_cast<crypto_hash_sha256_state*>(state_));
}

void Sha256Stream::update(std::string_view bytes) {
  crypto_hash_sha256_update(reinterpret_cast<crypto_hash_sha256_state*>(state_),
                            unsigned_bytes(bytes), bytes.size());
}

std::string Sha256Stream::hex() {
  std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
  crypto_hash_sha256_final(reinterpret_cast<crypto_hash_sha256_state*>(state_), digest.data());
  return hex_of(digest);
}

std::string json_digest(const nlohmann::json& value) {
  return sha256_hex(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace toolmux
