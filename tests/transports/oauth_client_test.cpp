// toolmux's OAuth client (transports/oauth_client.h) against a small
// authorization server and protected resource of the test's own
// (cpp-httplib, port 0): the refusals and bounds the conformance suite does
// not reach. The suite's client scenarios (CTest conformance_client) check
// the flows themselves.
#include "transports/oauth_client.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <catch2/catch.hpp>

using namespace toolmux;

namespace {

// An HTTP server on 127.0.0.1 for the test's length.
class TestServer {
 public:
  TestServer() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // The socket listens once bound: a connection made before the thread
    // accepts waits in the backlog. But stop() before the thread runs would
    // be lost (and the join below wait forever): wait until it runs.
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~TestServer() {
    server_.stop();
    thread_.join();
  }
  httplib::Server& operator*() { return server_; }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

OAuthClient::Options machine_client(const std::string& server_url) {
  OAuthClient::Options options;
  options.server_url = server_url;
  options.grant = OAuthClient::Grant::client_credentials;
  options.client_id = "c";
  options.client_secret = "s3cret";
  options.timeout = std::chrono::seconds(2);
  return options;
}

}  // namespace

TEST_CASE("the options are checked when the client is made") {
  OAuthClient::Options no_secret;
  no_secret.server_url = "https://mcp.example.com/mcp";
  no_secret.grant = OAuthClient::Grant::client_credentials;
  no_secret.client_id = "c";
  auto refused = OAuthClient::create(no_secret);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.message() ==
        "the client_credentials grant needs a client_id and a client_secret or a private key");
  OAuthClient::Options code;
  code.server_url = "https://mcp.example.com/mcp";
  CHECK_FALSE(OAuthClient::create(code).ok());  // no redirect_uri, no way to authorize
  OAuthClient::Options bad_url = machine_client("ftp://x/mcp");
  CHECK_FALSE(OAuthClient::create(bad_url).ok());
}

TEST_CASE("a 403 that is not insufficient_scope is refused at once, no request made") {
  auto client = OAuthClient::create(machine_client("http://127.0.0.1:9/mcp")).value();
  const Status s = client->challenged(403, R"(Bearer error="invalid_token")", "");
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() ==
        "HTTP 403 Forbidden from http://127.0.0.1:9/mcp (error=\"invalid_token\"): the token is "
        "refused and asking for more scope would not help");
  CHECK(client->authorization().empty());
}

TEST_CASE("a client_credentials token is taken and sent, a second 401 takes a new one") {
  TestServer server;
  std::atomic<int> issued{0};
  const std::string base = server.base();
  (*server).Get("/.well-known/oauth-protected-resource/mcp", [&](const auto&, auto& res) {
    res.set_content(
        R"({"resource": ")" + base + R"(/mcp", "authorization_servers": [")" + base + R"("]})",
        "application/json");
  });
  (*server).Get("/.well-known/oauth-authorization-server", [&](const auto&, auto& res) {
    res.set_content(R"({"issuer": ")" + base + R"(", "token_endpoint": ")" + base + R"(/token"})",
                    "application/json");
  });
  (*server).Post("/token", [&](const httplib::Request& req, auto& res) {
    // client_secret_basic: RFC 8414's default when the metadata lists none.
    CHECK(req.get_header_value("Authorization") == "Basic YzpzM2NyZXQ=");
    CHECK(req.get_param_value("grant_type") == "client_credentials");
    CHECK(req.get_param_value("resource") == base + "/mcp");
    res.set_content(
        R"({"access_token": "t)" + std::to_string(++issued) + R"(", "token_type": "bearer"})",
        "application/json");
  });
  auto client = OAuthClient::create(machine_client(base + "/mcp")).value();
  REQUIRE(client->challenged(401, "", "").ok());
  CHECK(client->authorization() == "Bearer t1");
  // Refused with a token another request has replaced: just try the new one.
  REQUIRE(client->challenged(401, "", "Bearer t0").ok());
  CHECK(issued == 1);
  // Refused with the current one: a new token.
  REQUIRE(client->challenged(401, "", "Bearer t1").ok());
  CHECK(client->authorization() == "Bearer t2");
}

TEST_CASE("metadata over the size limit, a resource for another server and plain http are errors") {
  TestServer server;
  const std::string base = server.base();
  std::string resource = base + "/mcp";
  std::string authorization_server = base;
  (*server).Get("/.well-known/oauth-protected-resource/mcp", [&](const auto&, auto& res) {
    res.set_content(R"({"resource": ")" + resource + R"(", "authorization_servers": [")" +
                        authorization_server + R"("]})",
                    "application/json");
  });
  (*server).Get("/.well-known/oauth-authorization-server", [&](const auto&, auto& res) {
    res.set_content(std::string(4096, ' ') + "{}", "application/json");
  });
  OAuthClient::Options options = machine_client(base + "/mcp");
  options.max_response_bytes = 1024;
  auto client = OAuthClient::create(options).value();

  Status s = client->challenged(401, "", "");
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() ==
        "authorizing with " + base + "/mcp: the answer from " + base +
            "/.well-known/oauth-authorization-server is over the limit of 1024 bytes");

  resource = "https://evil.example.com/mcp";
  s = client->challenged(401, "", "");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("is for https://evil.example.com/mcp, not for " + base +
                                          "/mcp (RFC 9728 §3.3)"));

  resource = base + "/mcp";
  authorization_server = "http://auth.example.com";
  s = client->challenged(401, "", "");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("http://auth.example.com/.well-known/oauth-authorization-"
                                          "server is not https"));
  CHECK(client->authorization().empty());
}

TEST_CASE("an authorization server whose metadata names another issuer is not used") {
  TestServer server;
  const std::string base = server.base();
  (*server).Get("/.well-known/oauth-protected-resource/mcp", [&](const auto&, auto& res) {
    res.set_content(
        R"({"resource": ")" + base + R"(/mcp", "authorization_servers": [")" + base + R"("]})",
        "application/json");
  });
  (*server).Get("/.well-known/oauth-authorization-server", [&](const auto&, auto& res) {
    res.set_content(
        R"({"issuer": "https://attacker.example.com", "token_endpoint": ")" + base + R"(/token"})",
        "application/json");
  });
  bool token_requested = false;
  (*server).Post("/token", [&](const auto&, auto&) { token_requested = true; });
  auto client = OAuthClient::create(machine_client(base + "/mcp")).value();
  const Status s = client->challenged(401, "", "");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("names the issuer https://attacker.example.com, not " +
                                          base + " (RFC 8414 §3.3)"));
  CHECK_FALSE(token_requested);
}

namespace {

// A protected resource and its authorization server (code grant, refresh
// tokens, registration) on one test server; counts what is asked of it.
struct CodeServer {
  TestServer server;
  std::string base = server.base();
  std::atomic<int> registrations{0};
  std::atomic<int> refreshes{0};
  std::atomic<bool> refuse_refresh{false};
  std::atomic<int> expires_in{3600};

  CodeServer() {
    (*server).Get("/.well-known/oauth-protected-resource/mcp", [this](const auto&, auto& res) {
      res.set_content(
          R"({"resource": ")" + base + R"(/mcp", "authorization_servers": [")" + base + R"("]})",
          "application/json");
    });
    (*server).Get("/.well-known/oauth-authorization-server", [this](const auto&, auto& res) {
      res.set_content(R"({"issuer": ")" + base + R"(", "token_endpoint": ")" + base +
                          R"(/token", "authorization_endpoint": ")" + base +
                          R"(/authorize", "registration_endpoint": ")" + base +
                          R"(/register", "code_challenge_methods_supported": ["S256"],)"
                          R"( "token_endpoint_auth_methods_supported": ["none"]})",
                      "application/json");
    });
    (*server).Post("/register", [this](const auto&, auto& res) {
      ++registrations;
      res.status = 201;
      res.set_content(R"({"client_id": "registered"})", "application/json");
    });
    (*server).Post("/token", [this](const httplib::Request& req, auto& res) {
      CHECK(req.get_param_value("resource") == base + "/mcp");
      if (req.get_param_value("grant_type") == "refresh_token") {
        ++refreshes;
        if (refuse_refresh) {
          res.status = 400;
          res.set_content(R"({"error": "invalid_grant"})", "application/json");
          return;
        }
        CHECK(req.get_param_value("refresh_token") == "r1");
        CHECK(req.get_param_value("client_id") == "kept-client");
        res.set_content(R"({"access_token": "refreshed", "token_type": "Bearer", )"
                        R"("refresh_token": "r2", "expires_in": 3600})",
                        "application/json");
        return;
      }
      res.status = 400;
      res.set_content(R"({"error": "unsupported_grant_type"})", "application/json");
    });
  }

  // A login as `toolmux login` keeps it, for `server_url`, expiring in `in` s.
  std::string login(const std::string& server_url, std::int64_t in) const {
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    return R"({"version": 1, "server_url": ")" + server_url + R"(", "issuer": ")" + base +
           R"(", "token_endpoint": ")" + base + R"(/token", "resource": ")" + base +
           R"(/mcp", "client_id": "kept-client", "client_secret": "", "auth_method": "none",)"
           R"( "access_token": "kept", "refresh_token": "r1", "expires_at": )" +
           std::to_string(now + in) + R"(, "scopes": ["tools"]})";
  }
};

// The code grant as a server runs it: no person, a login kept elsewhere.
OAuthClient::Options server_side(const std::string& server_url, std::function<std::string()> load,
                                 std::vector<std::string>* saved) {
  OAuthClient::Options options;
  options.server_url = server_url;
  options.grant = OAuthClient::Grant::authorization_code;
  options.login_needed = "needs a login: run `toolmux login up`";
  options.load_login = std::move(load);
  if (saved != nullptr) {
    options.on_login = [saved](const std::string& login) { saved->push_back(login); };
  }
  options.timeout = std::chrono::seconds(2);
  return options;
}

}  // namespace

TEST_CASE("without a login a server's code grant says what to run, registering nothing") {
  CodeServer as;
  auto client = OAuthClient::create(server_side(
                                        as.base + "/mcp", [] { return std::string(); }, nullptr))
                    .value();
  CHECK(client->authorization().empty());
  const Status s = client->challenged(401, "", "");
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() ==
        "authorizing with " + as.base + "/mcp: needs a login: run `toolmux login up`");
  CHECK(as.registrations == 0);
}

TEST_CASE("a kept login is used for its URL only, and refreshed ahead of its expiry") {
  CodeServer as;
  std::vector<std::string> saved;
  SECTION("for another URL it is not used") {
    auto client =
        OAuthClient::create(
            server_side(
                as.base + "/mcp", [&] { return as.login(as.base + "/other", 3600); }, &saved))
            .value();
    CHECK(client->authorization().empty());
    CHECK_FALSE(
        OAuthClient::usable_login(as.base + "/mcp", "", as.login(as.base + "/other", 3600)));
    CHECK(OAuthClient::usable_login(as.base + "/mcp", "", as.login(as.base + "/mcp", 3600)));
    CHECK_FALSE(OAuthClient::usable_login(as.base + "/mcp", "https://elsewhere.example",
                                          as.login(as.base + "/mcp", 3600)));
  }
  SECTION("far from its expiry it is sent as it is") {
    auto client = OAuthClient::create(server_side(
                                          as.base + "/mcp",
                                          [&] { return as.login(as.base + "/mcp", 3600); }, &saved))
                      .value();
    CHECK(client->authorization() == "Bearer kept");
    CHECK(as.refreshes == 0);
  }
  SECTION("within a minute of it, it is refreshed first and the new login kept") {
    auto client = OAuthClient::create(
                      server_side(
                          as.base + "/mcp", [&] { return as.login(as.base + "/mcp", 30); }, &saved))
                      .value();
    CHECK(client->authorization() == "Bearer refreshed");
    CHECK(as.refreshes == 1);
    REQUIRE(saved.size() == 1);
    CHECK(saved[0].find(R"("refresh_token":"r2")") != std::string::npos);
    CHECK(client->login_text() == saved[0]);
    CHECK(client->authorization() == "Bearer refreshed");  // not refreshed again
    CHECK(as.refreshes == 1);
  }
  SECTION("a refresh refused ahead of expiry keeps the token and is not retried at once") {
    as.refuse_refresh = true;
    auto client = OAuthClient::create(
                      server_side(
                          as.base + "/mcp", [&] { return as.login(as.base + "/mcp", 30); }, &saved))
                      .value();
    CHECK(client->authorization() == "Bearer kept");
    CHECK(client->authorization() == "Bearer kept");
    CHECK(as.refreshes == 1);
    CHECK(saved.empty());
  }
}

TEST_CASE("a refused refresh takes the login another process kept, else needs a login") {
  CodeServer as;
  as.refuse_refresh = true;
  std::string kept = as.login(as.base + "/mcp", 3600);
  auto client = OAuthClient::create(server_side(
                                        as.base + "/mcp", [&] { return kept; }, nullptr))
                    .value();
  REQUIRE(client->authorization() == "Bearer kept");
  // Another process refreshed meanwhile: its token is taken, no new login asked.
  std::string theirs = kept;
  theirs.replace(theirs.find(R"("access_token": "kept")"), 22, R"("access_token": "theirs")");
  kept = theirs;
  REQUIRE(client->challenged(401, "", "Bearer kept").ok());
  CHECK(client->authorization() == "Bearer theirs");
  // Refused again with nothing newer kept: a person must log in.
  const Status s = client->challenged(401, "", "Bearer theirs");
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("needs a login: run `toolmux login up`") != std::string::npos);
  CHECK(as.registrations == 0);
}
