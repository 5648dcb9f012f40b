// toolmux as an OAuth 2.1 resource server (the MCP authorization
// specification): which access tokens it takes, and what it tells a client
// that has none.
//
// A token is a JWT (RFC 9068 access token, or any JWS its issuer signs) or an
// opaque string. A JWT is checked here, without asking anyone but for keys:
//   - its header: three base64url parts, `alg` in the allow-list (asymmetric
//     only: never "none", never HS*, so a public key can never be used as an
//     HMAC secret), no `crit`, a `kid` when the issuer has several keys;
//   - its claims: `iss` one of the configured issuers, `aud` naming the
//     resource (RFC 8707), `exp` in the future and `nbf` in the past within
//     the clock skew, `sub` present;
//   - its signature, by OpenSSL, with the issuer's key of that `kid`, whose
//     type must fit the algorithm (RSA of at least 2048 bits for RS*/PS*, EC
//     on the algorithm's curve for ES*). libjose reads each JWK into an
//     OpenSSL key once, when the JWKS is fetched.
// The issuer's keys come from its JWKS, found through its metadata (RFC 8414
// at /.well-known/oauth-authorization-server, then OpenID discovery); both are
// cached, and fetched again when a token names a kid not among them, at most
// once per key_refetch_interval per issuer (a flood of unknown kids costs one
// fetch). An opaque token is sent to the issuers' introspection endpoints
// (RFC 7662), when introspection credentials are configured.
//
// A token found good is remembered (by its SHA-256) until it expires or for
// grant_cache_lifetime, whichever comes first, in at most max_cached_grants
// entries; so a client's token costs one signature check, not one per request.
//
// Refusals are invalid_argument values whose message is safe to send: it says what kind of thing
// was wrong ("the token has expired"), never which key, claim value or secret. Thread-safe:
// verify() is called from every connection thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/status.h"

namespace toolmux {

struct OAuthResourceOptions {
  // Authorization servers whose tokens count, as their metadata's "issuer"
  // says (HTTPS, or HTTP on a loopback address).
  std::vector<std::string> issuers;
  // This server's canonical URI: the audience a token must name.
  std::string resource;
  // Scopes this server knows, in its Protected Resource Metadata.
  std::vector<std::string> scopes_supported;
  // Signature algorithms taken; only asymmetric ones may be listed.
  std::vector<std::string> algorithms = {"RS256", "RS384", "RS512", "PS256", "PS384",
                                         "PS512", "ES256", "ES384", "ES512"};
  std::chrono::seconds clock_skew{60};
  std::chrono::seconds key_refetch_interval{30};
  std::chrono::seconds metadata_lifetime{3600};
  std::size_t max_token_bytes = 8192;
  // Opaque tokens: the client toolmux introspects as (empty: opaque tokens
  // are refused).
  std::string introspection_client_id;
  std::string introspection_client_secret;
  std::chrono::seconds grant_cache_lifetime{300};
  std::chrono::seconds introspection_cache_lifetime{60};
  std::size_t max_cached_grants = 10000;
  std::chrono::milliseconds fetch_timeout{5000};
  std::size_t max_document_bytes = std::size_t{256} * 1024;
};

// What a good token says.
struct AccessGrant {
  std::string subject;              // `sub`: the principal
  std::string issuer;               // `iss`
  std::vector<std::string> scopes;  // `scope` (space-separated) or `scp`
  std::chrono::system_clock::time_point expires;
};

// Why the options cannot be used (a URL that is not HTTPS off loopback, a
// symmetric or unknown algorithm, no issuer, no resource), or ok.
Status check_oauth_resource_options(const OAuthResourceOptions& options);

// Where the Protected Resource Metadata of `resource` is (RFC 9728 section
// 3.1): its origin, "/.well-known/oauth-protected-resource", then its path
// ("https://a.example/mcp" -> "https://a.example/.well-known/oauth-protected-resource/mcp").
std::string protected_resource_metadata_url(std::string_view resource);

class OAuthResource {
 public:
  // The options must have passed check_oauth_resource_options.
  explicit OAuthResource(OAuthResourceOptions options);
  ~OAuthResource();
  OAuthResource(const OAuthResource&) = delete;
  OAuthResource& operator=(const OAuthResource&) = delete;

  // The grant `token` carries, or invalid_argument with a sentence safe to
  // send to the client; unavailable when the issuer's keys or introspection
  // could not be reached (the token may be good: the client may retry).
  Result<AccessGrant> verify(std::string_view token);

  // The Protected Resource Metadata document (RFC 9728).
  nlohmann::json metadata() const;
  // protected_resource_metadata_url(options.resource).
  const std::string& metadata_url() const { return metadata_url_; }
  // The path part of metadata_url() (served by the HTTP server).
  std::string metadata_path() const;
  const OAuthResourceOptions& options() const { return options_; }

  struct Stats {
    std::size_t key_fetches = 0;       // JWKS documents fetched
    std::size_t metadata_fetches = 0;  // issuer metadata documents fetched
    std::size_t introspections = 0;
    std::size_t cached_grants = 0;
  };
  Stats stats() const;

 private:
  struct State;
  OAuthResourceOptions options_;
  std::string metadata_url_;
  std::unique_ptr<State> state_;
};

}  // namespace toolmux
