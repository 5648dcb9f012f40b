#include "src/app/session_directory.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "tests/support/quiet_logger.h"
#include "tests/support/session_store.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_tools.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;
using Kind = SessionStreams::Decision::Kind;

namespace {

struct Fixture {
  explicit Fixture(SessionStore* store = nullptr, SessionLimits limits = {}) {
    directory = std::make_unique<SessionDirectory>(server, limits, store, nullptr, quiet.logger);
  }

  // Delivers a request to `session` as the HTTP transport does (its exchange
  // open first), and returns the answer's text.
  static std::string ask(const HttpSession& session, const json& request) {
    auto exchange = session.streams->open_exchange(request["id"]);
    REQUIRE(exchange);
    session.peer->deliver(jsonrpc::parse_message(request.dump()), Carrier::carry);
    auto decision = session.streams->await_decision(exchange);
    REQUIRE(decision.kind == Kind::json_body);
    return decision.body;
  }

  static json initialize(const json& id) {
    return {{"jsonrpc", "2.0"},
            {"id", id},
            {"method", "initialize"},
            {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()}}}};
  }

  QuietLogger quiet;
  Metrics metrics;
  McpServer server{make_test_catalog(), ServerOptions{}, quiet.logger, metrics};
  std::unique_ptr<SessionDirectory> directory;
};

}  // namespace

TEST_CASE("a session is found again by its principal only, with the same streams, until ended") {
  Fixture f;
  HttpSession made = f.directory->create("alice");
  REQUIRE(made);
  REQUIRE(made.streams);
  const std::string id = made.peer->id();

  HttpSession found = f.directory->find(id, "alice");
  REQUIRE(found);
  CHECK(found.peer->id() == id);
  CHECK(found.streams == made.streams);
  CHECK_FALSE(f.directory->find(id, "mallory"));
  CHECK_FALSE(f.directory->find("no-such-session", "alice"));
  CHECK(f.directory->count() == 1);

  CHECK_FALSE(f.directory->end(id, "mallory"));
  CHECK(f.directory->end(id, "alice"));
  CHECK_FALSE(f.directory->find(id, "alice"));
  CHECK(f.directory->count() == 0);
}

TEST_CASE("what a session's peer delivers is answered on that session's streams") {
  Fixture f;
  HttpSession session = f.directory->create("local");
  REQUIRE(session);
  CHECK_FALSE(session.peer->initialized());
  const json answer = json::parse(Fixture::ask(session, Fixture::initialize(1)));
  CHECK(answer["result"]["protocolVersion"] == "2025-11-25");
  CHECK(session.peer->initialized());
  const json pong =
      json::parse(Fixture::ask(session, {{"jsonrpc", "2.0"}, {"id", "p"}, {"method", "ping"}}));
  CHECK(pong["id"] == "p");
  CHECK(pong.contains("result"));
}

TEST_CASE("past the limit of sessions, create gives none") {
  SessionLimits limits;
  limits.max_sessions = 1;
  Fixture f(nullptr, limits);
  CHECK(f.directory->create("local"));
  CHECK_FALSE(f.directory->create("local"));
}

TEST_CASE("sessions restored from the store come back with streams of their own") {
  TempDir dir;
  auto store = open_session_store(dir);
  std::string id;
  {
    Fixture first(store.get());
    HttpSession session = first.directory->create("local");
    REQUIRE(session);
    id = session.peer->id();
    Fixture::ask(session, Fixture::initialize(1));
  }
  Fixture second(store.get());
  HttpSession restored = second.directory->find(id, "local");
  REQUIRE(restored);
  REQUIRE(restored.streams);
  CHECK(restored.peer->initialized());
  const json pong =
      json::parse(Fixture::ask(restored, {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}}));
  CHECK(pong.contains("result"));
}
