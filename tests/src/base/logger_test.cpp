#include "src/base/logger.h"
#include "src/base/redact.h"

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using toolmux::LogFields;
using toolmux::Logger;
using toolmux::LogLevel;
using namespace std::chrono_literals;

namespace {

// The records written to `file` so far, parsed, in order.
std::vector<nlohmann::json> records_in(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::vector<nlohmann::json> records;
  char line[4096];
  while (std::fgets(line, sizeof line, file)) records.push_back(nlohmann::json::parse(line));
  std::fseek(file, 0, SEEK_END);
  return records;
}

// Their events, in order.
std::vector<std::string> events_in(std::FILE* file) {
  std::vector<std::string> events;
  for (const auto& record : records_in(file)) events.push_back(record["event"].get<std::string>());
  return events;
}

struct TempFile {
  std::FILE* file = std::tmpfile();
  ~TempFile() { std::fclose(file); }
};

}  // namespace

TEST_CASE("by default each record is written at once") {
  TempFile out;
  Logger logger(out.file);
  logger.write(LogLevel::info, "one");
  CHECK(events_in(out.file) == std::vector<std::string>{"one"});
}

TEST_CASE("buffered, records soon after a write wait, and a warning goes out at once with them") {
  TempFile out;
  Logger logger(out.file, LogLevel::debug);
  logger.buffer_for(60s);  // longer than the test: only the rules below write
  logger.write_batched(LogLevel::info, "first");  // the first in a while: at once
  CHECK(events_in(out.file) == std::vector<std::string>{"first"});
  logger.write_batched(LogLevel::info, "second");
  logger.write_batched(LogLevel::debug, "third");
  CHECK(events_in(out.file) == std::vector<std::string>{"first"});
  logger.write_batched(LogLevel::warning, "fourth");
  CHECK(events_in(out.file) == std::vector<std::string>{"first", "second", "third", "fourth"});
  logger.write_batched(LogLevel::info, "fifth");
  logger.flush();
  CHECK(events_in(out.file) ==
        std::vector<std::string>{"first", "second", "third", "fourth", "fifth"});
}

TEST_CASE("buffered records go out on the timer, when enough wait, and at the end") {
  TempFile out;
  SECTION("the timer") {
    Logger logger(out.file);
    logger.buffer_for(20ms);
    logger.write_batched(LogLevel::info, "now");
    logger.write_batched(LogLevel::info, "soon");
    std::vector<std::string> seen;
    for (int i = 0; i < 500 && seen.size() < 2; ++i) {
      std::this_thread::sleep_for(10ms);
      seen = events_in(out.file);
    }
    CHECK(seen == std::vector<std::string>{"now", "soon"});
  }
  SECTION("a full buffer") {
    Logger logger(out.file);
    logger.buffer_for(60s);
    const std::string filler(1000, 'x');
    std::size_t records = 0;
    while (records * filler.size() < Logger::kBufferBytes + filler.size()) {
      logger.write_batched(LogLevel::info, "bulk", LogFields().add("filler", filler));
      ++records;
    }
    CHECK_FALSE(events_in(out.file).empty());
  }
  SECTION("the logger's end") {
    {
      Logger logger(out.file);
      logger.buffer_for(60s);
      logger.write_batched(LogLevel::info, "first");
      logger.write_batched(LogLevel::info, "last");
      CHECK(events_in(out.file) == std::vector<std::string>{"first"});
    }
    CHECK(events_in(out.file) == std::vector<std::string>{"first", "last"});
  }
}

// A record of the server's life (a reload, a session) must be in the log when
// the client hears of it: an e2e test read the log right after list_changed
// and missed catalog_reloaded, which waited behind a burst of records.
TEST_CASE("buffered, a record written with write() goes out at once, after what waited") {
  TempFile out;
  Logger logger(out.file);
  logger.buffer_for(60s);
  logger.write_batched(LogLevel::info, "call one");
  logger.write_batched(LogLevel::info, "call two");
  CHECK(events_in(out.file) == std::vector<std::string>{"call one"});
  logger.write(LogLevel::info, "catalog_reloaded");
  CHECK(events_in(out.file) ==
        std::vector<std::string>{"call one", "call two", "catalog_reloaded"});
}

TEST_CASE("a record is one JSON object: ts, level, event and the fields, any text made safe") {
  TempFile out;
  Logger logger(out.file, LogLevel::debug);
  logger.write_batched(LogLevel::info, "tool_call",
                       LogFields()
                           .add("tool", "say \"hi\"\\ now\n\t\x01")
                           .add("bad_utf8", std::string_view("ok\xff\xfe!"))
                           .add("accented", "caf\xc3\xa9")
                           .add("duration_ms", 1.25)
                           .add("not_a_number", std::nan(""))
                           .add("bytes", std::uint64_t{18446744073709551615ULL})
                           .add("truncated", true));
  logger.write(LogLevel::warning, "reloaded", {{"tools", 3}, {"name", "x\xc3"}});
  const auto records = records_in(out.file);
  REQUIRE(records.size() == 2);
  const nlohmann::json& call = records[0];
  CHECK(call["level"] == "info");
  CHECK(call["event"] == "tool_call");
  CHECK(call["tool"] == "say \"hi\"\\ now\n\t\x01");
  CHECK(call["bad_utf8"] == "ok\xEF\xBF\xBD\xEF\xBF\xBD!");
  CHECK(call["accented"] == "caf\xc3\xa9");
  CHECK(call["duration_ms"] == 1.25);
  CHECK(call["not_a_number"].is_null());
  CHECK(call["bytes"] == 18446744073709551615ULL);
  CHECK(call["truncated"] == true);
  // 2026-12-02T00:37:21.368Z
  const std::string ts = call["ts"];
  REQUIRE(ts.size() == 24);
  CHECK(ts[4] == '-');
  CHECK(ts[10] == 'T');
  CHECK(ts[19] == '.');
  CHECK(ts[23] == 'Z');
  CHECK(records[1]["event"] == "reloaded");
  CHECK(records[1]["level"] == "warning");
  CHECK(records[1]["tools"] == 3);
  CHECK(records[1]["name"] == "x\xEF\xBF\xBD");
}

TEST_CASE("secrets never reach the log: every string field is redacted") {
  TempFile out;
  Logger logger(out.file, LogLevel::debug);
  toolmux::register_secret("Lg5-known-secret-for-the-log");
  logger.write_batched(LogLevel::info, "tool_call",
                       LogFields()
                           .add("reason", "upstream said Bearer abcDEF0123456789xyz")
                           .add("principal", "Lg5-known-secret-for-the-log")
                           .add("tool", "echo"));
  logger.write(LogLevel::warning, "upstream_failed",
               {{"reason", "key AKIAIOSFODNN7EXAMPLE refused"},
                {"password", 1234},
                {"nested", {{"text", "Lg5-known-secret-for-the-log"}}},
                {"tool", "echo"}});
  const auto records = records_in(out.file);
  REQUIRE(records.size() == 2);
  CHECK(records[0]["reason"] == "upstream said Bearer [REDACTED:bearer_token]");
  CHECK(records[0]["principal"] == "[REDACTED]");
  CHECK(records[0]["tool"] == "echo");
  CHECK(records[1]["reason"] == "key [REDACTED:aws_access_key_id] refused");
  CHECK(records[1]["password"] == "[REDACTED]");
  CHECK(records[1]["nested"]["text"] == "[REDACTED]");
  CHECK(records[1]["tool"] == "echo");
}

TEST_CASE(
    "a record is added while another thread's write waits on the output, and the order holds") {
  // Before, the write held the logger's lock: every thread with a record to
  // add waited for the output, a pipe the reader was slow to empty, say.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::FILE* out = ::fdopen(fds[1], "w");
  REQUIRE(out);
  auto logger = std::make_unique<Logger>(out);
  logger->buffer_for(10s);  // the timer plays no part here
  // More than the pipe holds: this write waits until the pipe is read.
  const std::string big(std::size_t{256} << 10, 'x');
  std::thread writing([&] { logger->write(LogLevel::warning, "big", {{"text", big}}); });
  std::this_thread::sleep_for(100ms);  // the write is under way, and stuck
  std::atomic<bool> added{false};
  std::thread adding([&] {
    logger->write_batched(LogLevel::info, "small", LogFields().add("n", std::uint64_t{1}));
    added = true;
  });
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (!added && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  CHECK(added);
  // Everything read: the big record, then the small one, which the logger
  // writes as it ends.
  std::string drained;
  std::thread reading([&] {
    char buffer[65536];
    ssize_t n = 0;
    while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0) {
      drained.append(buffer, static_cast<std::size_t>(n));
    }
  });
  writing.join();
  adding.join();
  logger.reset();
  std::fclose(out);  // the reader sees the end
  reading.join();
  ::close(fds[0]);
  const std::size_t big_at = drained.find("\"event\":\"big\"");
  const std::size_t small_at = drained.find("\"event\":\"small\"");
  REQUIRE(big_at != std::string::npos);
  REQUIRE(small_at != std::string::npos);
  CHECK(big_at < small_at);
}
