// The 2026-07-28 protocol served beside the legacy one (src/protocol/modern.h):
// requests that carry their own _meta, on a session that never initialized.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>

#include "src/protocol/mcp_server.h"
#include "tests/support/modern_greeting.h"
#include "tests/support/test_tools.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

const json& kMeta = kModernMeta;

struct Fixture {
  explicit Fixture(CallLimits limits = {}) {
    ServerOptions options;
    options.call_limits = limits;
    server = std::make_unique<McpServer>(greeting_catalog(), options, logger, metrics);
  }
  ~Fixture() {
    server->end_listens();
    session->cancel_all_calls();
    session->wait_for_calls(std::chrono::seconds(2));
    server->wait_for_running_tools(std::chrono::seconds(2));
    std::fclose(log_file);
  }
  void send(const json& message) {
    server->handle(jsonrpc::parse_message(message.dump(), server->json_limits()), session);
  }
  json request(const json& id, const std::string& method, json params = json::object(),
               const json& meta = kMeta) {
    if (!meta.is_null()) params["_meta"] = meta;
    send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
    return sink.response(id);
  }

  CapturingSink sink;
  std::shared_ptr<Session> session = std::make_shared<Session>("process", "local", "test", sink);
  std::FILE* log_file = std::tmpfile();
  Logger logger{log_file, LogLevel::debug};
  Metrics metrics;
  std::unique_ptr<McpServer> server;
};

const json& server_info_of(const json& result) {
  return result["_meta"]["io.modelcontextprotocol/serverInfo"];
}

}  // namespace

TEST_CASE("server/discover names every version, the capabilities and the server, cacheably",
          "[modern]") {
  Fixture f;
  json r = f.request(1, "server/discover");
  REQUIRE(r.contains("result"));
  const json& result = r["result"];
  CHECK(result["supportedVersions"] ==
        json{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"});
  CHECK(result["capabilities"]["tools"]["listChanged"] == true);
  CHECK(result["resultType"] == "complete");
  CHECK(server_info_of(result)["name"] == "toolmux");
  CHECK(result["ttlMs"] == 60000);
  CHECK(result["cacheScope"] == "public");
  CHECK(result["instructions"].is_string());
  // Without the modern _meta it is not a method: a legacy client probing gets -32601.
  CHECK(f.request(2, "server/discover", json::object(), nullptr)["error"]["code"] == -32601);
}

TEST_CASE(
    "a modern request with a version toolmux does not speak gets -32022 listing those it does",
    "[modern]") {
  Fixture f;
  json meta = kMeta;
  meta["io.modelcontextprotocol/protocolVersion"] = "1900-01-01";
  json r = f.request(7, "tools/list", json::object(), meta);
  CHECK(r["id"] == 7);
  CHECK(r["error"]["code"] == -32022);
  CHECK(r["error"]["data"]["requested"] == "1900-01-01");
  CHECK(r["error"]["data"]["supported"][0] == "2026-07-28");
}

TEST_CASE("a modern request without its client capabilities is -32602 naming the field",
          "[modern]") {
  Fixture f;
  json r = f.request(1, "tools/list", json::object(),
                     {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}});
  CHECK(r["error"]["code"] == -32602);
  CHECK(r["error"]["message"].get<std::string>().find(
            "io.modelcontextprotocol/clientCapabilities") != std::string::npos);
}

TEST_CASE(
    "methods the 2026-07-28 protocol removed are -32601 in it, and still served in the legacy era",
    "[modern]") {
  Fixture f;
  for (const char* method : {"ping", "initialize", "logging/setLevel", "resources/subscribe",
                             "resources/unsubscribe", "no/such/method"}) {
    INFO(method);
    CHECK(f.request(method, method)["error"]["code"] == -32601);
  }
  CHECK_FALSE(f.session->initialized());
  CHECK(f.request("p", "ping", json::object(), nullptr).contains("result"));
}

TEST_CASE("modern requests are served on a session that never initialized, which stays legacy",
          "[modern]") {
  Fixture f;
  json list = f.request(1, "tools/list");
  REQUIRE(list.contains("result"));
  CHECK(list["result"]["resultType"] == "complete");
  CHECK(list["result"]["ttlMs"] == 60000);
  CHECK(list["result"]["cacheScope"] == "public");
  CHECK(server_info_of(list["result"])["name"] == "toolmux");
  CHECK(list["result"]["tools"] == f.request(2, "tools/list")["result"]["tools"]);
  json call = f.request(3, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "hi"}}}});
  CHECK(call["result"]["content"][0]["text"] == "hi");
  CHECK(call["result"]["resultType"] == "complete");
  CHECK_FALSE(call["result"].contains("ttlMs"));  // a call's result is not cacheable
  // A request without _meta is the legacy era's, which needs initialize first.
  CHECK_FALSE(f.session->initialized());
  CHECK(f.request(4, "tools/list", json::object(), nullptr)["error"]["code"] == -32600);
}

TEST_CASE("a tool's question goes back in the answer and the retry with the answer completes it",
          "[modern][mrtr]") {
  Fixture f;
  json r1 = f.request(1, "tools/call", {{"name", "greet"}, {"arguments", json::object()}});
  REQUIRE(r1.contains("result"));
  CHECK(r1["result"]["resultType"] == "input_required");
  CHECK(r1["result"]["inputRequests"]["user_name"]["method"] == "elicitation/create");
  CHECK_FALSE(r1["result"].contains("content"));
  CHECK_FALSE(r1["result"].contains("ttlMs"));  // not cacheable
  // No request went to the client: the modern era has none.
  CHECK(f.sink.notifications("elicitation/create").empty());
  const json state = r1["result"]["requestState"];

  json r2 =
      f.request(2, "tools/call",
                {{"name", "greet"},
                 {"arguments", json::object()},
                 {"requestState", state},
                 {"inputResponses",
                  {{"user_name", {{"action", "accept"}, {"content", {{"name", "Alice"}}}}}}}});
  CHECK(r2["result"]["resultType"] == "complete");
  CHECK(r2["result"]["content"][0]["text"] == "Hello, Alice!");

  json tampered = f.request(3, "tools/call",
                            {{"name", "greet"},
                             {"arguments", json::object()},
                             {"requestState", state.get<std::string>() + "-TAMPERED"},
                             {"inputResponses", {{"user_name", {{"action", "accept"}}}}}});
  CHECK(tampered["error"]["code"] == -32602);

  SECTION("a client that cannot be asked gets the tool's answer at once") {
    json meta = kMeta;
    meta["io.modelcontextprotocol/clientCapabilities"] = json::object();
    json r = f.request(4, "tools/call", {{"name", "greet"}, {"arguments", json::object()}}, meta);
    CHECK(r["result"]["resultType"] == "complete");
    CHECK(r["result"]["isError"] == true);
    CHECK(r["result"]["content"][0]["text"].get<std::string>().find(
              "did not declare the elicitation capability") != std::string::npos);
  }
}

TEST_CASE("notifications/message goes to a modern request only when it asked with its logLevel",
          "[modern]") {
  Fixture f;
  f.request(1, "tools/call", {{"name", "throws"}, {"arguments", json::object()}});
  CHECK(f.sink.notifications("notifications/message").empty());
  json meta = kMeta;
  meta["io.modelcontextprotocol/logLevel"] = "info";
  f.request(2, "tools/call", {{"name", "throws"}, {"arguments", json::object()}}, meta);
  CHECK(f.sink.notifications("notifications/message").size() == 1);
}

TEST_CASE(
    "subscriptions/listen is acknowledged first, then carries the changes it asked for, tagged",
    "[modern][listen]") {
  Fixture f;
  f.send({{"jsonrpc", "2.0"},
          {"id", "L"},
          {"method", "subscriptions/listen"},
          {"params", {{"_meta", kMeta}, {"notifications", {{"toolsListChanged", true}}}}}});
  REQUIRE(f.sink.wait_for_notification("notifications/subscriptions/acknowledged"));
  json ack = f.sink.notifications("notifications/subscriptions/acknowledged")[0];
  CHECK(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L");
  CHECK(ack["params"]["notifications"] == json{{"toolsListChanged", true}});

  f.server->replace_catalog(greeting_catalog());
  REQUIRE(f.sink.wait_for_notification("notifications/tools/list_changed"));
  auto changed = f.sink.notifications("notifications/tools/list_changed");
  REQUIRE(changed.size() == 1);
  CHECK(changed[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L");
  // Not asked for: not sent.
  CHECK(f.sink.notifications("notifications/prompts/list_changed").empty());

  SECTION("ended by the server, it is answered, tagged") {
    f.server->end_listens();
    json end = f.sink.response("L");
    CHECK(end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L");
    CHECK(f.session->wait_for_calls(std::chrono::seconds(2)));
  }
  SECTION("cancelled by the client, it ends with no answer and hears nothing more") {
    f.send({{"jsonrpc", "2.0"},
            {"method", "notifications/cancelled"},
            {"params", {{"requestId", "L"}}}});
    CHECK(f.session->wait_for_calls(std::chrono::seconds(2)));
    f.server->replace_catalog(greeting_catalog());
    CHECK(f.sink.notifications("notifications/tools/list_changed").size() == 1);
    CHECK(f.sink.response("L", std::chrono::milliseconds(100)).is_null());
  }
}

TEST_CASE("a malformed listen filter is -32602 naming what is wrong", "[modern][listen]") {
  Fixture f;
  json r = f.request(1, "subscriptions/listen", {{"notifications", {{"toolsListChanged", "yes"}}}});
  CHECK(r["error"]["code"] == -32602);
  CHECK(r["error"]["message"] ==
        "Invalid params: \"notifications.toolsListChanged\" must be a boolean");
}

TEST_CASE("the per-session call limits do not apply to modern requests, which have no session",
          "[modern]") {
  CallLimits limits;
  limits.max_running_per_session = 1;
  limits.max_queued_per_session = 0;
  Fixture f(limits);
  auto slow = [&](const json& id, const json& meta) {
    json params{{"name", "slow"}, {"arguments", {{"ms", 100}}}};
    if (!meta.is_null()) params["_meta"] = meta;
    f.send({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", params}});
  };
  slow("m1", kMeta);
  slow("m2", kMeta);
  CHECK(f.sink.response("m1")["result"]["content"][0]["text"] == "done");
  CHECK(f.sink.response("m2")["result"]["content"][0]["text"] == "done");
  // The legacy session's second call finds its one place taken and no room to wait.
  f.request("init", "initialize", {{"protocolVersion", "2025-11-25"}}, nullptr);
  slow("l1", nullptr);
  slow("l2", nullptr);
  CHECK(f.sink.response("l2")["error"]["code"] == -32000);
  CHECK(f.sink.response("l1")["result"]["content"][0]["text"] == "done");
}
