#include "catalog/catalog_search.h"

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace toolmux;

namespace {

SearchDocument doc(std::string name, std::string description, std::string source) {
  SearchDocument d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.source = std::move(source);
  return d;
}

// A memory server whose tools say nothing of remembering, a GitHub server,
// and a large API server (70 tools in three API families).
std::vector<SearchDocument> catalog() {
  std::vector<SearchDocument> docs = {
      doc("create_entities", "Create multiple new entities in the graph.", "memory"),
      doc("add_observations", "Add new observations to existing entities in the graph.", "memory"),
      doc("search_nodes", "Search for nodes in the graph based on a query.", "memory"),
      doc("create_issue", "Create a new issue in a GitHub repository.", "github"),
      doc("list_issues", "List issues in a GitHub repository.", "github"),
      doc("create_pull_request", "Open a pull request from one branch into another.", "github"),
  };
  const std::vector<std::pair<std::string, std::string>> families = {
      {"ApiV1", "message"}, {"ChatV2", "channel"}, {"VoiceV1", "call"}};
  for (const auto& [family, object] : families) {
    for (int i = 0; i < 24; ++i) {
      const std::string verb = i % 3 == 0 ? "Create" : i % 3 == 1 ? "Fetch" : "Delete";
      docs.push_back(doc(family + "--" + verb + object + std::to_string(i),
                         verb + " a " + object + " resource number " + std::to_string(i) + ".",
                         "phone"));
    }
  }
  return docs;
}

std::vector<SourceInfo> sources() {
  return {{"memory", "Memory",
           "Remembers facts about people and projects across conversations. Keeps them in a "
           "knowledge graph."},
          {"github", "GitHub", "Issues, pull requests and repositories on GitHub."}};
}

std::vector<std::string> names(const CatalogSearch& search, const CatalogSearchAnswer& answer) {
  std::vector<std::string> out;
  for (const auto& hit : answer.hits) out.push_back(search.tools().document(hit.document).name);
  return out;
}

std::vector<std::string> ids(const std::vector<SourceMatch>& matches) {
  std::vector<std::string> out;
  for (const auto& match : matches) out.push_back(match.id);
  return out;
}

}  // namespace

TEST_CASE("catalog search: the outline names each source with its description and tool count") {
  auto search = CatalogSearch::build(catalog(), sources());
  const auto outline = search->outline("", {});
  REQUIRE(ids(outline) == std::vector<std::string>{"memory", "github", "phone"});
  CHECK(outline[0].description ==
        "Memory: Remembers facts about people and projects across conversations.");
  CHECK(outline[0].tools == 3);
  CHECK(outline[0].groups == 0);
  // A source that does not describe itself is described by its tools.
  CHECK(outline[2].description.rfind("72 tools, e.g. ", 0) == 0);
  CHECK(outline[2].groups == 3);
  // Its groups, by the prefix of their names.
  const auto groups = search->outline("phone", {});
  CHECK(ids(groups) == std::vector<std::string>{"phone/ApiV1", "phone/ChatV2", "phone/VoiceV1"});
  CHECK(groups[0].tools == 24);
  CHECK(groups[0].description.find("Createmessage0") != std::string::npos);
  CHECK(search->outline("memory", {}).empty());
  CHECK(search->has_source("phone/ChatV2"));
  CHECK_FALSE(search->has_source("phone/Nope"));
}

TEST_CASE("catalog search: the outline counts only the tools the caller may see") {
  auto search = CatalogSearch::build(catalog(), sources());
  auto not_memory = [&](std::size_t d) { return search->source_of(d) != "memory"; };
  CHECK(ids(search->outline("", not_memory)) == std::vector<std::string>{"github", "phone"});
}

TEST_CASE("catalog search: a query that misses the tools' words still names the right source") {
  auto search = CatalogSearch::build(catalog(), sources());
  CatalogSearchRequest request;
  request.query = "remember that Alice prefers tea";
  const auto answer = search->search(request);
  REQUIRE_FALSE(answer.sources.empty());
  CHECK(answer.sources.front().id == "memory");
  CHECK(answer.confidence != SearchConfidence::high);
}

TEST_CASE("catalog search: a source narrows the search to its tools, a group to its own") {
  auto search = CatalogSearch::build(catalog(), sources());
  CatalogSearchRequest request;
  request.query = "create";
  request.limit = 20;
  request.source = "github";
  for (const auto& name : names(*search, search->search(request)))
    CHECK((name == "create_issue" || name == "create_pull_request"));
  request.source = "phone/ChatV2";
  const auto in_group = names(*search, search->search(request));
  REQUIRE(in_group.size() == 8);
  for (const auto& name : in_group) CHECK(name.rfind("ChatV2--Create", 0) == 0);
  request.source = "nowhere";
  CHECK(search->search(request).hits.empty());
}

TEST_CASE("catalog search: alternatives find what the query's own words miss") {
  auto search = CatalogSearch::build(catalog(), sources());
  CatalogSearchRequest request;
  request.query = "file a complaint about the repo";
  request.limit = 1;
  const auto alone = names(*search, search->search(request));
  request.alternatives = {"create issue", "open a GitHub issue"};
  const auto fused = search->search(request);
  REQUIRE(names(*search, fused) == std::vector<std::string>{"create_issue"});
  CHECK(fused.confidence == SearchConfidence::high);
  CHECK(alone != names(*search, fused));
}

TEST_CASE("catalog search: a query in the tools' own words is sure of its answer") {
  auto search = CatalogSearch::build(catalog(), sources());
  CatalogSearchRequest request;
  request.query = "create pull request";
  const auto answer = search->search(request);
  REQUIRE_FALSE(answer.hits.empty());
  CHECK(search->tools().document(answer.hits.front().document).name == "create_pull_request");
  CHECK(answer.confidence == SearchConfidence::high);
}

TEST_CASE("catalog search: hidden tools are never found nor counted") {
  auto search = CatalogSearch::build(catalog(), sources());
  CatalogSearchRequest request;
  request.query = "create issue";
  request.allowed = [&](std::size_t d) { return search->source_of(d) != "github"; };
  request.limit = 20;
  const auto answer = search->search(request);
  for (const auto& hit : answer.hits) CHECK(search->source_of(hit.document) != "github");
  for (const auto& match : answer.sources) CHECK(match.id != "github");
}

TEST_CASE("catalog search: explain's shares add up to the tool's score") {
  auto search = CatalogSearch::build(catalog(), sources());
  const auto hits = search->tools().search("create a github issue", 3);
  REQUIRE_FALSE(hits.empty());
  const auto why = search->tools().explain("create a github issue", hits.front().document);
  CHECK(why.score == Approx(hits.front().score).epsilon(1e-4));
  REQUIRE_FALSE(why.terms.empty());
  bool named_field = false;
  for (const auto& term : why.terms) named_field = named_field || !term.fields.empty();
  CHECK(named_field);
}
