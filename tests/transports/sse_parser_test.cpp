#include "transports/sse_parser.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using toolmux::SseEvent;
using toolmux::SseParser;

namespace {

// Feeds `text` in pieces of `piece` bytes; the events it gives.
std::vector<SseEvent> parse(SseParser& parser, const std::string& text, std::size_t piece,
                            bool* ok = nullptr) {
  std::vector<SseEvent> events;
  bool fine = true;
  for (std::size_t at = 0; at < text.size() && fine; at += piece) {
    fine = parser.feed(std::string_view(text).substr(at, piece), [&](const SseEvent& e) {
      events.push_back(e);
      return true;
    });
  }
  if (ok) *ok = fine;
  return events;
}

}  // namespace

TEST_CASE("events: data lines joined with LF, ids kept, comments and empty events skipped") {
  const std::string stream =
      "\xEF\xBB\xBFid: 0-0\r\nretry: 1500\r\ndata: \r\n\r\n"  // priming: only an id
      ": keep-alive\n\n"
      "id: 0-1\ndata: {\"a\":\n"
      "data:1}\n\n"
      "event: ping\rdata: x\r\r"
      "field-without-colon\n"
      "data\n\n"  // a data line with no value: empty data, not dispatched
      "id: 0-2\ndata: last\n\n"
      "data: unfinished\n";
  for (std::size_t piece : {std::size_t{1}, std::size_t{2}, std::size_t{7}, stream.size()}) {
    SseParser parser(1024);
    const auto events = parse(parser, stream, piece);
    REQUIRE(events.size() == 3);
    CHECK(events[0].data == "{\"a\":\n1}");
    CHECK(events[0].id == "0-1");
    CHECK(events[0].type.empty());
    CHECK(events[1].type == "ping");
    CHECK(events[1].data == "x");
    CHECK(events[1].id == "0-1");
    CHECK(events[2].data == "last");
    CHECK(parser.last_event_id() == "0-2");
    REQUIRE(parser.retry());
    CHECK(parser.retry()->count() == 1500);
  }
}

TEST_CASE("an event over the bound stops the parser") {
  SseParser parser(8);
  bool ok = true;
  parse(parser, "data: 12345\ndata: 6789\n\n", 3, &ok);
  CHECK_FALSE(ok);
  SseParser lines(8);
  parse(lines, std::string(100, 'x'), 4, &ok);  // a line that never ends
  CHECK_FALSE(ok);
  SseParser fits(8);
  CHECK(parse(fits, "data: 12345678\n\n", 5, &ok).size() == 1);
  CHECK(ok);
}

TEST_CASE("a retry that is not a number is ignored") {
  SseParser parser(64);
  parse(parser, "retry: soon\n\nretry: 12a\n\n", 64);
  CHECK_FALSE(parser.retry());
}
