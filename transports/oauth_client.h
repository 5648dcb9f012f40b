// toolmux as an OAuth client of the authorization server that protects an
// upstream MCP server (MCP basic/authorization.mdx, 2025-11-25 and
// 2026-07-28): an HttpAuthorizer (transports/http_authorizer.h) that the
// Streamable HTTP client transport asks for a token and tells of a refusal.
//
// On a 401 it discovers, every time (a server may move to another
// authorization server): the Protected Resource Metadata (RFC 9728) named by
// the challenge's resource_metadata, else at the path-based and then the root
// well-known URL, and checks that its `resource` covers the server's URL
// (transports/oauth_rules.h); then the first authorization server's metadata
// (RFC 8414, then OpenID Connect Discovery, transports/oauth_rules.h), whose
// `issuer` must be the one the URL was built from. A server with no protected
// resource metadata is treated as the 2025-03-26 revision did: its origin is
// the authorization server, and without metadata /authorize, /token and
// /register there are its endpoints.
//
// Then a token, with the `resource` parameter (RFC 8707) on every request:
// - a refresh token, when it holds one from the same authorization server;
// - else, with Grant::client_credentials, that grant (client_secret_basic,
//   client_secret_post or private_key_jwt: transports/jwt_assertion.h);
// - else the authorization code grant with PKCE S256: the client is the
//   pre-registered one (Options::client_id), else the Client ID Metadata
//   Document URL when the server supports those, else one registered now
//   (RFC 7591, application_type "native"); `authorize` takes the user through
//   the authorization URL and returns the redirect it ended at, whose `state`
//   must match and whose `iss` (RFC 9207) must be the issuer (and be present
//   when the server said it sends it).
// A registration belongs to the authorization server that made it: when the
// protected resource names another, toolmux registers again there and forgets
// the old client and its tokens.
//
// A 403 with error="insufficient_scope" asks again for the scopes asked
// before together with the challenged ones (step-up); scopes are chosen by
// choose_scopes(). The transport bounds how often one request is retried.
//
// Bounds: every HTTP exchange has Options::timeout, a body of at most
// Options::max_response_bytes, no redirects followed (but the authorization
// URL's, which `authorize` follows); every endpoint must be https or on a
// loopback host. Errors name the URL and what was wrong; tokens, secrets and
// authorization codes never appear in them.
//
// A login (the client and its tokens) may be kept outside: Options::load_login
// gives one from an earlier run (`toolmux login`'s store), and on_login is told
// each new one, as login_text() writes it. A token with an expiry is refreshed
// (when there is a refresh token) Options::refresh_ahead before it expires,
// by the request that finds it due. Without `authorize` (a server with no
// person at hand) the code grant is never started: a 401 that a refresh cannot
// answer fails with Options::login_needed, and no client is registered.
//
// Thread-safe: one authorization runs at a time; a request refused with a
// token that has since been replaced is simply retried with the new one.
// Tokens live in memory, and wherever on_login puts them.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "src/base/status.h"
#include "transports/http_authorizer.h"

namespace toolmux {

class OAuthClient final : public HttpAuthorizer {
 public:
  enum class Grant { authorization_code, client_credentials };

  // Takes the user (or a test's stand-in) through `authorization_url` and
  // returns the URL the authorization server redirected to (`redirect_uri`
  // with code, state and perhaps iss), or why not. Called with no lock held.
  using Authorize = std::function<Result<std::string>(const std::string& authorization_url,
                                                      const std::string& redirect_uri)>;

  struct Options {
    std::string server_url;  // the MCP endpoint
    Grant grant = Grant::authorization_code;
    // Pre-registered credentials (client_credentials needs them): client_id,
    // and client_secret or private_key_pem. `issuer`, when set, is the only
    // authorization server they are used with.
    std::string client_id;
    std::string client_secret;
    std::string private_key_pem;              // private_key_jwt
    std::string signing_algorithm = "ES256";  // for private_key_jwt
    std::string issuer;
    // "client_secret_basic", "client_secret_post", "private_key_jwt" or
    // "none"; "" = chosen from what the server supports.
    std::string token_endpoint_auth_method;
    // The Client ID Metadata Document's URL (an https URL), used as the
    // client_id where the server supports them; "" = never.
    std::string client_metadata_url;
    std::string client_name = "toolmux";
    std::string redirect_uri;  // authorization_code: where `authorize` ends
    // client_credentials: the scopes to ask for ("" = as for the code grant).
    std::string scope;
    Authorize authorize;
    // The code grant without `authorize`: the whole error a 401 gets when no
    // token can be refreshed, e.g. "needs a login: run `toolmux login X`".
    std::string login_needed;
    // A login kept from an earlier run (login_text()), or "" for none; asked
    // at the first request and again when a refresh is refused (another
    // process may have refreshed it). One for another server URL, or
    // unreadable, is ignored.
    std::function<std::string()> load_login;
    // Told each new login (tokens granted or refreshed), with the lock held.
    std::function<void(const std::string& login)> on_login;
    std::chrono::seconds refresh_ahead{60};
    std::chrono::milliseconds timeout{10000};
    std::size_t max_response_bytes = std::size_t{1} << 20;
  };

  static constexpr int kMaxAuthorizeRedirects = 5;

  // An invalid_argument Status when the options cannot work (no server URL,
  // client_credentials without a client_id, the code grant without
  // redirect_uri and authorize, or login_needed).
  static Result<std::shared_ptr<OAuthClient>> create(Options options);
  ~OAuthClient() override;

  std::string authorization() override;
  Status challenged(int status, const std::string& www_authenticate,
                    const std::string& sent) override;

  // An `authorize` for an authorization server that redirects at once (no
  // login page: a test server, a session already logged in): GETs the URL
  // and follows its redirects, at most kMaxAuthorizeRedirects, until one goes
  // to `redirect_uri`; that URL is the answer. `timeout` for each GET.
  static Authorize follow_redirects(std::chrono::milliseconds timeout);

  // The login as it is kept: a JSON object with the server URL, the
  // authorization server and its token endpoint, the client (id, secret,
  // authentication method), the tokens, their expiry (seconds since the
  // epoch, 0 = unknown) and scopes. "" before any token. Secret: never log it.
  std::string login_text();
  // Whether a client for `server_url` (its pre-registered client bound to
  // `issuer`, "" = any) would use the kept login `text` (login_text()).
  static bool usable_login(const std::string& server_url, const std::string& issuer,
                           const std::string& text);

  struct State;  // discovery results, client and tokens; opaque

 private:
  explicit OAuthClient(Options options);
  void load_login_once();  // with mutex_ held
  Options options_;
  std::mutex mutex_;  // one authorization at a time
  std::unique_ptr<State> state_;
};

}  // namespace toolmux
