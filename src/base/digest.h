// SHA-256 digests and HMACs, for what toolmux compares without keeping: the arguments of
// a journaled call, checked again on a replay or at confirmation time.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace toolmux {

// SHA-256 of `bytes`, as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);
// BLAKE2b with a 256-bit output (libsodium's crypto_generichash), as 64
// lowercase hex digits: a cryptographic hash about nine times cheaper here
// than sha256_hex (libsodium picks a vectorised implementation, its SHA-256
// is portable C), for what is hashed on every call: the audit trail's chain.
std::string blake2b_256_hex(std::string_view bytes);
// HMAC-SHA-256 of `message` under `key` (any length), as 64 lowercase hex
// digits: for what toolmux signs and checks itself (the audit trail's
// retention marker), with a key only it holds.
std::string hmac_sha256_hex(std::string_view key, std::string_view message);
// SHA-256 of `value`'s canonical text: nlohmann's dump(), whose objects keep
// their keys sorted, so equal values have equal digests whatever order their
// members came in. Invalid UTF-8 in strings is replaced first.
std::string json_digest(const nlohmann::json& value);

// SHA-256 of bytes given in pieces (a file read a block at a time): update()
// as often as needed, then hex() once. Not thread-safe; one per stream.
class Sha256Stream {
 public:
  Sha256Stream();
  void update(std::string_view bytes);
  // The digest of everything given, as 64 lowercase hex digits.
  std::string hex();

 private:
  alignas(8) unsigned char state_[128];  // libsodium's crypto_hash_sha256_state
};

}  // namespace toolmux
