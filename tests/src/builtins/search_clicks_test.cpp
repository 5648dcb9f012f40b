// The clicks of learning from use: which call after which search is recorded
// in the search memory, once, and the bounds on what is remembered meanwhile.
#include "src/builtins/search_clicks.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/builtins/tool_search.h"

using namespace std::chrono_literals;
using nlohmann::json;

namespace toolmux {

namespace {

using Strings = std::vector<std::string>;

// A memory whose clock stands still: its counts do not decay during a test.
std::shared_ptr<SearchMemory> still_memory() {
  SearchMemoryOptions options;
  options.now = [] { return std::chrono::system_clock::time_point(std::chrono::hours(500000)); };
  return std::make_shared<SearchMemory>(std::move(options));
}

// Clicks over a memory of their own, on a clock the test moves.
struct Clicks {
  std::chrono::steady_clock::time_point now{std::chrono::hours(1)};
  std::shared_ptr<SearchMemory> memory = still_memory();
  SearchClicks clicks;

  explicit Clicks(SearchClickOptions options = {})
      : clicks(memory, [&] {
          options.now = [this] { return now; };
          return std::move(options);
        }()) {}

  // The tools the memory associates with `term`, strongest first, with counts.
  std::vector<std::pair<std::string, double>> learned(const std::string& term) const {
    return memory->associations(term);
  }
};

}  // namespace

TEST_CASE("a call of a tool a search answered with is one click on that search's terms",
          "[search_clicks]") {
  Clicks c;
  c.clicks.searched("session a", {"send", "sms"}, {"send_email", "post_message", "send_sms"});
  CHECK(c.clicks.called("session a", "send_sms") == 1);
  CHECK(c.learned("send") == std::vector<std::pair<std::string, double>>{{"send_sms", 1.0}});
  CHECK(c.learned("sms") == std::vector<std::pair<std::string, double>>{{"send_sms", 1.0}});
  CHECK(c.memory->association_count() == 2);

  // The same tool again after the same search: not a second click.
  CHECK(c.clicks.called("session a", "send_sms") == 0);
  CHECK(c.learned("sms") == std::vector<std::pair<std::string, double>>{{"send_sms", 1.0}});
  // Another tool of the same answer is a click of its own.
  CHECK(c.clicks.called("session a", "send_email") == 1);
  CHECK(c.learned("sms").size() == 2);
}

TEST_CASE("a call is no click when no search of its caller answered with the tool",
          "[search_clicks]") {
  Clicks c;
  c.clicks.searched("session a", {"send", "sms"}, {"send_sms"});
  CHECK(c.clicks.called("session a", "list_files") == 0);  // not in the answer
  CHECK(c.clicks.called("session b", "send_sms") == 0);    // another session
  CHECK(c.clicks.called("principal a", "send_sms") == 0);  // a principal is not a session
  CHECK(c.memory->association_count() == 0);
  CHECK(c.memory->changes() == 0);
}

TEST_CASE("each remembered search that answered with the tool gets its click", "[search_clicks]") {
  Clicks c;
  c.clicks.searched("session a", {"send", "sms"}, {"send_email", "send_sms"});
  c.clicks.searched("session a", {"text", "messag"}, {"send_sms", "post_message"});
  c.clicks.searched("session a", {"list", "file"}, {"list_files"});
  CHECK(c.clicks.called("session a", "send_sms") == 2);
  CHECK(c.learned("sms").front().first == "send_sms");
  CHECK(c.learned("text").front().first == "send_sms");
  CHECK(c.learned("list").empty());
}

TEST_CASE("the same terms searched again are the same search, and keep their clicks",
          "[search_clicks]") {
  Clicks c;
  c.clicks.searched("session a", {"send", "sms"}, {"send_email", "send_sms"});
  CHECK(c.clicks.called("session a", "send_sms") == 1);
  c.clicks.searched("session a", {"send", "sms"}, {"send_sms", "send_email", "send_fax"});
  CHECK(c.clicks.search_count("session a") == 1);
  CHECK(c.clicks.called("session a", "send_sms") == 0);  // already clicked
  CHECK(c.clicks.called("session a", "send_fax") == 1);  // new in the answer
}

TEST_CASE("a search with no terms or no tools is not remembered", "[search_clicks]") {
  Clicks c;
  c.clicks.searched("session a", {}, {"send_sms"});
  c.clicks.searched("session a", {"send"}, {});
  CHECK(c.clicks.caller_count() == 0);
  CHECK(c.clicks.called("session a", "send_sms") == 0);
}

TEST_CASE("a caller's searches are bounded: the oldest goes", "[search_clicks]") {
  Clicks c(SearchClickOptions{.max_searches = 4});
  for (int i = 0; i < 6; ++i)
    c.clicks.searched("session a", {"word" + std::string(1, static_cast<char>('a' + i))},
                      {"tool_" + std::to_string(i)});
  CHECK(c.clicks.search_count("session a") == 4);
  CHECK(c.clicks.called("session a", "tool_0") == 0);
  CHECK(c.clicks.called("session a", "tool_1") == 0);
  CHECK(c.clicks.called("session a", "tool_2") == 1);
  CHECK(c.clicks.called("session a", "tool_5") == 1);
}

TEST_CASE("a search's tools are bounded: the first ones count", "[search_clicks]") {
  Clicks c(SearchClickOptions{.max_tools = 3});
  c.clicks.searched("session a", {"send"}, {"t1", "t2", "t3", "t4"});
  CHECK(c.clicks.called("session a", "t4") == 0);
  CHECK(c.clicks.called("session a", "t3") == 1);
}

TEST_CASE("callers are bounded: the one that searched least recently goes", "[search_clicks]") {
  Clicks c(SearchClickOptions{.max_callers = 3});
  c.clicks.searched("session 1", {"send"}, {"send_sms"});
  c.clicks.searched("session 2", {"send"}, {"send_sms"});
  c.clicks.searched("session 3", {"send"}, {"send_sms"});
  c.clicks.searched("session 1", {"list"}, {"list_files"});  // 1 searched last: 2 is the oldest
  c.clicks.searched("session 4", {"send"}, {"send_sms"});
  CHECK(c.clicks.caller_count() == 3);
  CHECK(c.clicks.search_count("session 2") == 0);
  CHECK(c.clicks.called("session 2", "send_sms") == 0);
  CHECK(c.clicks.called("session 1", "send_sms") == 1);
  CHECK(c.clicks.called("session 3", "send_sms") == 1);
  CHECK(c.clicks.called("session 4", "send_sms") == 1);

  // Many callers at once never hold more than the bound.
  for (int i = 0; i < 5000; ++i)
    c.clicks.searched("session x" + std::to_string(i), {"send"}, {"send_sms"});
  CHECK(c.clicks.caller_count() == 3);
}

TEST_CASE("a search older than max_age no longer counts, nor is it kept", "[search_clicks]") {
  Clicks c(SearchClickOptions{.max_age = 10min});
  c.clicks.searched("session a", {"send"}, {"send_sms"});
  c.now += 9min;
  c.clicks.searched("session a", {"list"}, {"list_files"});
  c.now += 2min;  // the first search is 11 minutes old, the second 2
  CHECK(c.clicks.search_count("session a") == 1);
  CHECK(c.clicks.called("session a", "send_sms") == 0);
  CHECK(c.clicks.called("session a", "list_files") == 1);

  // A caller whose every search expired goes when another searches.
  c.clicks.searched("session b", {"send"}, {"send_sms"});
  CHECK(c.clicks.caller_count() == 2);
  c.now += 10min + 1s;
  c.clicks.searched("session c", {"send"}, {"send_sms"});
  CHECK(c.clicks.caller_count() == 1);
}

TEST_CASE("a caller is a session, or a principal for a 2026-07-28 request", "[search_clicks]") {
  CHECK(SearchClicks::caller_key("abc", "alice", false) == "session abc");
  CHECK(SearchClicks::caller_key("abc", "alice", true) == "principal alice");
  CHECK(SearchClicks::caller_key("", "alice", false) == "principal alice");
}

TEST_CASE("a tool_search call teaches its terms and the tools it answered with",
          "[search_clicks]") {
  CHECK(search_terms({{"query", "Send an SMS"}, {"alternatives", {"text message", "sms"}}}) ==
        Strings{"send", "sms", "text", "messag"});
  CHECK(search_terms({{"query", "  "}, {"alternatives", {"text message"}}}).empty());  // outline
  CHECK(search_terms({{"source", "github"}}).empty());
  CHECK(search_terms(json::array()).empty());

  ToolResult found = ToolResult::text("...");
  found.structured_content = {{"tools", {{{"name", "send_sms"}}, {{"name", "post_message"}}}},
                              {"confidence", "high"}};
  CHECK(answered_tools(found) == Strings{"send_sms", "post_message"});
  ToolResult error = ToolResult::error("no source \"x\"");
  error.structured_content = found.structured_content;
  CHECK(answered_tools(error).empty());
  CHECK(answered_tools(ToolResult::text("no structured content")).empty());
}

}  // namespace toolmux
