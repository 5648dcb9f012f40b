// A private_key_jwt client assertion (transports/jwt_assertion.h), verified
// with OpenSSL against the public half of the key that signed it.
#include "transports/jwt_assertion.h"

#include <fstream>
#include <memory>
#include <sstream>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "src/base/base64.h"

using namespace toolmux;
using nlohmann::json;

namespace {

std::string read(const std::string& name) {
  std::ifstream in(std::string(TOOLMUX_TEST_DATA) + "/oauth/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> parts(const std::string& jwt) {
  std::vector<std::string> out;
  std::stringstream in(jwt);
  for (std::string part; std::getline(in, part, '.');) out.push_back(part);
  return out;
}

// Whether `jwt`'s signature verifies with the PEM public key.
bool verifies(const std::string& jwt, const std::string& public_pem, bool ecdsa) {
  const auto p = parts(jwt);
  const std::string input = p[0] + "." + p[1];
  std::string signature = base64url_decode(p[2]).value();
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size())), BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  if (ecdsa) {  // JWS r||s back to DER
    ECDSA_SIG* sig = ECDSA_SIG_new();
    const auto* bytes = reinterpret_cast<const unsigned char*>(signature.data());
    ECDSA_SIG_set0(sig, BN_bin2bn(bytes, 32, nullptr), BN_bin2bn(bytes + 32, 32, nullptr));
    unsigned char* der = nullptr;
    const int size = i2d_ECDSA_SIG(sig, &der);
    signature.assign(reinterpret_cast<char*>(der), static_cast<std::size_t>(size));
    OPENSSL_free(der);
    ECDSA_SIG_free(sig);
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get());
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                          signature.size(), reinterpret_cast<const unsigned char*>(input.data()),
                          input.size()) == 1;
}

}  // namespace

TEST_CASE("an ES256 assertion verifies and names the client and the audience") {
  auto jwt = sign_client_assertion({"my-client", "https://auth.example.com"},
                                   read("es256-private.pem"), "ES256");
  REQUIRE(jwt.ok());
  const auto p = parts(jwt.value());
  REQUIRE(p.size() == 3);
  CHECK(json::parse(base64url_decode(p[0]).value()) == json{{"alg", "ES256"}, {"typ", "JWT"}});
  const json claims = json::parse(base64url_decode(p[1]).value());
  CHECK(claims["iss"] == "my-client");
  CHECK(claims["sub"] == "my-client");
  CHECK(claims["aud"] == "https://auth.example.com");
  CHECK(claims["exp"].get<long>() - claims["iat"].get<long>() == 300);
  CHECK(claims["jti"].get<std::string>().size() >= 16);
  CHECK(base64url_decode(p[2]).value().size() == 64);
  CHECK(verifies(jwt.value(), read("es256-public.pem"), true));
}

TEST_CASE("an RS256 assertion verifies") {
  auto jwt = sign_client_assertion({"c", "https://as"}, read("rs256-private.pem"), "RS256");
  REQUIRE(jwt.ok());
  CHECK(verifies(jwt.value(), read("rs256-public.pem"), false));
}

TEST_CASE("a key that does not fit is refused, the key never in the message") {
  const std::string ec = read("es256-private.pem");
  auto wrong_kind = sign_client_assertion({"c", "a"}, ec, "RS256");
  REQUIRE_FALSE(wrong_kind.ok());
  CHECK(wrong_kind.message() == "the private key is not of the kind RS256 signs with (RSA)");
  auto wrong_curve = sign_client_assertion({"c", "a"}, ec, "ES384");
  REQUIRE_FALSE(wrong_curve.ok());
  CHECK(wrong_curve.message() == "the EC private key's curve does not fit ES384");
  auto unknown = sign_client_assertion({"c", "a"}, ec, "HS256");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.message(), Catch::Contains("not one toolmux signs with"));
  auto garbage = sign_client_assertion({"c", "a"}, "-----BEGIN PRIVATE KEY-----\nnope\n", "ES256");
  REQUIRE_FALSE(garbage.ok());
  CHECK(garbage.message() == "the private key is not a PEM private key");
}
