// Authenticated encryption of small messages that pass through a client and
// come back (the 2026-07-28 protocol's requestState): XChaCha20-Poly1305 from
// libsodium, a fresh random 192-bit nonce per message, so one key seals any
// number of messages. What open() accepts was sealed with the same key and
// not changed by a single bit; the client can read nothing of it.
//
// A SealingKey is 32 random bytes; keep it secret (a file only toolmux may
// read: src/store/state_key.h). Everything here is thread-safe and throws
// std::runtime_error only when libsodium cannot start (no random source at
// all), which the first key made or loaded, at start-up, reveals.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace toolmux {

struct SealingKey {
  static constexpr std::size_t kBytes = 32;
  std::array<unsigned char, kBytes> bytes{};
  // A new key from the kernel's random source.
  static SealingKey random();
};

// `plaintext` sealed as base64url text (no padding), ~1.33 x (plaintext + 40 bytes).
std::string seal(const SealingKey& key, std::string_view plaintext);
// The plaintext, or nullopt when `text` was not sealed with `key` or was changed
// (not base64url, too short, or the tag does not verify).
std::optional<std::string> open_sealed(const SealingKey& key, std::string_view text);

// A 256-bit BLAKE2b digest of `bytes`, as base64url text: to tell whether two
// texts are the same without keeping either.
std::string digest(std::string_view bytes);

}  // namespace toolmux
