#include "transports/url.h"

#include <catch2/catch.hpp>
#include <string>

using toolmux::HttpUrl;
using toolmux::parse_http_url;

namespace {

// The parts of a URL that must parse.
HttpUrl parsed(const std::string& url) {
  auto parts = parse_http_url(url);
  INFO(url << ": " << parts.message());
  REQUIRE(parts.ok());
  return *parts;
}

// Why a URL that must not parse was refused.
std::string refused(const std::string& url) {
  INFO(url);
  auto parts = parse_http_url(url);
  REQUIRE_FALSE(parts.ok());
  const std::string error = parts.message();
  CHECK_FALSE(error.empty());
  return error;
}

}  // namespace

TEST_CASE("origin always names the port, the scheme's own port when the URL has none") {
  CHECK(parsed("http://example.com/mcp").origin == "http://example.com:80");
  CHECK(parsed("https://example.com/mcp").origin == "https://example.com:443");
  CHECK(parsed("http://127.0.0.1:8931/mcp").origin == "http://127.0.0.1:8931");
  CHECK(parsed("HTTPS://Example.com/mcp").origin == "https://Example.com:443");
}

TEST_CASE("path keeps the query and drops the fragment, and an empty path is /") {
  const HttpUrl url = parsed("https://mcp.example.com/v1/mcp?key=abc&x=1#top");
  CHECK(url.path == "/v1/mcp?key=abc&x=1");
  CHECK(parsed("http://example.com").path == "/");
  CHECK(parsed("http://example.com?key=abc").path == "/?key=abc");
  CHECK(parsed("http://example.com#top").path == "/");
}

TEST_CASE("shown has neither credentials nor query, and the port only when the URL gave it") {
  CHECK(parsed("https://user:s3cret@mcp.example.com/v1/mcp?key=s3cret#top").shown ==
        "https://mcp.example.com/v1/mcp");
  CHECK(parsed("http://example.com:8080/mcp").shown == "http://example.com:8080/mcp");
  CHECK(parsed("http://[::1]:8931").shown == "http://[::1]:8931/");
}

TEST_CASE("user and password are percent-decoded, and the last @ ends them") {
  HttpUrl url = parsed("http://al%40ice:p%3Ass:w@example.com/mcp");
  CHECK(url.user == "al@ice");
  CHECK(url.password == "p:ss:w");
  url = parsed("http://a@b@example.com/mcp");
  CHECK(url.user == "a@b");
  CHECK(url.password.empty());
  CHECK(url.origin == "http://example.com:80");
  url = parsed("http://example.com/mcp");
  CHECK(url.user.empty());
  CHECK(url.password.empty());
}

TEST_CASE("a bracketed IPv6 host keeps its brackets and may have a port") {
  CHECK(parsed("http://[::1]:8931/mcp").origin == "http://[::1]:8931");
  CHECK(parsed("https://[2001:db8::1]/mcp").origin == "https://[2001:db8::1]:443");
}

TEST_CASE("what is not a usable http(s) URL is refused, saying what is wrong") {
  CHECK_THAT(refused("ftp://example.com/mcp"), Catch::Contains("http:// or https://"));
  CHECK_THAT(refused("http://"), Catch::Contains("http:// or https://"));
  CHECK_THAT(refused("example.com/mcp"), Catch::Contains("http:// or https://"));
  CHECK_THAT(refused("http://:80/mcp"), Catch::Contains("no host"));
  CHECK_THAT(refused("http://user@/mcp"), Catch::Contains("no host"));
  CHECK_THAT(refused("http://exa mple.com/mcp"), Catch::Contains("no host"));
  CHECK_THAT(refused("http://[::1/mcp"), Catch::Contains("unclosed '['"));
  CHECK_THAT(refused("http://[::1]x/mcp"), Catch::Contains("after its IPv6 host"));
  CHECK_THAT(refused("http://example.com:http/mcp"), Catch::Contains("port is not a number"));
  CHECK_THAT(refused("http://example.com:123456/mcp"), Catch::Contains("port is not a number"));
  CHECK_THAT(refused("http://example.com:99999/mcp"), Catch::Contains("port is out of range"));
  CHECK_THAT(refused("http://example.com:0/mcp"), Catch::Contains("port is out of range"));
  CHECK_THAT(refused("http://example.com/a b"), Catch::Contains("white space"));
}
