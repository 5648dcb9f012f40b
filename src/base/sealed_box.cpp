#include "src/base/sealed_box.h"

#include <sodium.h>

#include <stdexcept>

#include "src/base/base64.h"

namespace toolmux {

namespace {

// sodium_init() is needed once before randombytes (it picks the random source);
// it is safe to call from several threads and again.
void ensure_sodium() {
  static const bool ready = sodium_init() >= 0;
  if (!ready) throw std::runtime_error("libsodium could not start: no random source");
}

constexpr std::size_t kNonce = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
constexpr std::size_t kTag = crypto_aead_xchacha20poly1305_ietf_ABYTES;
static_assert(SealingKey::kBytes == crypto_aead_xchacha20poly1305_ietf_KEYBYTES);

}  // namespace

SealingKey SealingKey::random() {
  ensure_sodium();
  SealingKey key;
  randombytes_buf(key.bytes.data(), key.bytes.size());
  return key;
}

std::string seal(const SealingKey& key, std::string_view plaintext) {
  ensure_sodium();
  std::string out(kNonce + plaintext.size() + kTag, '\0');
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  randombytes_buf(bytes, kNonce);
  unsigned long long written = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(
      bytes + kNonce, &written, reinterpret_cast<const unsigned char*>(plaintext.data()),
      plaintext.size(), nullptr, 0, nullptr, bytes, key.bytes.data());
  out.resize(kNonce + static_cast<std::size_t>(written));
  return base64url_encode(out);
}

std::optional<std::string> open_sealed(const SealingKey& key, std::string_view text) {
  ensure_sodium();
  std::optional<std::string> raw = base64url_decode(text);
  if (!raw || raw->size() < kNonce + kTag) return std::nullopt;
  // Only the one spelling seal() writes: a character added or changed where
  // the decoder would ignore it is a changed text all the same.
  if (base64url_encode(*raw) != text) return std::nullopt;
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw->data());
  std::string plain(raw->size() - kNonce - kTag, '\0');
  unsigned long long length = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(
          reinterpret_cast<unsigned char*>(plain.data()), &length, nullptr, bytes + kNonce,
          raw->size() - kNonce, nullptr, 0, bytes, key.bytes.data()) != 0) {
    return std::nullopt;
  }
  plain.resize(static_cast<std::size_t>(length));
  return plain;
}

std::string digest(std::string_view bytes) {
  ensure_sodium();
  unsigned char out[crypto_generichash_BYTES];
  crypto_generichash(out, sizeof out, reinterpret_cast<const unsigned char*>(bytes.data()),
                     bytes.size(), nullptr, 0);
  return base64url_encode(std::string_view(reinterpret_cast<const char*>(out), sizeof out));
}

}  // namespace toolmux
