#include "catalog/search_memory.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "catalog/catalog_search.h"

using namespace toolmux;
using namespace std::chrono_literals;

namespace {

// A wall clock the test moves.
struct FakeClock {
  std::chrono::system_clock::time_point now{std::chrono::hours(24 * 365 * 50)};
};

// Counts decay by the second of the wall clock: a test that compares exact
// counts stands the clock still, or a second passing mid-test changes them.
SearchMemoryOptions still() {
  SearchMemoryOptions options;
  options.now = [] { return std::chrono::system_clock::time_point(std::chrono::hours(500000)); };
  return options;
}

SearchMemoryOptions with_clock(FakeClock& clock) {
  SearchMemoryOptions options;
  options.now = [&clock] { return clock.now; };
  return options;
}

void click(SearchMemory& memory, std::string_view query, const std::string& tool) {
  memory.record(SearchMemory::terms(query), tool);
}

double boost(const SearchMemory& memory, std::string_view query, const std::string& tool) {
  const auto boosts = memory.boosts(SearchMemory::terms(query));
  auto it = boosts.find(tool);
  return it == boosts.end() ? 0.0 : it->second;
}

}  // namespace

TEST_CASE("a query's memory terms are its words, stemmed, without stop words, ids or numbers",
          "[search_memory]") {
  CHECK(SearchMemory::terms("List the open issues of my GitHub repo") ==
        std::vector<std::string>{"list", "open", "issu", "github", "repo"});
  // Names are cut at separators; each term once.
  CHECK(SearchMemory::terms("list_issues list issues") == std::vector<std::string>{"list", "issu"});
  // Numbers, long ids and digit-heavy words are never kept; k8s is a word.
  CHECK(SearchMemory::terms("text +1 555 123 4567 about k8s build 2010 a1b2c3d4") ==
        std::vector<std::string>{"text", "about", "k8s", "build"});
  CHECK(SearchMemory::terms(std::string(40, 'x') + " short") == std::vector<std::string>{"short"});
  CHECK(SearchMemory::terms("").empty());
  CHECK(SearchMemory::terms("the of and").empty());
  // At most kMaxQueryTerms.
  std::string many;
  for (int i = 0; i < 100; ++i)
    many += "word" + std::string(1, static_cast<char>('a' + i % 26)) +
            std::string(1, static_cast<char>('a' + i / 26)) + " ";
  CHECK(SearchMemory::terms(many).size() == SearchMemory::kMaxQueryTerms);
}

TEST_CASE("a click is a hint, many clicks near certainty, and unknown words dilute it",
          "[search_memory]") {
  SearchMemory memory(still());
  CHECK(memory.boosts(SearchMemory::terms("report a bug")).empty());
  click(memory, "report a bug", "create_issue");
  // Each of "report" and "bug": 1 / (1 + 1).
  CHECK(boost(memory, "report a bug", "create_issue") == Approx(0.5));
  CHECK(boost(memory, "bug", "create_issue") == Approx(0.5));
  // A word never clicked counts in the query, not for the tool.
  CHECK(boost(memory, "bug tracker", "create_issue") == Approx(0.25));
  for (int i = 0; i < 9; ++i) click(memory, "report a bug", "create_issue");
  CHECK(boost(memory, "report a bug", "create_issue") == Approx(10.0 / 11.0));
  // Two tools share a term's clicks.
  click(memory, "bug", "search_issues");
  CHECK(boost(memory, "bug", "create_issue") == Approx(10.0 / 12.0));
  CHECK(boost(memory, "bug", "search_issues") == Approx(1.0 / 12.0));
  CHECK(memory.term_count() == 2);
  CHECK(memory.association_count() == 3);
  CHECK(memory.associations("bug") == std::vector<std::pair<std::string, double>>{
                                          {"create_issue", 10.0}, {"search_issues", 1.0}});
}

TEST_CASE("what a click records is checked: bad tool names and terms are ignored",
          "[search_memory]") {
  SearchMemory memory(still());
  memory.record({"bug"}, "");
  memory.record({"bug"}, std::string(SearchMemory::kMaxToolBytes + 1, 't'));
  memory.record({"bug"}, "bad\xff");
  memory.record({"", "12345", std::string(SearchMemory::kMaxTermBytes + 1, 'x')}, "tool");
  CHECK(memory.term_count() == 0);
  CHECK(memory.changes() == 0);
  memory.record({"bug", "bug", "12345"}, "tool");
  CHECK(memory.term_count() == 1);
  CHECK(memory.associations("bug") == std::vector<std::pair<std::string, double>>{{"tool", 1.0}});
}

TEST_CASE("the bounds hold under 100,000 random clicks, and strong terms survive",
          "[search_memory]") {
  SearchMemoryOptions options;
  REQUIRE(options.max_terms == 20000);
  REQUIRE(options.max_tools == 8);
  SearchMemory memory(options);
  // A term clicked often before the flood.
  for (int i = 0; i < 50; ++i) memory.record({"deploy"}, "kubectl_apply");
  std::mt19937 random(15);
  std::uniform_int_distribution<int> letter('a', 'z');
  std::uniform_int_distribution<int> tool_number(0, 499);
  std::uniform_int_distribution<int> term_count(1, 5);
  std::vector<std::string> seen;
  for (int i = 0; i < 100000; ++i) {
    std::vector<std::string> terms;
    const int n = term_count(random);
    for (int t = 0; t < n; ++t) {
      std::string term;
      for (int c = 0; c < 5; ++c) term.push_back(static_cast<char>(letter(random)));
      terms.push_back(term);
    }
    // Some terms repeat, so that some terms collect more than max_tools tools.
    if (i % 3 == 0) terms.push_back("common" + std::string(1, static_cast<char>(letter(random))));
    memory.record(terms, "tool_" + std::to_string(tool_number(random)));
    if (i % 1000 == 0) seen.push_back(terms.back());
    REQUIRE(memory.term_count() <= options.max_terms);
  }
  CHECK(memory.term_count() > options.max_terms / 2);
  CHECK(memory.association_count() <= memory.term_count() * options.max_tools);
  for (const auto& term : seen) CHECK(memory.associations(term).size() <= options.max_tools);
  for (char c = 'a'; c <= 'z'; ++c)
    CHECK(memory.associations("common" + std::string(1, c)).size() == options.max_tools);
  REQUIRE_FALSE(memory.associations("deploy").empty());
  CHECK(memory.associations("deploy").front().first == "kubectl_apply");
  CHECK(memory.to_bytes().size() < std::size_t{4} << 20);
}

TEST_CASE("a term's weakest tool gives way to a new one", "[search_memory]") {
  SearchMemoryOptions options = still();
  options.max_tools = 2;
  SearchMemory memory(options);
  memory.record({"bug"}, "a");
  memory.record({"bug"}, "a");
  memory.record({"bug"}, "b");
  memory.record({"bug"}, "c");  // b is the weakest
  CHECK(memory.associations("bug") ==
        std::vector<std::pair<std::string, double>>{{"a", 2.0}, {"c", 1.0}});
}

TEST_CASE("counts halve every half life and are forgotten at last", "[search_memory]") {
  FakeClock clock;
  SearchMemoryOptions options = with_clock(clock);
  options.half_life = std::chrono::hours(24 * 30);
  SearchMemory memory(options);
  click(memory, "bug", "create_issue");
  click(memory, "bug", "create_issue");
  CHECK(boost(memory, "bug", "create_issue") == Approx(2.0 / 3.0));
  clock.now += std::chrono::hours(24 * 30);
  CHECK(memory.associations("bug").front().second == Approx(1.0));
  CHECK(boost(memory, "bug", "create_issue") == Approx(0.5));
  // A new click adds to the decayed count.
  click(memory, "bug", "create_issue");
  CHECK(memory.associations("bug").front().second == Approx(2.0));
  clock.now += std::chrono::hours(24 * 30 * 6);  // 2 / 64 < kForgottenCount
  CHECK(memory.associations("bug").empty());
  CHECK(memory.boosts({"bug"}).empty());
  // The forgotten term is not saved.
  SearchMemory reloaded(options);
  REQUIRE(reloaded.from_bytes(memory.to_bytes()).ok());
  CHECK(reloaded.term_count() == 0);
}

TEST_CASE("the saved form round-trips, decayed to when it was saved", "[search_memory]") {
  FakeClock clock;
  SearchMemory memory(with_clock(clock));
  click(memory, "report a bug", "create_issue");
  click(memory, "report a bug", "create_issue");
  click(memory, "list the pods", "pods_list");
  clock.now += std::chrono::hours(24 * 30);
  const std::string bytes = memory.to_bytes();
  CHECK(bytes == memory.to_bytes());  // deterministic
  CHECK(bytes.find("report") != std::string::npos);

  SearchMemory loaded(with_clock(clock));
  REQUIRE(loaded.from_bytes(bytes).ok());
  CHECK(loaded.term_count() == 4);
  CHECK(loaded.associations("bug") == memory.associations("bug"));
  CHECK(loaded.associations("pod") == memory.associations("pod"));
  CHECK(loaded.changes() == 1);
  // Decay goes on from the time saved.
  clock.now += std::chrono::hours(24 * 30);
  CHECK(loaded.associations("bug").front().second == Approx(0.5));

  // Smaller bounds keep the strongest.
  SearchMemoryOptions small = with_clock(clock);
  small.max_terms = 2;
  small.max_tools = 1;
  SearchMemory few(small);
  REQUIRE(few.from_bytes(bytes).ok());
  CHECK(few.term_count() == 2);
  CHECK(few.associations("bug").size() == 1);
  CHECK(few.associations("report").size() == 1);
  CHECK(few.associations("pod").empty());
}

TEST_CASE("from_bytes refuses garbage, truncation and damage, and keeps what it had",
          "[search_memory]") {
  FakeClock clock;
  SearchMemory source(with_clock(clock));
  click(source, "report a bug", "create_issue");
  click(source, "list the pods", "pods_list");
  const std::string good = source.to_bytes();

  SearchMemory memory(with_clock(clock));
  click(memory, "deploy", "kubectl_apply");
  auto unchanged = [&memory] {
    return memory.term_count() == 1 && memory.associations("deploy").size() == 1;
  };

  Status empty = memory.from_bytes("");
  CHECK(empty.is_invalid_argument());
  CHECK(empty.message() == "the search memory is damaged: only 0 bytes (at byte 0)");
  Status garbage = memory.from_bytes("this is not a search memory at all");
  CHECK(garbage.message() == "not a search memory: it does not start with \"TMSM\"");
  std::string newer = good;
  newer[4] = 2;
  CHECK(memory.from_bytes(newer).message() ==
        "the search memory is of version 2; this toolmux reads version 1");
  CHECK(unchanged());

  // Every truncation.
  for (std::size_t n = 0; n < good.size(); ++n) {
    INFO(n);
    CHECK_FALSE(memory.from_bytes(good.substr(0, n)).ok());
  }
  // Every byte changed.
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::string damaged = good;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x5A);
    INFO(i);
    CHECK_FALSE(memory.from_bytes(damaged).ok());
  }
  CHECK(unchanged());
  CHECK(memory.from_bytes(good + "x").message().find("checksum does not match") !=
        std::string::npos);
  CHECK(memory.from_bytes(std::string(SearchMemory::kMaxBytes + 1, 'x')).is_resource_exhausted());
  CHECK(unchanged());
}

namespace {

// Random bytes after a good header, with a checksum that matches: the parser
// itself sees garbage (an FNV-1a of the body, as to_bytes writes it).
std::string with_checksum(std::string body) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : body) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  for (int i = 0; i < 8; ++i) body.push_back(static_cast<char>((h >> (8 * i)) & 0xFFU));
  return body;
}

}  // namespace

TEST_CASE("from_bytes on random bodies with a good checksum answers, never crashes",
          "[search_memory]") {
  FakeClock clock;
  SearchMemory source(with_clock(clock));
  click(source, "report a bug", "create_issue");
  const std::string good = source.to_bytes();
  const std::string header = good.substr(0, 18);  // magic, version, time, count
  std::mt19937 random(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 300);
  std::size_t refused = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string body = header;
    // A few terms claimed, or a huge number.
    body[14] = static_cast<char>(i % 7);
    if (i % 11 == 0) body[17] = static_cast<char>(0xFF);
    const int n = length(random);
    for (int b = 0; b < n; ++b) body.push_back(static_cast<char>(byte(random)));
    SearchMemory memory(with_clock(clock));
    const Status status = memory.from_bytes(with_checksum(body));
    if (!status.ok()) {
      ++refused;
      CHECK(status.message().rfind("the search memory is damaged: ", 0) == 0);
      CHECK(memory.term_count() == 0);
    }
  }
  CHECK(refused > 1900);
}

namespace {

// A saved form written by hand: (term, [(tool, count)]) in the order given.
std::string encode(
    const std::vector<std::pair<std::string, std::vector<std::pair<std::string, float>>>>& terms) {
  std::string out = "TMSM";
  auto put = [&out](std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFU));
  };
  put(1, 2);
  // Saved now: counts of long ago would be forgotten.
  put(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count()),
      8);
  put(terms.size(), 4);
  for (const auto& [term, tools] : terms) {
    put(term.size(), 1);
    out += term;
    put(tools.size(), 2);
    for (const auto& [name, count] : tools) {
      put(name.size(), 2);
      out += name;
      std::uint32_t bits = 0;
      std::memcpy(&bits, &count, sizeof(bits));
      put(bits, 4);
    }
  }
  return with_checksum(out);
}

std::string refusal(const std::string& bytes) {
  SearchMemory memory;
  return memory.from_bytes(bytes).message();
}

}  // namespace

TEST_CASE("from_bytes names what is wrong in a well-formed but bad saved form", "[search_memory]") {
  SearchMemory memory;
  REQUIRE(
      memory.from_bytes(encode({{"bug", {{"create_issue", 2.0F}}}, {"pod", {{"pods_list", 1.0F}}}}))
          .ok());
  // Saved "now" by encode(): a second may have passed since (30 days' half life).
  const auto bug = memory.associations("bug");
  REQUIRE(bug.size() == 1);
  CHECK(bug[0].first == "create_issue");
  CHECK(bug[0].second == Approx(2.0).epsilon(1e-5));
  CHECK(refusal(encode({{"pod", {{"x", 1.0F}}}, {"bug", {{"x", 1.0F}}}})) ==
        "the search memory is damaged: the terms are not in order (at byte 31)");
  CHECK(refusal(encode({{"bug", {{"x", 1.0F}}}, {"bug", {{"x", 1.0F}}}})).find("not in order") !=
        std::string::npos);
  CHECK(refusal(encode({{"bug", {}}})).find("term 1 has no tool") != std::string::npos);
  CHECK(refusal(encode({{"bug", {{"x", 1.0F}, {"x", 2.0F}}}})).find("named twice") !=
        std::string::npos);
  CHECK(refusal(encode({{"bug", {{"x", -1.0F}}}})).find("a count is not a number") !=
        std::string::npos);
  CHECK(refusal(encode({{"bug", {{"x", std::numeric_limits<float>::quiet_NaN()}}}}))
            .find("a count is not a number") != std::string::npos);
  CHECK(refusal(encode({{"12345", {{"x", 1.0F}}}})).find("term 1 is not a term") !=
        std::string::npos);
  CHECK(refusal(encode({{"bug", {{"", 1.0F}}}})).find("a tool name is empty") != std::string::npos);
}

TEST_CASE("records and reads from many threads at once", "[search_memory]") {
  SearchMemory memory;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&memory, t] {
      for (int i = 0; i < 2000; ++i) {
        memory.record({"term" + std::string(1, static_cast<char>('a' + i % 26)), "shared"},
                      "tool_" + std::to_string(t));
        (void)memory.boosts({"shared"});
        if (i % 500 == 0) (void)memory.to_bytes();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(memory.changes() == 8000);
  CHECK(memory.associations("shared").size() == 4);
  CHECK(memory.boosts({"shared"}).at("tool_0") == Approx(2000.0 / 8001.0));
}

// --- The memory in CatalogSearch -------------------------------------------

namespace {

SearchDocument tool(std::string name, std::string description, std::string source) {
  SearchDocument d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.source = std::move(source);
  return d;
}

std::shared_ptr<const CatalogSearch> small_catalog(CatalogSearchOptions options = {}) {
  return CatalogSearch::build(
      {
          tool("create_issue", "Create a new issue in a GitHub repository.", "github"),
          tool("list_issues", "List issues in a GitHub repository.", "github"),
          tool("search_code", "Search code across GitHub repositories.", "github"),
          tool("send_message", "Send a text message to a phone number.", "twilio"),
          tool("create_event", "Create an event in the tracker of a project.", "sentry"),
          tool("list_events", "List the events a project's tracker received.", "sentry"),
          tool("pods_list", "List the pods of a Kubernetes namespace.", "kubernetes"),
      },
      {}, std::move(options));
}

std::vector<std::string> names(const CatalogSearch& search, const CatalogSearchRequest& request) {
  std::vector<std::string> out;
  for (const auto& hit : search.search(request).hits)
    out.push_back(search.tools().document(hit.document).name);
  return out;
}

CatalogSearchRequest ask(std::string query, const SearchMemory* memory) {
  CatalogSearchRequest request;
  request.query = std::move(query);
  request.limit = 5;
  request.memory = memory;
  return request;
}

}  // namespace

TEST_CASE("a click changes the ranking of the next search with those words", "[search_memory]") {
  const auto search = small_catalog();
  SearchMemory memory;
  const std::string query = "create one in the project tracker";
  const auto before = names(*search, ask(query, &memory));
  REQUIRE_FALSE(before.empty());
  CHECK(before.front() == "create_event");
  REQUIRE(std::find(before.begin(), before.end(), "create_issue") != before.end());

  // The model searched, then called create_issue, a few times: now it comes first.
  for (int i = 0; i < 3; ++i) memory.record(SearchMemory::terms(query), "create_issue");
  CHECK(names(*search, ask(query, &memory)).front() == "create_issue");
  // Other words are ranked as before.
  CHECK(names(*search, ask("list the pods", &memory)) ==
        names(*search, ask("list the pods", nullptr)));
}

TEST_CASE("a tool the words do not find is brought in by the memory, if the caller may see it",
          "[search_memory]") {
  const auto search = small_catalog();
  SearchMemory memory;
  const std::string query = "flaw complaint";  // no tool has these words
  CHECK(names(*search, ask(query, &memory)).empty());
  memory.record(SearchMemory::terms(query), "create_issue");
  CHECK(names(*search, ask(query, &memory)) == std::vector<std::string>{"create_issue"});

  CatalogSearchRequest hidden = ask(query, &memory);
  hidden.allowed = [&search](std::size_t d) {
    return search->tools().document(d).name != "create_issue";
  };
  CHECK(names(*search, hidden).empty());
  CatalogSearchRequest elsewhere = ask(query, &memory);
  elsewhere.source = "sentry";
  CHECK(names(*search, elsewhere).empty());
  CatalogSearchRequest there = ask(query, &memory);
  there.source = "github";
  CHECK(names(*search, there) == std::vector<std::string>{"create_issue"});
}

TEST_CASE("without a memory, or with learning weighed at 0, the ranking is the words' alone",
          "[search_memory]") {
  SearchMemory memory;
  const std::string query = "report a bug in the project tracker";
  memory.record(SearchMemory::terms(query), "create_issue");
  memory.record(SearchMemory::terms("flaw complaint"), "create_issue");

  const auto search = small_catalog();
  CatalogSearchOptions zero;
  zero.learned_weight = 0;
  const auto unweighted = small_catalog(zero);
  for (const std::string& q : {query, std::string("flaw complaint"), std::string("list pods")}) {
    INFO(q);
    const auto plain = search->search(ask(q, nullptr));
    for (const auto* answer_search : {search.get(), unweighted.get()}) {
      const auto answer =
          answer_search->search(ask(q, answer_search == search.get() ? nullptr : &memory));
      REQUIRE(answer.hits.size() == plain.hits.size());
      for (std::size_t i = 0; i < plain.hits.size(); ++i) {
        CHECK(answer.hits[i].document == plain.hits[i].document);
        CHECK(answer.hits[i].score == plain.hits[i].score);
      }
      CHECK(answer.confidence == plain.confidence);
    }
  }
}

TEST_CASE("the outbox keeps the clicks recorded since it was last taken, within its limit",
          "[search_memory]") {
  SearchMemory memory(still());
  click(memory, "open a bug", "create_issue");
  CHECK(memory.take_outbox().empty());  // off until turned on
  memory.keep_outbox(3);
  click(memory, "open a bug", "create_issue");
  click(memory, "open a bug", "create_issue");
  click(memory, "bug", "list_issues");
  const SearchMemory::Outbox taken = memory.take_outbox();
  CHECK(taken == SearchMemory::Outbox{{{"bug", "create_issue"}, 2.0},
                                      {{"bug", "list_issues"}, 1.0},
                                      {{"open", "create_issue"}, 2.0}});
  CHECK(memory.take_outbox().empty());
  // Clicks that could not be sent go back beside the new ones; a pair past
  // the limit is learned here but not kept for sending, and counted.
  click(memory, "bug", "create_issue");
  memory.return_outbox(taken);
  click(memory, "pull request", "create_pull_request");
  CHECK(memory.take_outbox() == SearchMemory::Outbox{{{"bug", "create_issue"}, 3.0},
                                                     {{"bug", "list_issues"}, 1.0},
                                                     {{"open", "create_issue"}, 2.0}});
  CHECK(memory.outbox_dropped() == 2);
  CHECK(memory.associations("pull") ==
        std::vector<std::pair<std::string, double>>{{"create_pull_request", 1.0}});
}

TEST_CASE("merge sets what a shared store holds, decayed to now, within the bounds",
          "[search_memory]") {
  FakeClock clock;
  SearchMemoryOptions options = with_clock(clock);
  options.max_tools = 2;
  options.max_terms = 10;
  SearchMemory memory(options);
  click(memory, "bug", "create_issue");
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(clock.now.time_since_epoch()).count();
  const std::int64_t month_ago = now - std::int64_t{30} * 24 * 3600;
  memory.merge({{"bug", "create_issue", 5.0, now},       // set, not added
                {"bug", "list_issues", 4.0, month_ago},  // 2 today
                {"issu", "list_issues", 0.01, now}});    // forgotten: not kept
  CHECK(memory.associations("bug") ==
        std::vector<std::pair<std::string, double>>{{"create_issue", 5.0}, {"list_issues", 2.0}});
  CHECK(memory.associations("issu").empty());
  // A full term takes a new tool only in place of a weaker one.
  memory.merge({{"bug", "close_issue", 1.0, now}});
  CHECK(memory.associations("bug").size() == 2);
  CHECK(memory.associations("bug").back().first == "list_issues");
  memory.merge({{"bug", "close_issue", 3.0, now}});
  CHECK(memory.associations("bug") ==
        std::vector<std::pair<std::string, double>>{{"create_issue", 5.0}, {"close_issue", 3.0}});
  // A forgotten count removes the pair, and the term with its last pair.
  memory.merge({{"bug", "create_issue", 0.0, now}, {"bug", "close_issue", 0.0, now}});
  CHECK(memory.associations("bug").empty());
  CHECK(memory.term_count() == 0);
  // Merging does not fill the outbox: it is the store's news, not a click.
  memory.keep_outbox(10);
  memory.merge({{"bug", "create_issue", 1.0, now}});
  CHECK(memory.take_outbox().empty());
  // New terms past max_terms make room as clicks do.
  std::vector<SearchMemory::SharedCount> many;
  for (int i = 0; i < 50; ++i)
    many.push_back(
        {"term" + std::string(1, char('a' + i % 26)) + std::string(1, char('a' + i / 26)), "t",
         1.0 + i, now});
  memory.merge(many);
  CHECK(memory.term_count() <= 10);
  CHECK(memory.associations("termxb").size() == 1);  // the strongest (i = 49) stay
}

TEST_CASE("merge skips what it would not have recorded: a store is written by others",
          "[search_memory]") {
  SearchMemory memory(still());
  const std::int64_t now = std::int64_t{500000} * 3600;  // still()'s clock
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  memory.merge({{"", "t", 1.0, now},
                {"12345", "t", 1.0, now},
                {std::string(SearchMemory::kMaxTermBytes + 1, 'a'), "t", 1.0, now},
                {"bug", "", 1.0, now},
                {"bug", std::string(SearchMemory::kMaxToolBytes + 1, 't'), 1.0, now},
                {"bug", "bad\xff", 1.0, now},
                {"bug", "nan", nan, now},
                {"bug", "inf", inf, now},
                {"bug", "negative", -3.0, now},
                {"bug", "huge", 1e300, now},
                {"bug", "future", 2.0, now + 1000}});
  // A huge count counts as a billion; a stamp in the future as now.
  CHECK(memory.associations("bug") ==
        std::vector<std::pair<std::string, double>>{{"huge", 1e9}, {"future", 2.0}});
  CHECK(memory.term_count() == 1);
}
