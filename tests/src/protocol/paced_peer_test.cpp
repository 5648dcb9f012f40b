// PacedPeer with a real McpServer: requests past the call limits are held and
// handed on in order, never refused as busy; the rest is handled at once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "src/protocol/paced_peer.h"
#include "tests/support/test_tools.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

// The test tools and "hold" {}: runs until it is cancelled (10 s timeout).
std::shared_ptr<Catalog> catalog_with_hold() {
  auto registry = make_test_registry();
  REQUIRE(registry
              ->add(spec("hold", object_schema(), 10000),
                    [](const json&, CallContext& ctx) {
                      while (!ctx.cancelled()) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(5));
                      }
                      return ToolResult::text("let go");
                    })
              .empty());
  return make_test_catalog(registry);
}

struct Fixture {
  // One call runs at a time and none waits in the server's queue: every
  // other call is held by the peer.
  Fixture() {
    ServerOptions options;
    options.call_limits = CallLimits{1, 1, 0, 0};
    server = std::make_unique<McpServer>(catalog_with_hold(), options, logger, metrics);
    peer = std::make_unique<PacedPeer>(*server, session, [this] { return stopping.load(); });
    deliver(
        json{{"jsonrpc", "2.0"},
             {"id", "init"},
             {"method", "initialize"},
             {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()}}}});
    REQUIRE(sink.response("init").contains("result"));
  }
  ~Fixture() {
    peer->finish(false);
    session->cancel_all_calls();
    session->wait_for_calls(std::chrono::seconds(2));
    server->wait_for_running_tools(std::chrono::seconds(2));
    std::fclose(log_file);
  }
  void deliver(const json& message) {
    peer->deliver(jsonrpc::parse_message(message.dump(), server->json_limits()), Carrier::hand_off);
  }
  void call(const json& id, const std::string& tool, json arguments = json::object()) {
    deliver({{"jsonrpc", "2.0"},
             {"id", id},
             {"method", "tools/call"},
             {"params", {{"name", tool}, {"arguments", std::move(arguments)}}}});
  }
  void cancel(const json& id) {
    deliver({{"jsonrpc", "2.0"},
             {"method", "notifications/cancelled"},
             {"params", {{"requestId", id}}}});
  }

  CapturingSink sink;
  std::shared_ptr<Session> session = std::make_shared<Session>("stdio", "local", "test", sink);
  std::FILE* log_file = std::tmpfile();
  Logger logger{log_file, LogLevel::debug};
  Metrics metrics;
  std::unique_ptr<McpServer> server;
  std::atomic<bool> stopping{false};  // what the peer is told of a stop signal
  std::unique_ptr<PacedPeer> peer;
};

}  // namespace

TEST_CASE("calls past the limits are held and run in the order they came, none refused") {
  Fixture f;
  f.call("first", "hold");
  for (int i = 1; i <= 50; ++i) f.call(i, "echo", {{"text", std::to_string(i)}});
  CHECK(f.peer->held() == 50);
  // Held, not refused: nothing was answered yet, and ping still is.
  f.deliver({{"jsonrpc", "2.0"}, {"id", "ping"}, {"method", "ping"}});
  CHECK(f.sink.response("ping").contains("result"));
  CHECK(f.sink.response(1, std::chrono::milliseconds(0)).is_null());

  f.cancel("first");
  std::vector<int> order;
  for (int i = 1; i <= 50; ++i) {
    json r = f.sink.response(i);
    INFO(r.dump());
    REQUIRE(r["result"]["content"][0]["text"] == std::to_string(i));
  }
  for (const json& m : f.sink.messages()) {
    if (m.contains("id") && m["id"].is_number()) order.push_back(m["id"].get<int>());
  }
  CHECK(order.size() == 50);
  CHECK(std::is_sorted(order.begin(), order.end()));
  CHECK_THAT(f.metrics.render_prometheus(), Catch::Contains("toolmux_calls_refused_total 0\n"));
}

TEST_CASE("a held call that is cancelled never runs and gets no response") {
  Fixture f;
  f.call("first", "hold");
  f.call("held", "echo", {{"text", "never"}});
  f.call("next", "echo", {{"text", "next"}});
  CHECK(f.peer->held() == 2);
  f.cancel("held");
  CHECK(f.peer->held() == 1);
  f.cancel("first");
  CHECK(f.sink.response("next")["result"]["content"][0]["text"] == "next");
  CHECK(f.sink.response("held", std::chrono::milliseconds(100)).is_null());
  CHECK(f.metrics.calls("echo", "ok") == 1);
}

TEST_CASE("the reader waits while the held calls are at their bound, then goes on") {
  Fixture f;
  f.call("first", "hold");
  for (std::size_t i = 0; i < PacedPeer::kMaxHeldMessages; ++i) {
    f.call(static_cast<int>(i), "echo", {{"text", "x"}});
  }
  CHECK(f.peer->held() == PacedPeer::kMaxHeldMessages);
  // One more: the reader blocks in deliver until one is handed on.
  auto reader = std::async(std::launch::async, [&] { f.call("last", "echo", {{"text", "last"}}); });
  CHECK(reader.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);
  f.cancel("first");  // from another thread than the blocked reader, as a test may
  CHECK(reader.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  CHECK(f.sink.response("last")["result"]["content"][0]["text"] == "last");
}

TEST_CASE("calls still held when the peer finishes are answered that toolmux is stopping") {
  Fixture f;
  f.call("first", "hold");
  f.call("held", "echo", {{"text", "x"}});
  CHECK_FALSE(f.peer->wait_until_handed_on(std::chrono::milliseconds(0)));
  f.peer->finish(true);
  json r = f.sink.response("held");
  CHECK(r["error"]["code"] == -32000);
  CHECK(r["error"]["message"] == "toolmux is stopping; the request was not run");
  CHECK(f.peer->held() == 0);
}

TEST_CASE("a reader waiting for room gives up when toolmux is told to stop") {
  Fixture f;
  f.call("first", "hold");
  for (std::size_t i = 0; i < PacedPeer::kMaxHeldMessages; ++i) {
    f.call(static_cast<int>(i), "echo", {{"text", "x"}});
  }
  auto reader = std::async(std::launch::async, [&] { f.call("last", "echo", {{"text", "last"}}); });
  CHECK(reader.wait_for(std::chrono::milliseconds(20)) == std::future_status::timeout);
  f.stopping = true;  // as a signal does: a flag, no wake-up
  CHECK(reader.wait_for(std::chrono::seconds(2)) == std::future_status::ready);
  CHECK(f.peer->held() == PacedPeer::kMaxHeldMessages);
}
