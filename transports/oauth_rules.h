// The pure rules of an MCP client's authorization (MCP
// basic/authorization.mdx, 2025-11-25 and 2026-07-28), apart from the HTTP
// that carries them (transports/oauth_client.h): where the metadata documents
// are, which protected resource a document may speak for, which scopes to ask
// for, PKCE, and the form and query encodings OAuth uses.
//
// Every function is pure (pkce_verifier() draws random bytes), never throws,
// and may be called from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/base/status.h"

namespace toolmux {

// PKCE (RFC 7636): a fresh code_verifier (43 characters of base64url from 32
// random bytes) and its S256 code_challenge, BASE64URL(SHA256(verifier)).
std::string pkce_verifier();
std::string pkce_challenge(std::string_view verifier);

// The Protected Resource Metadata URLs (RFC 9728 §3.1) to try for the MCP
// endpoint `server_url`, in order, when its 401 named none: the path-based
// one (/.well-known/oauth-protected-resource/<path>), then the root one.
Result<std::vector<std::string>> protected_resource_metadata_urls(std::string_view server_url);

// The authorization server metadata URLs to try for `issuer`, in order (MCP
// "Authorization Server Metadata Discovery"): with a path, OAuth 2.0 (RFC 8414)
// and OpenID Connect Discovery with the path inserted, then OpenID Connect
// with it appended; without one, RFC 8414's then OpenID Connect's.
Result<std::vector<std::string>> authorization_server_metadata_urls(std::string_view issuer);

// scheme://authority of `url` as written (no default port added), e.g.
// "https://mcp.example.com" of "https://mcp.example.com/mcp?x": where the
// well-known URLs go, and the 2025-03-26 revision's authorization server of
// a server without metadata.
std::string url_authority(std::string_view url);

// Whether a protected resource metadata document whose `resource` is
// `resource` may speak for the MCP endpoint `server_url` (RFC 9728 §3.3, MCP
// "Canonical Server URI"): same scheme, host and port, and the endpoint's path
// is the resource's or lies below it. A resource with a query or fragment
// never matches.
bool resource_covers(std::string_view resource, std::string_view server_url);

// Whether `url` may carry OAuth traffic: https, or http to a loopback host
// (localhost, 127.0.0.0/8, [::1]). Otherwise a Status naming the URL.
Status require_secure_url(std::string_view url, std::string_view what);

// The scopes to ask for (MCP "Scope Selection Strategy", SEP-835/2350/2207):
// the challenge's `scope` when the server sent one, else the protected
// resource's scopes_supported, else none; together with `previous` (the scopes
// asked for before, on a step-up); and offline_access when the authorization
// server lists it in its scopes_supported and something else is asked for.
// Each scope once, in first-seen order.
std::vector<std::string> choose_scopes(std::optional<std::string_view> challenged,
                                       const std::vector<std::string>& resource_scopes,
                                       const std::vector<std::string>& previous,
                                       const std::vector<std::string>& server_scopes);

// Space-separated scopes, split (runs of spaces ignored) and joined.
std::vector<std::string> split_scopes(std::string_view scopes);
std::string join_scopes(const std::vector<std::string>& scopes);

// application/x-www-form-urlencoded (RFC 6749 Appendix B), for token
// requests, query strings and client_secret_basic's id and secret. A space
// becomes %20, not '+': some servers read a query's '+' as itself.
std::string form_encode(std::string_view text);
std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields);
// The query parameters of `url` (after '?', before '#'), decoded; a name
// given twice keeps the first value. nullopt when the query cannot be decoded.
std::optional<std::vector<std::pair<std::string, std::string>>> query_params(std::string_view url);

}  // namespace toolmux
