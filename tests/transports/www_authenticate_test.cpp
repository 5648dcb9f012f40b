// The WWW-Authenticate header of a 401 or 403 (transports/www_authenticate.h),
// as MCP servers send it and as a hostile one might.
#include "transports/www_authenticate.h"

#include <catch2/catch.hpp>

using namespace toolmux;

TEST_CASE("a Bearer challenge's parameters, quoted or not") {
  auto c = bearer_challenge(
      R"(Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read files:write", error=insufficient_scope)");
  REQUIRE(c);
  CHECK(c->scheme == "Bearer");
  CHECK(c->param("resource_metadata") ==
        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
  CHECK(c->param("scope") == "files:read files:write");
  CHECK(c->param("error") == "insufficient_scope");
  CHECK_FALSE(c->param("realm"));
}

TEST_CASE("several challenges: the Bearer one is found, names and schemes without case") {
  auto all = parse_www_authenticate(
      R"(Basic realm="x", Newauth realm="apps", type=1, title="Login to \"apps\"", bEaReR SCOPE="a")");
  REQUIRE(all.ok());
  REQUIRE(all.value().size() == 3);
  CHECK(all.value()[1].param("title") == R"(Login to "apps")");
  CHECK(all.value()[1].param("type") == "1");
  auto bearer = bearer_challenge(R"(Basic realm="x", bEaReR SCOPE="a")");
  REQUIRE(bearer);
  CHECK(bearer->param("scope") == "a");
}

TEST_CASE("a token68 challenge and a bare scheme") {
  auto all = parse_www_authenticate("Negotiate abc123==, Bearer");
  REQUIRE(all.ok());
  REQUIRE(all.value().size() == 2);
  CHECK(all.value()[0].token68 == "abc123==");
  CHECK(all.value()[1].scheme == "Bearer");
  CHECK(all.value()[1].params.empty());
}

TEST_CASE("a parameter named twice keeps its first value") {
  auto c = bearer_challenge(R"(Bearer scope="read", scope="admin")");
  REQUIRE(c);
  CHECK(c->param("scope") == "read");
}

TEST_CASE("hostile headers are refused with the reason, never read past their end") {
  auto unterminated = parse_www_authenticate(R"(Bearer scope="read)");
  REQUIRE_FALSE(unterminated.ok());
  CHECK(unterminated.message() ==
        "the WWW-Authenticate header's parameter scope has a quoted value that never ends");

  auto escape_at_end = parse_www_authenticate("Bearer scope=\"read\\");
  CHECK_FALSE(escape_at_end.ok());

  auto junk = parse_www_authenticate(R"(Bearer scope="a" junk)");
  REQUIRE_FALSE(junk.ok());
  CHECK_THAT(junk.message(), Catch::Contains("where ',' or the end should come"));

  auto no_scheme = parse_www_authenticate("=abc");
  REQUIRE_FALSE(no_scheme.ok());
  CHECK_THAT(no_scheme.message(), Catch::Contains("where a scheme should start"));

  const std::string huge = "Bearer scope=\"" + std::string(kMaxWwwAuthenticateBytes, 'a') + "\"";
  auto too_long = parse_www_authenticate(huge);
  REQUIRE_FALSE(too_long.ok());
  CHECK_THAT(too_long.message(), Catch::Contains("over the limit of 8192"));

  std::string many = "Bearer ";
  for (int i = 0; i < 40; ++i) many += "p" + std::to_string(i) + "=v, ";
  auto too_many = parse_www_authenticate(many);
  REQUIRE_FALSE(too_many.ok());
  CHECK_THAT(too_many.message(), Catch::Contains("more than 32 parameters"));

  std::string schemes;
  for (int i = 0; i < 20; ++i) schemes += "S" + std::to_string(i) + ", ";
  CHECK_FALSE(parse_www_authenticate(schemes).ok());

  // Nothing to read is no challenge, not an error.
  CHECK(parse_www_authenticate("").value().empty());
  CHECK_FALSE(bearer_challenge(""));
  CHECK_FALSE(bearer_challenge(R"(Bearer scope="x)"));
}
