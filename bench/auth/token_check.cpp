// What toolmux pays to check an OAuth access token, beside the floor.
//
// An authorization server (tests/transports/test_issuer.h: metadata and JWKS
// over real HTTP on loopback) signs RS256 and ES256 tokens with libjose.
// Measured, each as the median of --reps runs of --tokens checks, in µs per
// check:
//   first    OAuthResource::verify of a token it has not seen, its issuer's
//            keys already cached: the whole JWT check and one signature
//            verification (what a new token costs);
//   repeat   verify of a token it has checked before (what every later
//            request with that token costs);
//   openssl  EVP_DigestVerify of the same RS256 signature with a key already
//            parsed: the signature check alone, the floor.
// Prints a table and one JSON line (starting {"bench":"auth").
//
// Usage: token_check [--tokens N] [--reps N]
#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/transports/test_issuer.h"
extern "C" {
#include <jose/openssl.h>
}
#include "transports/oauth_resource.h"

namespace {

using Clock = std::chrono::steady_clock;
const std::string kResource = "http://127.0.0.1:9/mcp";

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// µs per call of `check` over `tokens`.
template <typename Check>
double per_check(const std::vector<std::string>& tokens, Check check) {
  const auto start = Clock::now();
  for (const auto& token : tokens) check(token);
  const auto elapsed = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  return elapsed / static_cast<double>(tokens.size());
}

// The public key of a JWK, as OpenSSL takes it (converted by libjose once).
EVP_PKEY* openssl_key(const nlohmann::json& jwk) {
  const std::string text = jwk.dump();
  json_t* value = json_loads(text.c_str(), 0, nullptr);
  EVP_PKEY* key = jose_openssl_jwk_to_EVP_PKEY(nullptr, value);
  json_decref(value);
  return key;
}

bool openssl_verify(EVP_PKEY* key, const std::string& token) {
  const auto dot = token.rfind('.');
  const std::string input = token.substr(0, dot);
  const std::string signature = *toolmux::base64url_decode(token.substr(dot + 1));
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key);
  const int ok = EVP_DigestVerify(
      ctx, reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
      reinterpret_cast<const unsigned char*>(input.data()), input.size());
  EVP_MD_CTX_free(ctx);
  return ok == 1;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 2000;
  int reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--tokens") == 0) count = std::stoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::stoi(argv[i + 1]);
  }
  toolmux::testing::TestIssuer issuer;
  toolmux::OAuthResourceOptions options;
  options.issuers = {issuer.issuer()};
  options.resource = kResource;
  options.max_cached_grants = static_cast<std::size_t>(count) * 2;
  EVP_PKEY* key = openssl_key(toolmux::testing::public_jwk(issuer.rsa_key()));

  std::vector<double> first_rs, repeat_rs, first_es, floor_rs;
  for (int rep = 0; rep < reps; ++rep) {
    toolmux::OAuthResource resource(options);
    // Warm: the issuer's metadata and keys fetched and cached.
    if (!resource.verify(issuer.rsa_token(issuer.claims(kResource))).ok()) {
      std::fprintf(stderr, "the warm-up token was refused\n");
      return 1;
    }
    std::vector<std::string> rs, es;
    for (int i = 0; i < count; ++i) {
      rs.push_back(issuer.rsa_token(issuer.claims(kResource, "user-" + std::to_string(i))));
      es.push_back(issuer.ec_token(issuer.claims(kResource, "user-" + std::to_string(i))));
    }
    bool all_good = true;
    first_rs.push_back(
        per_check(rs, [&](const std::string& t) { all_good &= resource.verify(t).ok(); }));
    repeat_rs.push_back(
        per_check(rs, [&](const std::string& t) { all_good &= resource.verify(t).ok(); }));
    first_es.push_back(
        per_check(es, [&](const std::string& t) { all_good &= resource.verify(t).ok(); }));
    floor_rs.push_back(
        per_check(rs, [&](const std::string& t) { all_good &= openssl_verify(key, t); }));
    if (!all_good) {
      std::fprintf(stderr, "a token was refused\n");
      return 1;
    }
  }
  EVP_PKEY_free(key);
  const double fr = median(first_rs), rr = median(repeat_rs), fe = median(first_es),
               fl = median(floor_rs);
  std::printf("token check, µs per check (median of %d runs of %d tokens)\n", reps, count);
  std::printf("  RS256 first check (key cached)  %8.2f\n", fr);
  std::printf("  RS256 repeat (token cached)     %8.2f\n", rr);
  std::printf("  ES256 first check (key cached)  %8.2f\n", fe);
  std::printf("  OpenSSL RS256 verify alone      %8.2f   first / openssl = %.2f\n", fl, fr / fl);
  std::printf(
      "{\"bench\":\"auth\",\"tokens\":%d,\"reps\":%d,\"rs256_first_us\":%.2f,"
      "\"rs256_repeat_us\":%.2f,\"es256_first_us\":%.2f,\"openssl_rs256_us\":%.2f}\n",
      count, reps, fr, rr, fe, fl);
  return 0;
}
