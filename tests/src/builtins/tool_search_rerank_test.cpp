// tool_search asking the client's model to order an unsure answer, through a
// CallContext whose client is scripted: when it asks (the switch on, the
// client declared sampling, the answer unsure), what it sends, and what each
// kind of answer, refusal or silence makes of the order.
#include "src/builtins/tool_search_rerank.h"

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "catalog/tool_registry.h"
#include "src/builtins/tool_search.h"
#include "tests/support/test_context.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// A client whose answers to the server's requests are scripted.
class ScriptedClient : public TestContext {
 public:
  using Script = std::function<ClientAnswer(const json& params, const std::stop_token& stop)>;
  ScriptedClient(json capabilities, Script script)
      : capabilities_(std::move(capabilities)), script_(std::move(script)) {}

  json client_capabilities() const override { return capabilities_; }
  ClientAnswer ask_client(const std::string& method, const json& params,
                          const std::stop_token& stop, const std::string& key) override {
    asked.push_back({{"method", method}, {"params", params}, {"key", key}});
    return script_(params, stop);
  }

  std::vector<json> asked;

 private:
  json capabilities_;
  Script script_;
};

ClientAnswer says(const std::string& text) {
  return {json{{"role", "assistant"},
               {"model", "scripted"},
               {"content", {{"type", "text"}, {"text", text}}}},
          "", false};
}

// tool_search over five tools, four of them reports, with `rerank` as the
// catalog's "search"."rerank".
class SearchFixture {
 public:
  explicit SearchFixture(SearchRerankSettings rerank) {
    const std::vector<std::pair<std::string, std::string>> tools = {
        {"alpha_report", "Prints the alpha report of the week."},
        {"beta_report", "Prints the beta report, with totals."},
        {"gamma_report", "Prints the gamma report for one team."},
        {"delta_report", "Prints the delta report as a table."},
        {"widget_log", "Shows the widget log."}};
    std::vector<SearchDocument> documents;
    for (const auto& [name, description] : tools) {
      published_.push_back({{"name", name},
                            {"description", description},
                            {"inputSchema", {{"type", "object"}, {"properties", json::object()}}}});
      documents.push_back(search_document_from_tool(published_.back(), "catalog"));
    }
    auto searchable = std::make_shared<SearchableCatalog>();
    searchable->search = CatalogSearch::build(std::move(documents), {});
    searchable->tools = &published_;
    searchable->rerank = rerank;
    holder_->set(searchable);
    REQUIRE(register_tool_search(registry_, holder_).empty());
  }

  ToolResult search(CallContext& context, const json& args) const {
    return registry_.find(kToolSearch)->handler(args, context);
  }

  static std::vector<std::string> names(const ToolResult& result) {
    std::vector<std::string> out;
    for (const auto& tool : result.structured_content["tools"])
      out.push_back(tool["name"].get<std::string>());
    return out;
  }

 private:
  std::vector<json> published_;
  std::shared_ptr<SearchIndexHolder> holder_ = std::make_shared<SearchIndexHolder>();
  ToolRegistry registry_;
};

SearchRerankSettings switched_on() {
  SearchRerankSettings settings;
  settings.enabled = true;
  settings.candidates = 4;
  settings.max_tokens = 64;
  settings.timeout = 200ms;
  return settings;
}

const json kUnsure = {{"query", "weekly report summary overview"}, {"limit", 3}};
const json kSampling = {{"sampling", json::object()}};

ClientAnswer never_asked(const json&, const std::stop_token&) {
  FAIL("the client was asked");
  return {};
}

// The answer without re-ranking: the switch off.
std::vector<std::string> lexical(const json& args) {
  SearchFixture off{SearchRerankSettings{}};
  ScriptedClient client(kSampling, never_asked);
  ToolResult result = off.search(client, args);
  REQUIRE_FALSE(result.is_error);
  CHECK_FALSE(result.structured_content.contains("reranked"));
  return SearchFixture::names(result);
}

}  // namespace

TEST_CASE("an unsure answer is put in the order the client's model chose") {
  const std::vector<std::string> before = lexical(kUnsure);
  REQUIRE(before.size() == 3);
  SearchFixture fixture(switched_on());
  ScriptedClient client(kSampling,
                        [](const json&, const std::stop_token&) { return says("[4, 2]"); });
  ToolResult result = fixture.search(client, kUnsure);
  REQUIRE_FALSE(result.is_error);
  CHECK(result.structured_content["confidence"] != "high");
  CHECK(result.structured_content["reranked"] == true);
  REQUIRE(client.asked.size() == 1);
  CHECK(client.asked[0]["method"] == "sampling/createMessage");
  CHECK(client.asked[0]["params"]["maxTokens"] == 64);
  // Four candidates were sent (more than the answer holds); the 4th came first.
  const std::string prompt =
      client.asked[0]["params"]["messages"][0]["content"]["text"].get<std::string>();
  CHECK(prompt.find("\n4. ") != std::string::npos);
  CHECK(prompt.find("\n5. ") == std::string::npos);
  CHECK(prompt.find("inputSchema") == std::string::npos);
  const std::size_t fourth = prompt.find("\n4. ") + 4;
  const std::string fourth_name = prompt.substr(fourth, prompt.find(':', fourth) - fourth);
  const std::vector<std::string> after = SearchFixture::names(result);
  REQUIRE(after.size() == 3);
  CHECK(after[0] == fourth_name);
  CHECK(after[1] == before[1]);
  CHECK(after[2] == before[0]);
}

TEST_CASE(
    "nothing is asked when the switch is off, the client cannot be asked, or the answer is sure") {
  SECTION("the switch off") {
    SearchFixture fixture{SearchRerankSettings{}};
    ScriptedClient client(kSampling, never_asked);
    CHECK_FALSE(fixture.search(client, kUnsure).structured_content.contains("reranked"));
  }
  SECTION("a client without sampling") {
    SearchFixture fixture(switched_on());
    ScriptedClient client({{"elicitation", json::object()}}, never_asked);
    ToolResult result = fixture.search(client, kUnsure);
    CHECK_FALSE(result.structured_content.contains("reranked"));
    CHECK(SearchFixture::names(result) == lexical(kUnsure));
  }
  SECTION("a sure answer") {
    SearchFixture fixture(switched_on());
    ScriptedClient client(kSampling, never_asked);
    ToolResult result = fixture.search(client, {{"query", "widget log"}});
    CHECK(result.structured_content["confidence"] == "high");
    CHECK_FALSE(result.structured_content.contains("reranked"));
  }
  SECTION("an empty query (the outline)") {
    SearchFixture fixture(switched_on());
    ScriptedClient client(kSampling, never_asked);
    CHECK_FALSE(fixture.search(client, json::object()).structured_content.contains("reranked"));
  }
}

TEST_CASE("a refusal, an unreadable answer or silence keeps the search's order, without an error") {
  const std::vector<std::string> before = lexical(kUnsure);
  SearchFixture fixture(switched_on());
  auto run = [&](ScriptedClient::Script script) {
    ScriptedClient client(kSampling, std::move(script));
    ToolResult result = fixture.search(client, kUnsure);
    CHECK_FALSE(result.is_error);
    CHECK(client.asked.size() == 1);
    CHECK(result.structured_content["reranked"] == false);
    CHECK(SearchFixture::names(result) == before);
    return result.structured_content.value("rerankProblem", "");
  };
  CHECK(run([](const json&, const std::stop_token&) {
          return ClientAnswer{std::nullopt, "the client answered with an error: no model", false};
        }) == "the client answered with an error: no model");
  CHECK(run([](const json&, const std::stop_token&) { return says("The gamma one."); }) ==
        "the client's model answered no list of tool numbers");
  CHECK(run([](const json&, const std::stop_token&) { return says("[9]"); }) ==
        "the client's model named no candidate (they are numbered 1 to 4)");
  // Silence: the wait ends at the settings' timeout, through the stop token.
  const auto started = std::chrono::steady_clock::now();
  CHECK(run([](const json&, const std::stop_token& stop) {
          while (!stop.stop_requested()) std::this_thread::sleep_for(5ms);
          return ClientAnswer{std::nullopt, "the request it was sent for has ended", false};
        }) == "the client's model did not answer within 200 ms");
  CHECK(std::chrono::steady_clock::now() - started < 5s);
}

TEST_CASE("a 2026-07-28 client's answer comes with the retry, to the same question") {
  SearchFixture fixture(switched_on());
  json first_question;
  ScriptedClient first(kSampling, [&](const json& params, const std::stop_token&) {
    first_question = params;
    return ClientAnswer{std::nullopt, "the client answers with a retry", true};
  });
  // The exchange stops the call when it keeps a question for input_required.
  first.cancel = true;
  CHECK(fixture.search(first, kUnsure).is_error);  // discarded by the server
  REQUIRE(first.asked.size() == 1);
  CHECK(first.asked[0]["key"] == "tool_search-rerank");

  ScriptedClient retry(kSampling, [&](const json& params, const std::stop_token&) {
    CHECK(params == first_question);
    return says("[3]");
  });
  ToolResult result = fixture.search(retry, kUnsure);
  CHECK(result.structured_content["reranked"] == true);
  const std::string prompt = first_question["messages"][0]["content"]["text"].get<std::string>();
  const std::size_t third = prompt.find("\n3. ") + 4;
  CHECK(SearchFixture::names(result)[0] == prompt.substr(third, prompt.find(':', third) - third));
}
