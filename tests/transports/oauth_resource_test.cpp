#include "transports/oauth_resource.h"

#include <catch2/catch.hpp>
#include <string>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rsa.h>

#include "src/base/base64.h"
#include "tests/transports/test_issuer.h"
extern "C" {
#include <jose/openssl.h>
}

using toolmux::AccessGrant;
using toolmux::OAuthResource;
using toolmux::OAuthResourceOptions;
using toolmux::testing::TestIssuer;

namespace {

const std::string kResource = "http://127.0.0.1:9/mcp";

OAuthResourceOptions options_for(const TestIssuer& issuer) {
  OAuthResourceOptions options;
  options.issuers = {issuer.issuer()};
  options.resource = kResource;
  options.key_refetch_interval = std::chrono::seconds(30);
  return options;
}

// Why `token` was refused; fails the test when it was taken.
std::string refusal(OAuthResource& resource, const std::string& token) {
  auto grant = resource.verify(token);
  REQUIRE_FALSE(grant.ok());
  return grant.status().message();
}

std::string b64(const nlohmann::json& value) { return toolmux::base64url_encode(value.dump()); }

}  // namespace

TEST_CASE("a token its issuer signed for this resource is taken: subject, issuer and scopes") {
  TestIssuer issuer;
  OAuthResource resource(options_for(issuer));
  auto grant = resource.verify(issuer.rsa_token(issuer.claims(kResource)));
  INFO(grant.status().message());
  REQUIRE(grant.ok());
  CHECK(grant->subject == "alice");
  CHECK(grant->issuer == issuer.issuer());
  CHECK(grant->scopes == std::vector<std::string>{"tools:read", "tools:write"});

  auto ec = resource.verify(issuer.ec_token(issuer.claims(kResource, "bob")));
  INFO(ec.status().message());
  REQUIRE(ec.ok());
  CHECK(ec->subject == "bob");
  // The keys were fetched once, for both tokens; the same token again is not checked again.
  CHECK(issuer.jwks_reads == 1);
  CHECK(resource.verify(issuer.rsa_token(issuer.claims(kResource))).ok());
  CHECK(issuer.jwks_reads == 1);
  CHECK(resource.stats().cached_grants >= 2);
}

TEST_CASE("PS256, ES384 and ES512 tokens verify with keys of their kind, and not with another") {
  TestIssuer issuer;
  auto options = options_for(issuer);
  options.key_refetch_interval = std::chrono::seconds(0);  // each new kid fetched at once
  OAuthResource resource(options);
  const auto claims = issuer.claims(kResource);
  for (const char* alg : {"PS256", "PS512", "ES384", "ES512"}) {
    INFO(alg);
    const auto key = toolmux::testing::generate_jwk(alg, std::string("key-") + alg);
    issuer.publish(key);
    const std::string token =
        toolmux::testing::sign_jwt({{"alg", alg}, {"kid", std::string("key-") + alg}}, claims, key);
    auto grant = resource.verify(token);
    INFO(grant.status().message());
    CHECK(grant.ok());
  }
  // An ES384 signature presented as ES256 with the ES384 key: the key does not fit.
  const auto es384 = toolmux::testing::generate_jwk("ES384", "key-b");
  issuer.publish(es384);
  OAuthResource fresh(options);
  auto header = nlohmann::json{{"alg", "ES256"}, {"kid", "key-b"}};
  const std::string signed_384 =
      toolmux::testing::sign_jwt({{"alg", "ES384"}, {"kid", "key-b"}}, claims, es384);
  const std::string relabelled =
      toolmux::base64url_encode(header.dump()) + signed_384.substr(signed_384.find('.'));
  CHECK(refusal(fresh, relabelled) ==
        "the bearer token is signed with a key this server does not know");
}

TEST_CASE("an RSA key under 2048 bits is never used") {
  TestIssuer issuer;
  OAuthResource resource(options_for(issuer));
  // libjose will neither make nor use one: OpenSSL makes it and signs with
  // it, and libjose writes it as a JWK.
  EVP_PKEY* weak = EVP_RSA_gen(1024);
  REQUIRE(weak != nullptr);
  json_t* small = jose_openssl_jwk_from_EVP_PKEY(nullptr, weak);
  REQUIRE(small != nullptr);
  char* text = json_dumps(small, JSON_COMPACT);
  auto jwk = nlohmann::json::parse(text);
  free(text);  // NOLINT: jansson's allocation
  json_decref(small);
  jwk["kid"] = "small";
  jwk["alg"] = "RS256";
  issuer.publish(jwk);
  const std::string input =
      b64({{"alg", "RS256"}, {"kid", "small"}}) + "." + b64(issuer.claims(kResource));
  std::string signature(256, '\0');
  std::size_t size = signature.size();
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  REQUIRE(EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, weak) == 1);
  REQUIRE(EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(signature.data()), &size,
                         reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1);
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(weak);
  signature.resize(size);
  const std::string token = input + "." + toolmux::base64url_encode(signature);
  CHECK(refusal(resource, token) ==
        "the bearer token is signed with a key this server does not know");
}

TEST_CASE("the issuer is found through OpenID discovery when it has no RFC 8414 metadata") {
  TestIssuer issuer(/*openid=*/true);
  OAuthResource resource(options_for(issuer));
  auto grant = resource.verify(issuer.rsa_token(issuer.claims(kResource)));
  INFO(grant.status().message());
  CHECK(grant.ok());
}

TEST_CASE("an scp array (Okta, Entra) gives the scopes too") {
  TestIssuer issuer;
  OAuthResource resource(options_for(issuer));
  auto claims = issuer.claims(kResource);
  claims.erase("scope");
  claims["scp"] = {"files.read", "files.write"};
  auto grant = resource.verify(issuer.rsa_token(claims));
  REQUIRE(grant.ok());
  CHECK(grant->scopes == std::vector<std::string>{"files.read", "files.write"});
}

TEST_CASE("hostile tokens are refused with a reason that names no key, claim value or secret") {
  TestIssuer issuer;
  OAuthResource resource(options_for(issuer));
  const auto good = issuer.claims(kResource);

  SECTION("a wrong signature") {
    const auto other = toolmux::testing::generate_jwk("RS256", "rsa-1");
    const std::string forged =
        toolmux::testing::sign_jwt({{"alg", "RS256"}, {"kid", "rsa-1"}}, good, other);
    CHECK(refusal(resource, forged) == "the bearer token's signature does not verify");
    // A token whose signature was cut off or changed.
    std::string token = issuer.rsa_token(good);
    // A character in the middle: the last one may carry only padding bits.
    char& c = token[token.size() - 20];
    c = c == 'A' ? 'B' : 'A';
    CHECK(refusal(resource, token) == "the bearer token's signature does not verify");
  }
  SECTION("alg none") {
    const std::string token = b64({{"alg", "none"}}) + "." + b64(good) + ".";
    CHECK(refusal(resource, token) ==
          "the bearer token is signed with an algorithm this server does not take");
  }
  SECTION("HS256 signed with the issuer's public key as its secret") {
    const std::string secret = toolmux::testing::public_jwk(issuer.rsa_key()).dump();
    const std::string input = b64({{"alg", "HS256"}, {"kid", "rsa-1"}}) + "." + b64(good);
    unsigned char mac[32];
    unsigned int size = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &size);
    const std::string token =
        input + "." + toolmux::base64url_encode(std::string(reinterpret_cast<char*>(mac), size));
    CHECK(refusal(resource, token) ==
          "the bearer token is signed with an algorithm this server does not take");
  }
  SECTION("RS256 named, ES key given: a key of the wrong type is not used") {
    const std::string token =
        toolmux::testing::sign_jwt({{"alg", "RS256"}, {"kid", "ec-1"}}, good, issuer.rsa_key());
    CHECK(refusal(resource, token) ==
          "the bearer token is signed with a key this server does not know");
  }
  SECTION("a wrong audience") {
    auto claims = good;
    claims["aud"] = "https://other.example/mcp";
    CHECK(refusal(resource, issuer.rsa_token(claims)) ==
          "the bearer token is not for this server (its audience does not name it)");
    claims.erase("aud");
    CHECK(refusal(resource, issuer.rsa_token(claims)) ==
          "the bearer token is not for this server (its audience does not name it)");
  }
  SECTION("a wrong issuer") {
    auto claims = good;
    claims["iss"] = "https://evil.example";
    CHECK(refusal(resource, issuer.rsa_token(claims)) ==
          "the bearer token was not issued by an authorization server this server trusts");
    CHECK(issuer.jwks_reads == 0);  // nothing was fetched for it
  }
  SECTION("expired, beyond the clock skew; not valid yet") {
    auto claims = good;
    claims["exp"] = claims["iat"].get<std::int64_t>() - 61;
    CHECK(refusal(resource, issuer.rsa_token(claims)) == "the bearer token has expired");
    claims["exp"] = claims["iat"].get<std::int64_t>() - 30;  // within the skew: taken
    CHECK(resource.verify(issuer.rsa_token(claims)).ok());
    claims = good;
    claims["nbf"] = claims["iat"].get<std::int64_t>() + 600;
    CHECK(refusal(resource, issuer.rsa_token(claims)) == "the bearer token is not valid yet");
    claims = good;
    claims.erase("exp");
    CHECK(refusal(resource, issuer.rsa_token(claims)) == "the bearer token has no expiry");
  }
  SECTION("no subject") {
    auto claims = good;
    claims.erase("sub");
    CHECK(refusal(resource, issuer.rsa_token(claims)) == "the bearer token names no subject");
  }
  SECTION("a flood of unknown kids costs one key fetch per interval") {
    for (int i = 0; i < 200; ++i) {
      const std::string token = issuer.rsa_token(good, "unknown-" + std::to_string(i));
      CHECK(refusal(resource, token) ==
            "the bearer token is signed with a key this server does not know");
    }
    CHECK(issuer.jwks_reads == 1);
    // A good token still passes meanwhile.
    CHECK(resource.verify(issuer.rsa_token(good)).ok());
  }
  SECTION("a 100 KB token") {
    CHECK(refusal(resource, std::string(100 * 1024, 'a')) == "the bearer token is too long");
  }
  SECTION("malformed headers and shapes") {
    CHECK(refusal(resource, "a.b") == "the bearer token is malformed: a JWT has three parts");
    CHECK(refusal(resource, "a.b.c.d") == "the bearer token is malformed: a JWT has three parts");
    CHECK(refusal(resource, "!!!.e30.x") ==
          "the bearer token is malformed: its header is not base64url JSON");
    CHECK(refusal(resource, b64(nlohmann::json::array()) + "." + b64(good) + ".x") ==
          "the bearer token is malformed: its header is not base64url JSON");
    CHECK(refusal(resource, b64({{"typ", "JWT"}}) + "." + b64(good) + ".x") ==
          "the bearer token's header names no algorithm");
    CHECK(refusal(resource, b64({{"alg", "RS256"}, {"crit", {"exp"}}}) + "." + b64(good) + ".x") ==
          "the bearer token's header has critical extensions this server does not know");
    CHECK(refusal(resource, b64({{"alg", "RS256"}}) + ".%%%.x") ==
          "the bearer token is malformed: its claims are not base64url JSON");
    CHECK(refusal(resource, "tok en") == "the bearer token holds characters a token cannot have");
    // Deep nesting in the header is not parsed past its bound.
    std::string deep(3000, '[');
    CHECK(refusal(resource, toolmux::base64url_encode(deep) + "." + b64(good) + ".x") ==
          "the bearer token is malformed: its header is not base64url JSON");
  }
  SECTION("an ID token (typ) is not an access token") {
    const std::string token = toolmux::testing::sign_jwt(
        {{"alg", "RS256"}, {"kid", "rsa-1"}, {"typ", "id+jwt"}}, good, issuer.rsa_key());
    CHECK(refusal(resource, token) == "the bearer token is not an access token (its typ)");
  }
}

TEST_CASE("a key the issuer rotated in is fetched when a token first names it") {
  TestIssuer issuer;
  auto options = options_for(issuer);
  options.key_refetch_interval = std::chrono::seconds(0);
  OAuthResource resource(options);
  REQUIRE(resource.verify(issuer.rsa_token(issuer.claims(kResource))).ok());
  const auto next = toolmux::testing::generate_jwk("RS256", "rsa-2");
  issuer.publish(next);
  const std::string token = toolmux::testing::sign_jwt({{"alg", "RS256"}, {"kid", "rsa-2"}},
                                                       issuer.claims(kResource), next);
  auto grant = resource.verify(token);
  INFO(grant.status().message());
  CHECK(grant.ok());
  CHECK(issuer.jwks_reads == 2);
}

TEST_CASE("metadata that names another issuer is not used, and says so") {
  TestIssuer issuer;
  issuer.metadata_issuer = "https://evil.example";
  OAuthResource resource(options_for(issuer));
  auto grant = resource.verify(issuer.rsa_token(issuer.claims(kResource)));
  REQUIRE_FALSE(grant.ok());
  CHECK(grant.status().code() == toolmux::Status::Code::kUnavailable);
  CHECK(grant.status().message() == "the authorization server's metadata names another issuer");
  CHECK(issuer.jwks_reads == 0);
}

TEST_CASE("an opaque token is introspected, cached briefly, and its audience checked") {
  TestIssuer issuer;
  auto options = options_for(issuer);
  options.introspection_client_id = "toolmux";
  options.introspection_client_secret = "introspection-secret";
  OAuthResource resource(options);
  issuer.opaque("opaque-good", {{"active", true},
                                {"sub", "carol"},
                                {"aud", kResource},
                                {"scope", "tools:read"},
                                {"iss", issuer.issuer()}});
  issuer.opaque("opaque-other",
                {{"active", true}, {"sub", "dave"}, {"aud", "https://other.example"}});
  auto grant = resource.verify("opaque-good");
  INFO(grant.status().message());
  REQUIRE(grant.ok());
  CHECK(grant->subject == "carol");
  CHECK(grant->scopes == std::vector<std::string>{"tools:read"});
  CHECK(resource.verify("opaque-good").ok());
  CHECK(issuer.introspections == 1);
  CHECK(refusal(resource, "opaque-other") ==
        "the bearer token is not for this server (its audience does not name it)");
  CHECK(refusal(resource, "opaque-unknown") == "the bearer token is not active");
}

TEST_CASE("without introspection credentials an opaque token is refused without asking anyone") {
  TestIssuer issuer;
  OAuthResource resource(options_for(issuer));
  CHECK(refusal(resource, "opaque-good") ==
        "the bearer token is not a JWT, and this server does not introspect tokens");
  CHECK(issuer.introspections == 0);
  CHECK(issuer.metadata_reads == 0);
}

TEST_CASE("options: HTTPS off loopback, asymmetric algorithms only, an issuer and a resource") {
  OAuthResourceOptions options;
  options.issuers = {"https://idp.example/realms/team"};
  options.resource = "https://tools.example/mcp";
  CHECK(toolmux::check_oauth_resource_options(options).ok());
  options.algorithms = {"RS256", "HS256"};
  CHECK(toolmux::check_oauth_resource_options(options).message() ==
        "signature algorithm \"HS256\" is not taken: only RS*, PS* and ES* (asymmetric) are");
  options.algorithms = {"none"};
  CHECK_FALSE(toolmux::check_oauth_resource_options(options).ok());
  options.algorithms = {"ES256"};
  options.issuers = {"http://idp.example"};
  CHECK(toolmux::check_oauth_resource_options(options).message() ==
        "the issuer \"http://idp.example/\" must be https:// (http:// only on a loopback address)");
  options.issuers = {"http://127.0.0.1:8081/realms/dev"};
  CHECK(toolmux::check_oauth_resource_options(options).ok());
  options.resource = "http://tools.example/mcp";
  CHECK_FALSE(toolmux::check_oauth_resource_options(options).ok());
  options.resource.clear();
  CHECK_FALSE(toolmux::check_oauth_resource_options(options).ok());
  options.resource = "https://tools.example/mcp";
  options.issuers.clear();
  CHECK_FALSE(toolmux::check_oauth_resource_options(options).ok());
}

TEST_CASE("the metadata URL is the resource's origin, the well-known name, then its path") {
  CHECK(toolmux::protected_resource_metadata_url("https://tools.example/mcp") ==
        "https://tools.example/.well-known/oauth-protected-resource/mcp");
  CHECK(toolmux::protected_resource_metadata_url("https://tools.example") ==
        "https://tools.example/.well-known/oauth-protected-resource");
  CHECK(toolmux::protected_resource_metadata_url("http://127.0.0.1:8080/team/mcp") ==
        "http://127.0.0.1:8080/.well-known/oauth-protected-resource/team/mcp");
  OAuthResourceOptions options;
  options.issuers = {"https://idp.example"};
  options.resource = "https://tools.example/mcp";
  options.scopes_supported = {"tools:read"};
  OAuthResource resource(options);
  CHECK(resource.metadata_path() == "/.well-known/oauth-protected-resource/mcp");
  const auto doc = resource.metadata();
  CHECK(doc["resource"] == "https://tools.example/mcp");
  CHECK(doc["authorization_servers"] == nlohmann::json::array({"https://idp.example"}));
  CHECK(doc["scopes_supported"] == nlohmann::json::array({"tools:read"}));
  CHECK(doc["bearer_methods_supported"] == nlohmann::json::array({"header"}));
}
