// toolmux's HTTP server as an OAuth 2.1 resource server: what a client sees
// with no token, a good one, a refused one, too little scope, and an issuer
// that does not answer. The authorization server is a real one over HTTP
// (tests/transports/test_issuer.h).
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <thread>

#include <httplib.h>

#include "src/app/session_directory.h"
#include "src/protocol/mcp_server.h"
#include "tests/support/quiet_logger.h"
#include "tests/support/test_tools.h"
#include "tests/transports/test_issuer.h"
#include "transports/http_server.h"

using toolmux::testing::TestIssuer;
using namespace std::chrono_literals;

namespace {

const std::string kResource = "http://127.0.0.1:9/mcp";
const std::string kMetadataUrl = "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp";
constexpr std::string_view kInitialize =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
    R"("2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}})";
constexpr std::string_view kEcho =
    R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo",)"
    R"("arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
    R"("io.modelcontextprotocol/clientCapabilities":{}}}})";

std::shared_ptr<toolmux::OAuthResource> resource_for(const std::string& issuer) {
  toolmux::OAuthResourceOptions options;
  options.issuers = {issuer};
  options.resource = kResource;
  options.scopes_supported = {"tools:read", "tools:write"};
  options.fetch_timeout = 1000ms;
  REQUIRE(toolmux::check_oauth_resource_options(options).ok());
  return std::make_shared<toolmux::OAuthResource>(options);
}

// toolmux's HTTP server on a free loopback port, in this process.
struct Door {
  explicit Door(toolmux::HttpOptions options) {
    server = std::make_unique<toolmux::McpServer>(toolmux::testing::make_test_catalog(),
                                                  toolmux::ServerOptions{}, quiet.logger, metrics);
    sessions = std::make_unique<toolmux::SessionDirectory>(*server, toolmux::SessionLimits{},
                                                           nullptr, nullptr, quiet.logger);
    http =
        std::make_unique<toolmux::HttpServer>(*sessions, metrics, quiet.logger, std::move(options));
    REQUIRE(http->bind().ok());
    runner = std::thread([this] { http->run(); });
    client = std::make_unique<httplib::Client>("127.0.0.1", http->port());
  }
  Door(const Door&) = delete;
  Door& operator=(const Door&) = delete;
  ~Door() {
    http->stop();
    runner.join();
  }

  // A POST of `body` to /mcp with `token` (none when empty).
  httplib::Result post(std::string_view body, const std::string& token, bool modern = false) const {
    httplib::Headers headers = {{"Accept", "application/json, text/event-stream"}};
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    if (modern) {
      headers.emplace("MCP-Protocol-Version", "2026-07-28");
      headers.emplace("Mcp-Method", "tools/call");
      headers.emplace("Mcp-Name", "echo");
    }
    return client->Post("/mcp", headers, std::string(body), "application/json");
  }

  toolmux::testing::QuietLogger quiet;
  toolmux::Metrics metrics;
  std::unique_ptr<toolmux::McpServer> server;
  std::unique_ptr<toolmux::SessionDirectory> sessions;
  std::unique_ptr<toolmux::HttpServer> http;
  std::unique_ptr<httplib::Client> client;
  std::thread runner;
};

}  // namespace

TEST_CASE("the Protected Resource Metadata is served at its path form and at the root, to anyone") {
  TestIssuer issuer;
  toolmux::HttpOptions options;
  options.oauth = resource_for(issuer.issuer());
  Door door(options);
  for (const char* path :
       {"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}) {
    auto res = door.client->Get(path, {{"Origin", "https://app.example"}});
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(res->get_header_value("Access-Control-Allow-Origin") == "*");
    const auto doc = nlohmann::json::parse(res->body);
    CHECK(doc["resource"] == kResource);
    CHECK(doc["authorization_servers"] == nlohmann::json::array({issuer.issuer()}));
    CHECK(doc["scopes_supported"] == nlohmann::json::array({"tools:read", "tools:write"}));
  }
}

TEST_CASE("without a token: 401 naming the metadata and the scope to ask for") {
  TestIssuer issuer;
  toolmux::HttpOptions options;
  options.oauth = resource_for(issuer.issuer());
  options.challenge_scope = "tools:read";
  Door door(options);
  auto res = door.post(kInitialize, "");
  REQUIRE(res);
  CHECK(res->status == 401);
  CHECK(res->get_header_value("WWW-Authenticate") ==
        "Bearer resource_metadata=\"" + kMetadataUrl + "\", scope=\"tools:read\"");
  CHECK_THAT(res->body, Catch::Contains("needs an Authorization: Bearer token"));
}

TEST_CASE(
    "a token its issuer signed opens a session of its subject's, and a refused one says why") {
  TestIssuer issuer;
  toolmux::HttpOptions options;
  options.oauth = resource_for(issuer.issuer());
  options.tokens = {{"static-token-of-ci-0001", "ci"}};
  Door door(options);
  const std::string alice = issuer.rsa_token(issuer.claims(kResource, "alice"));
  auto res = door.post(kInitialize, alice);
  REQUIRE(res);
  CHECK(res->status == 200);
  const std::string id = res->get_header_value("Mcp-Session-Id");
  REQUIRE_FALSE(id.empty());
  // The session is alice's: bob's token does not reach it.
  const std::string bob = issuer.rsa_token(issuer.claims(kResource, "bob"));
  httplib::Headers in_session = {{"Mcp-Session-Id", id},
                                 {"Accept", "application/json, text/event-stream"},
                                 {"Authorization", "Bearer " + bob}};
  auto other = door.client->Post("/mcp", in_session, R"({"jsonrpc":"2.0","id":3,"method":"ping"})",
                                 "application/json");
  REQUIRE(other);
  CHECK(other->status == 404);
  // A static token still works beside OAuth.
  auto ci = door.post(kInitialize, "static-token-of-ci-0001");
  REQUIRE(ci);
  CHECK(ci->status == 200);

  auto expired_claims = issuer.claims(kResource);
  expired_claims["exp"] = 1000;
  auto expired = door.post(kInitialize, issuer.rsa_token(expired_claims));
  REQUIRE(expired);
  CHECK(expired->status == 401);
  CHECK(expired->get_header_value("WWW-Authenticate") ==
        "Bearer resource_metadata=\"" + kMetadataUrl +
            "\", error=\"invalid_token\", error_description=\"the bearer token has expired\"");
  CHECK_THAT(expired->body, Catch::Contains("Unauthorized: the bearer token has expired"));
}

TEST_CASE("hostile tokens get 401 and the server goes on serving") {
  TestIssuer issuer;
  toolmux::HttpOptions options;
  options.oauth = resource_for(issuer.issuer());
  Door door(options);
  const auto claims = issuer.claims(kResource);
  auto b64 = [](const nlohmann::json& v) { return toolmux::base64url_encode(v.dump()); };
  const std::vector<std::string> hostile = {
      b64({{"alg", "none"}}) + "." + b64(claims) + ".",
      issuer.rsa_token(claims).substr(0, 200) + "x.y",
      std::string(100 * 1024, 'a'),
      "!!!." + b64(claims) + ".sig",
      issuer.rsa_token(claims, "kid-nobody-published"),
  };
  for (const auto& token : hostile) {
    auto res = door.post(kInitialize, token);
    INFO(token.substr(0, 80));
    if (token.size() > 64 * 1024) {
      // A 100 KB head is refused by the head limit (431, then the connection
      // is closed, maybe before the client has read it) before the token is read.
      CHECK((!res || res->status == 431));
      continue;
    }
    REQUIRE(res);
    CHECK(res->status == 401);
    if (res->status == 401) {
      CHECK_THAT(res->get_header_value("WWW-Authenticate"), Catch::Contains("invalid_token"));
    }
  }
  auto good = door.post(kInitialize, issuer.rsa_token(claims));
  REQUIRE(good);
  CHECK(good->status == 200);
}

TEST_CASE("too little scope: 403 insufficient_scope with the scope to step up to") {
  TestIssuer issuer;
  toolmux::HttpOptions options;
  options.oauth = resource_for(issuer.issuer());
  options.scope_needed = [](std::string_view method, const nlohmann::json& params,
                            const std::vector<std::string>& scopes) -> std::optional<std::string> {
    if (method != "tools/call" || params.value("name", "") != "echo") return std::nullopt;
    for (const auto& s : scopes) {
      if (s == "tools:echo") return std::nullopt;
    }
    return std::string("tools:echo");
  };
  Door door(options);
  auto claims = issuer.claims(kResource);
  auto res = door.post(kEcho, issuer.rsa_token(claims), /*modern=*/true);
  REQUIRE(res);
  CHECK(res->status == 403);
  CHECK_THAT(res->get_header_value("WWW-Authenticate"),
             Catch::StartsWith("Bearer resource_metadata=\"" + kMetadataUrl +
                               "\", scope=\"tools:echo\", error=\"insufficient_scope\""));
  claims["scope"] = "tools:read tools:echo";
  auto stepped = door.post(kEcho, issuer.rsa_token(claims), /*modern=*/true);
  REQUIRE(stepped);
  CHECK(stepped->status == 200);
  CHECK_THAT(stepped->body, Catch::Contains("\"text\":\"hi\""));
}

TEST_CASE(
    "an issuer that does not answer: 503 with Retry-After, not a 401 that sends the user to log in "
    "again") {
  toolmux::HttpOptions options;
  int closed_port = 0;
  {
    TestIssuer gone;  // its port, closed once it is gone
    closed_port = std::stoi(gone.issuer().substr(gone.issuer().rfind(':') + 1));
  }
  const std::string issuer_url = "http://127.0.0.1:" + std::to_string(closed_port);
  options.oauth = resource_for(issuer_url);
  Door door(options);
  // A token that names that issuer, signed by a key nobody can check now.
  const auto key = toolmux::testing::generate_jwk("RS256", "k");
  nlohmann::json claims = {
      {"iss", issuer_url}, {"aud", kResource}, {"sub", "alice"}, {"exp", 4102444800}};
  const std::string token =
      toolmux::testing::sign_jwt({{"alg", "RS256"}, {"kid", "k"}}, claims, key);
  auto res = door.post(kInitialize, token);
  REQUIRE(res);
  CHECK(res->status == 503);
  CHECK(res->get_header_value("Retry-After") == "5");
  CHECK_THAT(res->body, Catch::Contains("the bearer token cannot be checked now"));
}
