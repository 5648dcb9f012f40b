// The requestState key serve runs with (src/app/state_key.h): with
// --store postgresql every instance has the same one, so a 2026-07-28
// input_required state minted on one instance is opened on another.
#include "src/app/state_key.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <memory>

#include "src/protocol/mcp_server.h"
#include "src/store/pg_store.h"
#include "tests/support/modern_greeting.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_tools.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

// One toolmux instance's server, with the key serve would give it.
struct Instance {
  Instance(const ServeOptions& serve, PgStore* shared) {
    ServerOptions options;
    options.state_key = state_key_for(serve, shared, logger);
    server = std::make_unique<McpServer>(greeting_catalog(), options, logger, metrics);
  }
  ~Instance() {
    session->cancel_all_calls();
    session->wait_for_calls(std::chrono::seconds(2));
    server->wait_for_running_tools(std::chrono::seconds(2));
    std::fclose(log_file);
  }
  json request(const json& id, json params) {
    params["_meta"] = kModernMeta;
    const json message = {
        {"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", params}};
    server->handle(jsonrpc::parse_message(message.dump(), server->json_limits()), session);
    return sink.response(id);
  }

  CapturingSink sink;
  std::shared_ptr<Session> session = std::make_shared<Session>("process", "local", "test", sink);
  std::FILE* log_file = std::tmpfile();
  Logger logger{log_file, LogLevel::debug};
  Metrics metrics;
  std::unique_ptr<McpServer> server;
};

// The serve options of two instances, each with a data directory of its own.
struct TwoMachines {
  TwoMachines() {
    first.data_dir = first_dir.path();
    second.data_dir = second_dir.path();
  }
  TempDir first_dir;
  TempDir second_dir;
  ServeOptions first;
  ServeOptions second;
};

std::shared_ptr<PgStore> open_store(const std::string& conninfo) {
  PgStoreOptions options;
  options.conninfo = conninfo;
  auto store = PgStore::open(options);
  INFO(store.message());
  REQUIRE(store.ok());
  return *store;
}

// Asks greet on `asked`, answers through `answered`: the greeting, or the error.
json ask_here_answer_there(Instance& asked, Instance& answered) {
  const json first = asked.request(1, {{"name", "greet"}, {"arguments", json::object()}});
  REQUIRE(first["result"]["resultType"] == "input_required");
  return answered.request(
      2, {{"name", "greet"},
          {"arguments", json::object()},
          {"requestState", first["result"]["requestState"]},
          {"inputResponses",
           {{"user_name", {{"action", "accept"}, {"content", {{"name", "Alice"}}}}}}}});
}

}  // namespace

TEST_CASE("with PostgreSQL, an input_required state minted on one instance opens on another",
          "[state_key]") {
  const std::string conninfo = fresh_postgres_database();
  auto first_store = open_store(conninfo);
  auto second_store = open_store(conninfo);
  TwoMachines machines;
  Instance first(machines.first, first_store.get());
  Instance second(machines.second, second_store.get());
  const json answer = ask_here_answer_there(first, second);
  CHECK(answer["result"]["resultType"] == "complete");
  CHECK(answer["result"]["content"][0]["text"] == "Hello, Alice!");
}

TEST_CASE("with RocksDB, each data directory has its own key: another's state is refused",
          "[state_key]") {
  TwoMachines machines;
  Instance first(machines.first, nullptr);
  Instance second(machines.second, nullptr);
  const json answer = ask_here_answer_there(first, second);
  CHECK(answer["error"]["code"] == -32602);
}
