#include "catalog/tool_search_index.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

using namespace toolmux;
using nlohmann::json;

namespace {

SearchDocument doc(std::string name, std::string description, std::string source = "test",
                   std::vector<std::pair<std::string, std::string>> parameters = {},
                   std::vector<std::string> enums = {}) {
  SearchDocument d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.source = std::move(source);
  d.parameters = std::move(parameters);
  d.enum_values = std::move(enums);
  return d;
}

std::vector<SearchDocument> small_catalog() {
  return {
      doc("list_issues", "List issues in a GitHub repository, with filters.", "github",
          {{"owner", "Repository owner"}, {"repo", "Repository name"}, {"state", "Issue state"}},
          {"open", "closed", "all"}),
      doc("create_issue", "Create a new issue in a GitHub repository.", "github",
          {{"owner", "Repository owner"}, {"title", "Issue title"}, {"body", "Issue body"}}),
      doc("create_pull_request", "Open a pull request from one branch into another.", "github",
          {{"head", "Branch with the changes"}, {"base", "Branch to merge into"}}),
      doc("send_message", "Send a text message to a phone number.", "twilio",
          {{"to", "Phone number to send to"}, {"body", "Text of the message"}}),
      doc("browser_take_screenshot", "Take a screenshot of the current page.", "playwright",
          {{"fullPage", "Capture the whole scrollable page"}}),
      doc("pods_list", "List the pods of a Kubernetes namespace.", "kubernetes",
          {{"namespace", "Kubernetes namespace"}}),
      doc("read_text_file", "Read a text file from the file system.", "filesystem",
          {{"path", "Path of the file"}}),
      doc("getHTTPResponse", "Fetch a URL and return the response.", "fetch",
          {{"url", "The address to fetch"}}),
  };
}

std::vector<std::string> names(const ToolSearchIndex& index,
                               const std::vector<ToolSearchIndex::Hit>& hits) {
  std::vector<std::string> out;
  for (const auto& hit : hits) out.push_back(index.document(hit.document).name);
  return out;
}

std::string top(const ToolSearchIndex& index, std::string_view query) {
  auto hits = index.search(query, 5);
  return hits.empty() ? std::string() : index.document(hits[0].document).name;
}

}  // namespace

TEST_CASE("plain BM25 neither splits nor stems") {
  auto index = ToolSearchIndex::build({}, SearchOptions::plain_bm25());
  CHECK(index->analyze("list_issues", true) == std::vector<std::string>{"list_issues"});
  CHECK(index->analyze("Creating issues", false) == std::vector<std::string>{"creating", "issues"});
}

TEST_CASE("a query with a tool's own words ranks it first") {
  auto index = ToolSearchIndex::build(small_catalog());
  CHECK(top(*index, "create a github issue") == "create_issue");
  CHECK(top(*index, "send a text message") == "send_message");
  CHECK(top(*index, "take a screenshot of the page") == "browser_take_screenshot");
  CHECK(top(*index, "list kubernetes pods") == "pods_list");
  CHECK(top(*index, "read a file") == "read_text_file");
  CHECK(top(*index, "open a pull request") == "create_pull_request");
}

TEST_CASE("split and joined names match queries") {
  auto index = ToolSearchIndex::build(small_catalog());
  CHECK(top(*index, "list issues") == "list_issues");
  CHECK(top(*index, "listissues") == "list_issues");
  CHECK(top(*index, "list_issues") == "list_issues");
  CHECK(top(*index, "http response") == "getHTTPResponse");
  CHECK(top(*index, "getHttpResponse") == "getHTTPResponse");
}

TEST_CASE("enum values and parameter names are searched") {
  auto index = ToolSearchIndex::build(small_catalog());
  CHECK(top(*index, "closed") == "list_issues");
  CHECK(top(*index, "fullPage") == "browser_take_screenshot");
}

TEST_CASE("synonyms expand a query") {
  auto catalog = small_catalog();
  SearchOptions options;
  options.use_default_synonyms = false;
  auto without = ToolSearchIndex::build(catalog, options);
  CHECK(without->search("sms", 5).empty());

  options.synonyms["sms"] = {"text message"};
  auto with = ToolSearchIndex::build(catalog, options);
  CHECK(top(*with, "send an sms") == "send_message");
  auto hits = with->search("sms", 5);
  REQUIRE_FALSE(hits.empty());
  CHECK(with->document(hits[0].document).name == "send_message");
  // An expanded term counts less than the word itself.
  auto direct = with->search("text message", 1);
  REQUIRE_FALSE(direct.empty());
  CHECK(hits[0].score < direct[0].score);
}

std::vector<SearchDocument> widget_catalog() {
  return {doc("widget_create", "Creates a widget.", "acme"),
          doc("widget_delete", "Deletes a widget for good.", "acme"),
          doc("widget_get", "Gets one widget by its id.", "acme")};
}

TEST_CASE("the built-in synonyms apply unless turned off") {
  auto index = ToolSearchIndex::build(widget_catalog());
  CHECK(top(*index, "remove a widget") == "widget_delete");
  CHECK(top(*index, "removing widgets") == "widget_delete");  // looked up by stem
  CHECK(top(*index, "erase the widget") == "widget_delete");
  CHECK(top(*index, "make a new widget") == "widget_create");
  CHECK(top(*index, "fetch widget") == "widget_get");
  CHECK(names(*index, index->search("remove", 5)) == std::vector<std::string>{"widget_delete"});
  // A synonym counts less than the word itself.
  CHECK(index->search("remove", 1)[0].score < index->search("delete", 1)[0].score);

  SearchOptions options;
  options.use_default_synonyms = false;
  auto plain = ToolSearchIndex::build(widget_catalog(), options);
  CHECK(plain->search("remove", 5).empty());
  CHECK(top(*plain, "remove a widget") == "widget_create");  // "widget" alone: a tie, by name
  CHECK(ToolSearchIndex::build(widget_catalog(), SearchOptions::plain_bm25())
            ->search("remove", 5)
            .empty());
}

TEST_CASE("a synonym rarer than the word never outranks the word itself") {
  // The built-in catalog's case: "read" -> "get", and one get_* tool among
  // several that read. "get" is the rarer word, so uncapped it scored more
  // than "read" itself and get_file_info came first for "read a file".
  std::vector<SearchDocument> catalog = {
      doc("get_file_info", "Describe one file: its type, size and times."),
      doc("read_text_file", "Read a text file and return its lines."),
      doc("read_tool_result", "Read a stored result page by page."),
      doc("read_media_file", "Read an image or audio file."),
      doc("list_folder", "List the entries of a folder.")};
  SearchOptions options;
  options.use_default_synonyms = false;
  options.synonyms["read"] = {"get"};
  auto index = ToolSearchIndex::build(catalog, options);
  const auto hits = index->search("read a file", 5);
  REQUIRE(hits.size() >= 3);
  CHECK(index->document(hits[0].document).name != "get_file_info");
  CHECK(top(*index, "read a text file") == "read_text_file");
  // The synonym still finds the tool that has only it.
  CHECK(top(*index, "read file info") == "get_file_info");

  options.cap_synonym_idf = false;  // as before: the rare synonym wins
  CHECK(top(*ToolSearchIndex::build(catalog, options), "read a file") == "get_file_info");
}

TEST_CASE("a catalog's synonyms add to the built-in ones, and replace an entry of the same word") {
  SearchOptions options;
  options.synonyms["zap"] = {"delete"};
  auto added = ToolSearchIndex::build(widget_catalog(), options);
  CHECK(top(*added, "zap a widget") == "widget_delete");
  CHECK(top(*added, "remove a widget") == "widget_delete");  // the built-in entry is kept

  options.synonyms["remove"] = {"create"};
  auto replaced = ToolSearchIndex::build(widget_catalog(), options);
  CHECK(names(*replaced, replaced->search("remove", 5)) ==
        std::vector<std::string>{"widget_create"});
  CHECK(names(*replaced, replaced->search("removing", 5)) ==
        std::vector<std::string>{"widget_create"});

  options.synonyms["remove"] = {};
  CHECK(ToolSearchIndex::build(widget_catalog(), options)->search("remove", 5).empty());

  options.use_default_synonyms = false;
  auto own_only = ToolSearchIndex::build(widget_catalog(), options);
  CHECK(top(*own_only, "zap") == "widget_delete");
  CHECK(own_only->search("erase", 5).empty());
}

TEST_CASE("a query that names a source ranks that source's matching tools first") {
  std::vector<SearchDocument> catalog = {
      doc("create_issue", "Create an issue.", "gitlab"),
      doc("create_issue", "Create an issue.", "github"),
      doc("list_repositories", "List repositories.", "github"),
      doc("pods_list", "List the pods of a namespace.", "other"),
      doc("pods_list", "List the pods of a namespace.", "kubernetes"),
  };
  auto index = ToolSearchIndex::build(catalog);
  auto source_of = [&](const ToolSearchIndex::Hit& hit) {
    return index->document(hit.document).source;
  };
  // Equal text: the source named in the query decides, although no tool's
  // text has the word. Tools of that source that do not match stay out.
  auto hits = index->search("github create issue", 5);
  REQUIRE(hits.size() == 2);
  CHECK(source_of(hits[0]) == "github");
  CHECK(index->document(hits[1].document).name == "create_issue");
  CHECK(source_of(index->search("create issue in gitlab", 5)[0]) == "gitlab");
  // A synonym that names a source counts too (k8s -> kubernetes).
  CHECK(source_of(index->search("k8s pods", 5)[0]) == "kubernetes");
  // Without the boost, equal scores fall back to the order of the documents.
  SearchOptions options;
  options.source_boost = 0;
  auto unboosted = ToolSearchIndex::build(catalog, options);
  auto flat = unboosted->search("github create issue", 5);
  REQUIRE(flat.size() == 2);
  CHECK(flat[0].score == flat[1].score);
}

TEST_CASE("a source's own name is never damped as its boilerplate") {
  std::vector<SearchDocument> catalog;
  // 30 Slack tools, every one of which says "Slack".
  for (int i = 0; i < 29; ++i)
    catalog.push_back(doc("slack_op_" + std::to_string(i),
                          "Operation " + std::to_string(i) + " on a Slack workspace.", "slack"));
  catalog.push_back(doc("slack_post_message", "Post a message to a Slack channel.", "slack"));
  // Another source's tool that mentions Slack once.
  catalog.push_back(
      doc("teams_send_message", "Send a message to a channel, as in Slack.", "teams"));
  for (int i = 0; i < 3; ++i)
    catalog.push_back(doc("teams_op_" + std::to_string(i), "Teams operation.", "teams"));

  auto index = ToolSearchIndex::build(catalog);
  CHECK(top(*index, "slack message") == "slack_post_message");
  SearchOptions options;
  options.source_boost = 0;  // the damping alone
  CHECK(top(*ToolSearchIndex::build(catalog, options), "slack message") == "slack_post_message");
}

TEST_CASE("weights of 0 never give a tool twice") {
  SearchOptions options;
  options.name_weight = 0;
  options.description_weight = 0;
  options.expansion_weight = 0;
  auto index = ToolSearchIndex::build(widget_catalog(), options);
  auto hits = names(*index, index->search("widget delete remove create", 5));
  std::sort(hits.begin(), hits.end());
  CHECK(hits == std::vector<std::string>{"widget_create", "widget_delete", "widget_get"});
  CHECK(index->search("remove", 5).empty());
}

TEST_CASE("boilerplate frequent in one source does not decide the ranking") {
  std::vector<SearchDocument> catalog;
  // 30 tools of one source, each saying it calls the Acme API.
  for (int i = 0; i < 30; ++i)
    catalog.push_back(doc("acme_op_" + std::to_string(i),
                          "Operation number " + std::to_string(i) +
                              " of the Acme cloud API. This tool calls the Acme API.",
                          "acme"));
  // The tool that is about the API (its only mention of it is short).
  catalog.push_back(doc("api_gateway_routes", "Manage the routes of an API gateway.", "gateway"));
  for (int i = 0; i < 5; ++i)
    catalog.push_back(doc("gateway_tool_" + std::to_string(i), "Deploy gateway stuff.", "gateway"));

  auto damped = ToolSearchIndex::build(catalog);
  CHECK(top(*damped, "api") == "api_gateway_routes");

  SearchOptions options;
  options.damp_boilerplate = false;
  auto undamped = ToolSearchIndex::build(catalog, options);
  auto damped_hits = damped->search("api", 40);
  auto undamped_hits = undamped->search("api", 40);
  REQUIRE(damped_hits.size() == undamped_hits.size());
  // Damping lowers the acme tools' scores for "api", and leaves the other's alone.
  double damped_acme = 0;
  double undamped_acme = 0;
  for (const auto& hit : damped_hits)
    if (damped->document(hit.document).source == "acme") damped_acme = hit.score;
  for (const auto& hit : undamped_hits)
    if (undamped->document(hit.document).source == "acme") undamped_acme = hit.score;
  CHECK(damped_acme < undamped_acme * 0.6);
}

TEST_CASE("the allowed filter applies before ranking") {
  auto index = ToolSearchIndex::build(small_catalog());
  auto all = index->search("issue", 1);
  REQUIRE(all.size() == 1);
  const std::size_t best = all[0].document;
  auto filtered = index->search("issue", 1, [&](std::size_t d) { return d != best; });
  REQUIRE(filtered.size() == 1);
  CHECK(filtered[0].document != best);
  CHECK(index->search("issue", 5, [](std::size_t) { return false; }).empty());
}

TEST_CASE("ties are broken by name, and results are deterministic") {
  std::vector<SearchDocument> catalog = {doc("zeta", "Export the report."),
                                         doc("alpha", "Export the report."),
                                         doc("mid", "Export the report.")};
  auto index = ToolSearchIndex::build(catalog);
  auto hits = index->search("export report", 10);
  CHECK(names(*index, hits) == std::vector<std::string>{"alpha", "mid", "zeta"});
  CHECK(hits[0].score == hits[2].score);
  for (int i = 0; i < 5; ++i)
    CHECK(names(*index, index->search("export report", 10)) ==
          std::vector<std::string>{"alpha", "mid", "zeta"});
  CHECK(names(*index, index->search("export", 2)) == std::vector<std::string>{"alpha", "mid"});
}

TEST_CASE("nonsense, stop words and empty queries find nothing") {
  auto index = ToolSearchIndex::build(small_catalog());
  CHECK(index->search("xyzzy plugh", 5).empty());
  CHECK(index->search("the of a", 5).empty());
  CHECK(index->search("", 5).empty());
  CHECK(index->search("issue", 0).empty());
  auto empty = ToolSearchIndex::build({});
  CHECK(empty->search("issue", 5).empty());
  CHECK(empty->size() == 0);
}

TEST_CASE("results are best first and within the limit") {
  auto index = ToolSearchIndex::build(small_catalog());
  auto hits = index->search("repository issue branch", 2);
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].score >= hits[1].score);
  CHECK(index->search("repository issue branch", 100).size() == 3);
}

TEST_CASE("plain BM25 ranks differently from the default") {
  auto catalog = small_catalog();
  auto plain = ToolSearchIndex::build(catalog, SearchOptions::plain_bm25());
  auto tuned = ToolSearchIndex::build(catalog);
  // No name splitting: "list issues" is not the name list_issues ...
  auto plain_hits = plain->search("listissues", 5);
  CHECK(plain_hits.empty());
  CHECK(top(*tuned, "listissues") == "list_issues");
  // ... and no stemming: "creating" does not match "create".
  CHECK(plain->search("creating", 5).empty());
  CHECK(top(*tuned, "creating") == "create_issue");
  CHECK(plain->search("issues", 5).size() != tuned->search("issues", 5).size());
}

TEST_CASE("search may run on many threads at once") {
  auto index = ToolSearchIndex::build(small_catalog());
  const auto expected = names(*index, index->search("create a github issue", 3));
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      int good = 0;
      for (int i = 0; i < 200; ++i)
        if (names(*index, index->search("create a github issue", 3)) == expected) ++good;
      ok[t] = good;
    });
  }
  for (auto& thread : threads) thread.join();
  for (int good : ok) CHECK(good == 200);
}

TEST_CASE("memory_bytes counts the index") {
  auto index = ToolSearchIndex::build(small_catalog());
  CHECK(index->memory_bytes() > 1000);
  CHECK(index->size() == small_catalog().size());
}

TEST_CASE("a search document from an MCP tool") {
  json tool = {
      {"name", "list_issues"},
      {"title", "List issues"},
      {"description", "List issues in a repository."},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"owner", {{"type", "string"}, {"description", "Repository owner"}}},
          {"state", {{"type", "string"}, {"enum", {"open", "closed", 3}}}},
          {"labels",
           {{"type", "array"}, {"items", {{"type", "string"}, {"enum", {"bug", "feature"}}}}}},
          {"sort",
           {{"type", "object"},
            {"properties",
             {{"by", {{"type", "string"}, {"enum", {"created", "updated"}}}},
              {"deep",
               {{"type", "object"},
                {"properties", {{"x", {{"type", "string"}, {"enum", {"nope"}}}}}}}}}}}}}}}}};
  SearchDocument d = search_document_from_tool(tool, "github");
  CHECK(d.name == "list_issues");
  CHECK(d.title == "List issues");
  CHECK(d.description == "List issues in a repository.");
  CHECK(d.source == "github");
  REQUIRE(d.parameters.size() == 4);
  CHECK(std::find(d.parameters.begin(), d.parameters.end(),
                  std::pair<std::string, std::string>{"owner", "Repository owner"}) !=
        d.parameters.end());
  CHECK(std::find(d.parameters.begin(), d.parameters.end(),
                  std::pair<std::string, std::string>{"state", ""}) != d.parameters.end());
  auto enums = d.enum_values;
  std::sort(enums.begin(), enums.end());
  CHECK(enums ==
        std::vector<std::string>{"bug", "closed", "created", "feature", "open", "updated"});
}

TEST_CASE("a search document from a malformed tool has what could be read") {
  SearchDocument d = search_document_from_tool(json::array(), "x");
  CHECK(d.name.empty());
  CHECK(d.source == "x");
  d = search_document_from_tool(
      {{"name", "t"}, {"description", 5}, {"inputSchema", {{"properties", {1, 2}}}}}, "x");
  CHECK(d.name == "t");
  CHECK(d.description.empty());
  CHECK(d.parameters.empty());
  d = search_document_from_tool(
      {{"name", "t"}, {"inputSchema", {{"properties", {{"p", "not a schema"}}}}}}, "x");
  REQUIRE(d.parameters.size() == 1);
  CHECK(d.parameters[0].first == "p");
}
