#include "transports/http_streams.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "src/store/session_store.h"
#include "tests/support/session_store.h"
#include "tests/support/temp_dir.h"

using nlohmann::json;
using toolmux::format_event_id;
using toolmux::parse_event_id;
using toolmux::SessionStore;
using toolmux::SessionStreams;
using toolmux::StoredEvent;
using toolmux::StreamCursor;
using toolmux::testing::open_session_store;
using toolmux::testing::TempDir;
using Kind = toolmux::SessionStreams::Decision::Kind;
using namespace std::chrono_literals;

namespace {

const std::stop_token kRunning;  // never stops

json response(const json& id) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", json::object()}};
}

json progress(const json& token, int n) {
  return {{"jsonrpc", "2.0"},
          {"method", "notifications/progress"},
          {"params", {{"progressToken", token}, {"progress", n}}}};
}

json list_changed() { return {{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}}; }

// Everything a writer at `cursor` gets until its stream ends or nothing comes
// for `quiet`.
struct Written {
  std::vector<StoredEvent> events;
  bool ended = false;
};
Written drain(SessionStreams& streams, StreamCursor cursor,
              std::chrono::milliseconds quiet = 50ms) {
  Written out;
  for (;;) {
    auto next = streams.next(cursor, quiet, kRunning);
    for (auto& e : next.events) {
      cursor.after_seq = e.seq;
      out.events.push_back(std::move(e));
    }
    if (next.end) {
      out.ended = true;
      return out;
    }
    if (next.events.empty()) return out;
  }
}

std::vector<std::string> methods(const std::vector<StoredEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    const json m = json::parse(e.data);
    out.push_back(m.contains("method") ? m["method"].get<std::string>()
                                       : "response " + m["id"].dump());
  }
  return out;
}

}  // namespace

TEST_CASE("event ids are stream-seq and parse back, anything else is refused") {
  CHECK(format_event_id(0, 12) == "0-12");
  auto cursor = parse_event_id("17-42");
  REQUIRE(cursor);
  CHECK(cursor->stream == 17);
  CHECK(cursor->after_seq == 42);
  for (const char* bad : {"", "-", "1-", "-1", "1", "a-1", "1-b", "1-2-3", " 1-2", "1-2 ",
                          "99999999999999999999-1"}) {
    INFO(bad);
    CHECK_FALSE(parse_event_id(bad));
  }
}

TEST_CASE("a response that comes first is the POST's JSON body") {
  SessionStreams streams("s", nullptr);
  auto exchange = streams.open_exchange(json(1));
  REQUIRE(exchange);
  streams.send(response(1), json(1));
  auto decision = streams.await_decision(exchange);
  CHECK(decision.kind == Kind::json_body);
  CHECK(json::parse(decision.body) == response(1));
  // Nothing reached the session's own stream.
  auto cursor = streams.attach_standalone();
  REQUIRE(cursor);
  CHECK(drain(streams, *cursor).events.empty());
}

TEST_CASE("a POST waiting for its answer gets the response sent later") {
  SessionStreams streams("s", nullptr);
  auto exchange = streams.open_exchange(json("r"));
  auto decision = std::async(std::launch::async, [&] { return streams.await_decision(exchange); });
  std::this_thread::sleep_for(50ms);
  streams.send(response("r"), json("r"));
  REQUIRE(decision.wait_for(2s) == std::future_status::ready);
  auto d = decision.get();
  CHECK(d.kind == Kind::json_body);
  CHECK(json::parse(d.body)["id"] == "r");
}

TEST_CASE("a notification first makes the POST an SSE stream that ends with the response") {
  SessionStreams streams("s", nullptr);
  auto exchange = streams.open_exchange(json(2));
  streams.send(progress("t", 1), json(2));
  auto decision = streams.await_decision(exchange);
  REQUIRE(decision.kind == Kind::sse);
  const std::uint64_t stream = decision.cursor.stream;
  CHECK(stream != 0);
  CHECK(decision.cursor.after_seq == stream);  // the stream's own seq; its events come after

  auto first = drain(streams, decision.cursor);
  CHECK(methods(first.events) == std::vector<std::string>{"notifications/progress"});
  CHECK_FALSE(first.ended);
  streams.send(progress("t", 2), json(2));
  streams.send(response(2), json(2));
  StreamCursor cursor{stream, first.events.back().seq};
  auto rest = drain(streams, cursor);
  CHECK(methods(rest.events) == std::vector<std::string>{"notifications/progress", "response 2"});
  CHECK(rest.ended);
  CHECK(rest.events.back().final);
  for (const auto& e : rest.events) {
    CHECK(e.stream == stream);
    CHECK(e.seq > first.events.back().seq);
  }
}

TEST_CASE("messages sent before the POST waits are kept in order on its stream") {
  SessionStreams streams("s", nullptr);
  auto exchange = streams.open_exchange(json(3));
  streams.send(progress("t", 1), json(3));
  streams.send(progress("t", 2), json(3));
  streams.send(response(3), json(3));
  auto decision = streams.await_decision(exchange);
  REQUIRE(decision.kind == Kind::sse);
  auto all = drain(streams, decision.cursor);
  CHECK(methods(all.events) ==
        std::vector<std::string>{"notifications/progress", "notifications/progress", "response 3"});
  CHECK(all.ended);
}

TEST_CASE("messages of no open request go on stream 0, the session's own") {
  SessionStreams streams("s", nullptr);
  auto exchange = streams.open_exchange(json(4));
  streams.send(list_changed(), nullptr);
  streams.send(progress("late", 1), json(99));  // its request has no open POST
  streams.send(response(99), json(99));         // a response nobody waits for: dropped
  streams.send(response(4), json(4));
  CHECK(streams.await_decision(exchange).kind == Kind::json_body);

  auto cursor = streams.attach_standalone();
  REQUIRE(cursor);
  CHECK(cursor->stream == 0);
  auto got = drain(streams, *cursor);
  CHECK(methods(got.events) ==
        std::vector<std::string>{"notifications/tools/list_changed", "notifications/progress"});
  CHECK_FALSE(got.ended);  // stream 0 stays open
  for (const auto& e : got.events) CHECK(e.stream == 0);
}

TEST_CASE("one GET holds stream 0, after it goes, the next starts after what was delivered") {
  SessionStreams streams("s", nullptr);
  streams.send(list_changed(), nullptr);
  auto cursor = streams.attach_standalone();
  REQUIRE(cursor);
  CHECK_FALSE(streams.attach_standalone());
  CHECK(streams.open_writers() == 1);
  auto got = drain(streams, *cursor);
  REQUIRE(got.events.size() == 1);
  streams.delivered({0, got.events.back().seq});
  streams.detach(0);
  CHECK(streams.open_writers() == 0);

  streams.send(list_changed(), nullptr);
  auto again = streams.attach_standalone();
  REQUIRE(again);
  CHECK(again->after_seq == got.events.back().seq);
  auto more = drain(streams, *again);
  REQUIRE(more.events.size() == 1);
  CHECK(more.events[0].seq > got.events[0].seq);
}

TEST_CASE("a second request with an id already in flight is refused until the first ends") {
  SessionStreams streams("s", nullptr);
  auto first = streams.open_exchange(json(5));
  REQUIRE(first);
  CHECK_FALSE(streams.open_exchange(json(5)));
  CHECK(streams.open_exchange(json("5")));  // a string id is another id
  streams.send(response(5), json(5));
  CHECK(streams.await_decision(first).kind == Kind::json_body);
  CHECK(streams.open_exchange(json(5)));
}

TEST_CASE("a request that ends without a response (cancelled) gives the POST none") {
  SessionStreams streams("s", nullptr);
  auto exchange = streams.open_exchange(json(6));
  streams.request_finished(json(6));
  CHECK(streams.await_decision(exchange).kind == Kind::none);

  SECTION("while the POST waits") {
    auto waiting = streams.open_exchange(json(7));
    auto decision = std::async(std::launch::async, [&] { return streams.await_decision(waiting); });
    std::this_thread::sleep_for(50ms);
    streams.request_finished(json(7));
    REQUIRE(decision.wait_for(2s) == std::future_status::ready);
    CHECK(decision.get().kind == Kind::none);
  }
  SECTION("after a notification: the stream carries it, then ends") {
    auto streaming = streams.open_exchange(json(8));
    streams.send(progress("t", 1), json(8));
    streams.request_finished(json(8));
    auto decision = streams.await_decision(streaming);
    REQUIRE(decision.kind == Kind::sse);
    auto got = drain(streams, decision.cursor, 2000ms);
    CHECK(methods(got.events) == std::vector<std::string>{"notifications/progress"});
    CHECK(got.ended);
  }
}

TEST_CASE("resume replays the events after the given one, of that stream only") {
  SessionStreams streams("s", nullptr);
  streams.send(list_changed(), nullptr);
  auto exchange = streams.open_exchange(json(9));
  streams.send(progress("t", 1), json(9));
  auto decision = streams.await_decision(exchange);
  REQUIRE(decision.kind == Kind::sse);
  const auto request_stream = decision.cursor.stream;
  streams.send(list_changed(), nullptr);
  streams.send(progress("t", 2), json(9));
  streams.send(list_changed(), nullptr);
  streams.send(response(9), json(9));

  auto standalone = streams.attach_standalone();
  auto zero = drain(streams, *standalone);
  REQUIRE(zero.events.size() == 3);
  streams.detach(0);

  auto resumed = streams.resume(format_event_id(0, zero.events[0].seq));
  REQUIRE(resumed);
  auto got = drain(streams, *resumed);
  REQUIRE(got.events.size() == 2);
  CHECK(got.events[0].seq == zero.events[1].seq);
  CHECK(got.events[1].seq == zero.events[2].seq);
  streams.detach(0);

  auto request = drain(streams, decision.cursor);
  REQUIRE(request.events.size() == 3);
  auto resumed_request = streams.resume(format_event_id(request_stream, request.events[0].seq));
  REQUIRE(resumed_request);
  auto rest = drain(streams, *resumed_request);
  CHECK(methods(rest.events) == std::vector<std::string>{"notifications/progress", "response 9"});
  CHECK(rest.ended);

  // Ids that name no stream of this session.
  CHECK_FALSE(streams.resume("junk"));
  CHECK_FALSE(streams.resume(format_event_id(1000, 1000)));
  CHECK_FALSE(streams.resume(format_event_id(request_stream, request_stream - 1)));
}

TEST_CASE("a tool may close its request's stream, the client resumes it to get the rest") {
  SessionStreams streams("s", nullptr);
  auto exchange = streams.open_exchange(json(10));
  streams.send(progress("t", 1), json(10));
  streams.close_request_stream(json(10));
  auto decision = streams.await_decision(exchange);
  REQUIRE(decision.kind == Kind::sse);
  auto before = drain(streams, decision.cursor);
  CHECK(methods(before.events) == std::vector<std::string>{"notifications/progress"});
  CHECK(before.ended);  // closed, though the request goes on

  streams.send(progress("t", 2), json(10));
  streams.send(response(10), json(10));
  auto resumed = streams.resume(format_event_id(decision.cursor.stream, before.events[0].seq));
  REQUIRE(resumed);
  auto after = drain(streams, *resumed);
  CHECK(methods(after.events) == std::vector<std::string>{"notifications/progress", "response 10"});
  CHECK(after.ended);
}

TEST_CASE("events are stored: a new SessionStreams on the store resumes them, ids go on") {
  TempDir dir;
  auto store = open_session_store(dir);
  std::uint64_t first_seq = 0;
  std::uint64_t last_seq = 0;
  {
    SessionStreams streams("s", store.get());
    streams.send(list_changed(), nullptr);
    streams.send(list_changed(), nullptr);
    streams.send(list_changed(), nullptr);
    auto cursor = streams.attach_standalone();
    auto got = drain(streams, *cursor);
    REQUIRE(got.events.size() == 3);
    first_seq = got.events[0].seq;
    last_seq = got.events[2].seq;
  }
  SessionStreams restarted("s", store.get());
  auto resumed = restarted.resume(format_event_id(0, first_seq));
  REQUIRE(resumed);
  auto got = drain(restarted, *resumed);
  REQUIRE(got.events.size() == 2);
  CHECK(got.events[1].seq == last_seq);
  restarted.send(list_changed(), nullptr);
  auto more = drain(restarted, {0, last_seq});
  REQUIRE(more.events.size() == 1);
  CHECK(more.events[0].seq > last_seq);
  // Another session's streams share nothing with it.
  SessionStreams other("t", store.get());
  CHECK_FALSE(other.resume(format_event_id(0, first_seq)));
}

TEST_CASE("a resume older than the events kept in memory is served from the store") {
  TempDir dir;
  auto store = open_session_store(dir);
  SessionStreams streams("s", store.get());
  for (int i = 0; i < 1500; ++i) streams.send(progress("t", i), nullptr);
  auto resumed = streams.resume(format_event_id(0, 10));
  REQUIRE(resumed);
  auto got = drain(streams, *resumed);
  REQUIRE(got.events.size() == 1490);
  CHECK(got.events.front().seq == 11);
  CHECK(json::parse(got.events.front().data)["params"]["progress"] == 10);
  CHECK(got.events.back().seq == 1500);
}

TEST_CASE("large events past what is kept in memory are still delivered whole, in order") {
  TempDir dir;
  auto store = open_session_store(dir);
  SessionStreams streams("s", store.get());
  auto cursor = streams.attach_standalone();
  REQUIRE(cursor);
  const std::string big(300 * 1024, 'x');  // four of these are over the memory kept
  for (int i = 0; i < 8; ++i) {
    streams.send({{"jsonrpc", "2.0"},
                  {"method", "notifications/message"},
                  {"params", {{"n", i}, {"data", big}}}},
                 nullptr);
  }
  auto got = drain(streams, *cursor);
  REQUIRE(got.events.size() == 8);
  for (int i = 0; i < 8; ++i) {
    const json m = json::parse(got.events[i].data);
    CHECK(m["params"]["n"] == i);
    CHECK(m["params"]["data"].get<std::string>().size() == big.size());
  }
  auto resumed = streams.resume(format_event_id(0, got.events[1].seq));
  REQUIRE(resumed);
  CHECK(drain(streams, *resumed).events.size() == 6);
}

TEST_CASE("the end of the session stops every writer and waiting POST") {
  SessionStreams streams("s", nullptr);
  auto cursor = streams.attach_standalone();
  REQUIRE(cursor);
  auto exchange = streams.open_exchange(json(11));
  auto writer =
      std::async(std::launch::async, [&] { return streams.next(*cursor, 10s, kRunning); });
  auto post = std::async(std::launch::async, [&] { return streams.await_decision(exchange); });
  std::this_thread::sleep_for(50ms);
  streams.session_ended();
  REQUIRE(writer.wait_for(2s) == std::future_status::ready);
  CHECK(writer.get().end);
  REQUIRE(post.wait_for(2s) == std::future_status::ready);
  CHECK(post.get().kind == Kind::none);
  CHECK_FALSE(streams.attach_standalone());
  CHECK_FALSE(streams.resume("0-0"));
  streams.send(list_changed(), nullptr);  // dropped, no crash
}

TEST_CASE(
    "server shutdown (stopping) ends the writers of stream 0, and a waiting POST gets its answer") {
  SessionStreams streams("s", nullptr);
  std::stop_source stopping;
  auto cursor = streams.attach_standalone();
  auto exchange = streams.open_exchange(json(12));
  auto writer = std::async(std::launch::async,
                           [&] { return streams.next(*cursor, 10s, stopping.get_token()); });
  auto post = std::async(std::launch::async, [&] { return streams.await_decision(exchange); });
  std::this_thread::sleep_for(50ms);
  stopping.request_stop();
  REQUIRE(writer.wait_for(2s) == std::future_status::ready);
  CHECK(writer.get().end);
  // The server drains its calls before it stops: one that finishes is answered.
  CHECK(post.wait_for(300ms) == std::future_status::timeout);
  streams.send(response(12), json(12));
  REQUIRE(post.wait_for(2s) == std::future_status::ready);
  CHECK(post.get().kind == Kind::json_body);
}

TEST_CASE("a POST waiting for its answer is woken by it, however long it waits") {
  SessionStreams streams("s", nullptr);
  auto exchange = streams.open_exchange(7);
  REQUIRE(exchange);
  auto decided = std::async(std::launch::async, [&] { return streams.await_decision(exchange); });
  std::this_thread::sleep_for(50ms);
  streams.send(response(7), 7);
  REQUIRE(decided.wait_for(30s) == std::future_status::ready);
  const auto decision = decided.get();
  CHECK(decision.kind == Kind::json_body);
  CHECK(json::parse(decision.body)["id"] == 7);
}
