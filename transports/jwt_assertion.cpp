#include "transports/jwt_assertion.h"

#include <memory>
#include <vector>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <nlohmann/json.hpp>

#include "src/base/base64.h"
#include "src/base/random_id.h"

namespace toolmux {
namespace {

struct Algorithm {
  const EVP_MD* digest;
  int key_type;                // EVP_PKEY_EC or EVP_PKEY_RSA
  std::size_t coordinate = 0;  // ECDSA: bytes of r and of s in the JWS form
};

std::optional<Algorithm> algorithm_of(const std::string& name) {
  if (name == "ES256") return Algorithm{EVP_sha256(), EVP_PKEY_EC, 32};
  if (name == "ES384") return Algorithm{EVP_sha384(), EVP_PKEY_EC, 48};
  if (name == "RS256") return Algorithm{EVP_sha256(), EVP_PKEY_RSA, 0};
  return std::nullopt;
}

// An ECDSA signature in DER (OpenSSL's) as JWS wants it: r and s, each
// left-padded to the curve's size (RFC 7518 §3.4).
std::optional<std::string> jws_ecdsa(const std::vector<unsigned char>& der, std::size_t size) {
  const unsigned char* p = der.data();
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig(
      d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())), ECDSA_SIG_free);
  if (!sig) return std::nullopt;
  const BIGNUM* r = nullptr;
  const BIGNUM* s = nullptr;
  ECDSA_SIG_get0(sig.get(), &r, &s);
  std::string out(2 * size, '\0');
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  if (BN_bn2binpad(r, bytes, static_cast<int>(size)) < 0 ||
      BN_bn2binpad(s, bytes + size, static_cast<int>(size)) < 0) {
    return std::nullopt;
  }
  return out;
}

}  // namespace

Result<std::string> sign_client_assertion(const ClientAssertionClaims& claims,
                                          const std::string& private_key_pem,
                                          const std::string& algorithm) {
  const auto alg = algorithm_of(algorithm);
  if (!alg) {
    return Status::invalid_argument("the signing algorithm \"" + algorithm +
                                    "\" is not one toolmux signs with (ES256, ES384, RS256)");
  }
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size())), BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr, EVP_PKEY_free);
  if (!key) return Status::invalid_argument("the private key is not a PEM private key");
  if (EVP_PKEY_base_id(key.get()) != alg->key_type) {
    return Status::invalid_argument("the private key is not of the kind " + algorithm +
                                    " signs with (" +
                                    (alg->key_type == EVP_PKEY_EC ? "EC" : "RSA") + ")");
  }
  if (alg->key_type == EVP_PKEY_EC &&
      static_cast<std::size_t>((EVP_PKEY_get_bits(key.get()) + 7) / 8) != alg->coordinate) {
    return Status::invalid_argument("the EC private key's curve does not fit " + algorithm);
  }

  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const nlohmann::json header = {{"alg", algorithm}, {"typ", "JWT"}};
  const nlohmann::json payload = {{"iss", claims.client_id},
                                  {"sub", claims.client_id},
                                  {"aud", claims.audience},
                                  {"iat", now},
                                  {"exp", now + claims.lifetime.count()},
                                  {"jti", random_id(16)}};
  const std::string input =
      base64url_encode(header.dump()) + "." + base64url_encode(payload.dump());

  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::size_t size = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, alg->digest, nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &size,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    return Status::invalid_argument("OpenSSL could not sign with the private key");
  }
  std::vector<unsigned char> signature(size);
  if (EVP_DigestSign(ctx.get(), signature.data(), &size,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    return Status::invalid_argument("OpenSSL could not sign with the private key");
  }
  signature.resize(size);
  std::string jws_signature;
  if (alg->key_type == EVP_PKEY_EC) {
    auto raw = jws_ecdsa(signature, alg->coordinate);
    if (!raw) return Status::invalid_argument("OpenSSL's ECDSA signature could not be read");
    jws_signature = std::move(*raw);
  } else {
    jws_signature.assign(signature.begin(), signature.end());
  }
  return input + "." + base64url_encode(jws_signature);
}

}  // namespace toolmux
