// The pure rules of toolmux's OAuth client (transports/oauth_rules.h): PKCE,
// where the metadata documents are, which resource a document speaks for,
// which scopes to ask for, and OAuth's encodings.
#include "transports/oauth_rules.h"

#include <catch2/catch.hpp>

using namespace toolmux;
using Strings = std::vector<std::string>;

TEST_CASE("the PKCE challenge of RFC 7636's appendix B example") {
  CHECK(pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") ==
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

TEST_CASE("a PKCE verifier is 43 unreserved characters, new each time") {
  const std::string a = pkce_verifier();
  const std::string b = pkce_verifier();
  CHECK(a.size() == 43);
  CHECK(a != b);
  CHECK(a.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") ==
        std::string::npos);
}

TEST_CASE("protected resource metadata: the path-based URL first, then the root one") {
  CHECK(protected_resource_metadata_urls("https://mcp.example.com/public/mcp").value() ==
        Strings{"https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource"});
  CHECK(protected_resource_metadata_urls("http://localhost:8080/").value() ==
        Strings{"http://localhost:8080/.well-known/oauth-protected-resource"});
  CHECK(url_authority("https://user@mcp.example.com:8443/a?b#c") ==
        "https://user@mcp.example.com:8443");
  CHECK(url_authority("http://localhost?x") == "http://localhost");
  CHECK(protected_resource_metadata_urls("http://localhost:8080/mcp?x=1").value() ==
        Strings{"http://localhost:8080/.well-known/oauth-protected-resource/mcp",
                "http://localhost:8080/.well-known/oauth-protected-resource"});
  CHECK_FALSE(protected_resource_metadata_urls("ftp://example.com/mcp").ok());
}

TEST_CASE(
    "authorization server metadata: RFC 8414 and OpenID Connect, path inserted then appended") {
  CHECK(authorization_server_metadata_urls("https://auth.example.com").value() ==
        Strings{"https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"});
  CHECK(authorization_server_metadata_urls("https://auth.example.com/tenant1").value() ==
        Strings{"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration"});
  // A trailing slash does not make another path.
  CHECK(authorization_server_metadata_urls("https://auth.example.com/tenant1/").value()[0] ==
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1");
  auto with_query = authorization_server_metadata_urls("https://auth.example.com/?a=b");
  REQUIRE_FALSE(with_query.ok());
  CHECK_THAT(with_query.message(), Catch::Contains("has a query"));
}

TEST_CASE("a resource covers its own URL and the paths below it, on the same origin only") {
  CHECK(resource_covers("https://mcp.example.com/mcp", "https://mcp.example.com/mcp"));
  CHECK(resource_covers("https://mcp.example.com", "https://mcp.example.com/mcp"));
  CHECK(resource_covers("https://mcp.example.com/", "https://mcp.example.com/mcp"));
  CHECK(resource_covers("https://MCP.example.com/api", "https://mcp.example.com/api/mcp"));
  CHECK_FALSE(resource_covers("https://evil.example.com/mcp", "https://mcp.example.com/mcp"));
  CHECK_FALSE(resource_covers("http://mcp.example.com/mcp", "https://mcp.example.com/mcp"));
  CHECK_FALSE(resource_covers("https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp"));
  CHECK_FALSE(resource_covers("https://mcp.example.com/mc", "https://mcp.example.com/mcp"));
  CHECK_FALSE(resource_covers("https://mcp.example.com/mcp#x", "https://mcp.example.com/mcp"));
  CHECK_FALSE(resource_covers("not a url", "https://mcp.example.com/mcp"));
}

TEST_CASE("OAuth goes over https, or http to a loopback host only") {
  CHECK(require_secure_url("https://auth.example.com/token", "the token endpoint").ok());
  CHECK(require_secure_url("http://localhost:9000/token", "the token endpoint").ok());
  CHECK(require_secure_url("http://127.0.0.1/token", "the token endpoint").ok());
  CHECK(require_secure_url("http://[::1]:8080/token", "the token endpoint").ok());
  const Status plain = require_secure_url("http://auth.example.com/token", "the token endpoint");
  REQUIRE_FALSE(plain.ok());
  CHECK(plain.message() ==
        "the token endpoint http://auth.example.com/token is not https: OAuth over plain http is "
        "allowed only to a loopback host");
  CHECK_FALSE(require_secure_url("http://localhost.evil.com/token", "x").ok());
}

TEST_CASE("scopes: the challenge's, else the resource's, with the earlier ones on a step-up") {
  const Strings none;
  CHECK(choose_scopes(std::string_view("mcp:basic"), {"a", "b"}, none, none) ==
        Strings{"mcp:basic"});
  CHECK(choose_scopes(std::nullopt, {"mcp:basic", "mcp:read"}, none, none) ==
        Strings{"mcp:basic", "mcp:read"});
  CHECK(choose_scopes(std::nullopt, none, none, none).empty());
  // An empty challenge scope is no scope.
  CHECK(choose_scopes(std::string_view("  "), {"r"}, none, none) == Strings{"r"});
  // Step-up: the union, each once (SEP-2350).
  CHECK(choose_scopes(std::string_view("mcp:write mcp:basic"), none, {"mcp:basic"}, none) ==
        Strings{"mcp:basic", "mcp:write"});
}

TEST_CASE("offline_access is asked for only where the authorization server offers it") {
  const Strings none;
  CHECK(choose_scopes(std::nullopt, {"mcp:basic"}, none, {"mcp:basic", "offline_access"}) ==
        Strings{"mcp:basic", "offline_access"});
  CHECK(choose_scopes(std::nullopt, {"mcp:basic"}, none, {"mcp:basic"}) == Strings{"mcp:basic"});
  // Not alone: no scope at all stays no scope.
  CHECK(choose_scopes(std::nullopt, none, none, {"offline_access"}).empty());
}

TEST_CASE("form encoding and query parameters") {
  CHECK(form_encode("a b&c=d/é") == "a%20b%26c%3Dd%2F%C3%A9");
  CHECK(form_encode({{"grant_type", "authorization_code"}, {"scope", "x y"}}) ==
        "grant_type=authorization_code&scope=x%20y");
  auto params = query_params("http://localhost:3000/callback?code=abc&state=x%20y&iss=a+b#frag");
  REQUIRE(params);
  CHECK(*params == std::vector<std::pair<std::string, std::string>>{
                       {"code", "abc"}, {"state", "x y"}, {"iss", "a b"}});
  // A name given twice keeps its first value: a second state cannot replace the first.
  auto twice = query_params("http://x/cb?state=one&state=two");
  REQUIRE(twice);
  CHECK(twice->size() == 1);
  CHECK(twice->front().second == "one");
  CHECK_FALSE(query_params("http://x/cb?code=%zz"));
  CHECK_FALSE(query_params("http://x/cb?code=%4"));
  CHECK(query_params("http://x/cb")->empty());
}
