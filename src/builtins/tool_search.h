// tool_search: the built-in tool that finds tools by what they do, so that a
// model can work with a catalog far larger than its tool list.
//
// It answers from a CatalogSearch over the catalog's published tools and their
// sources. The index can only be built once every tool is registered,
// tool_search included, so the tool reads it through a SearchIndexHolder that
// build_catalog fills last. Search never returns, counts or names a tool the
// caller may not call.
//
// An answer says how sure it is; when it is not, it also names the sources
// (upstream servers, and groups within a large one) that match best, and the
// model can narrow its next search to one of them with `source`. An empty
// query lists the sources. The description is the same whatever the catalog
// holds, so that a client's prompt cache survives a reload.
//
// With the catalog's "search"."rerank" on, an unsure answer's first
// candidates may be ordered by the client's own model
// (src/builtins/tool_search_rerank.h), when the client declared sampling.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/catalog_search.h"
#include "catalog/search_memory.h"
#include "catalog/search_rerank.h"
#include "catalog/tool_policy.h"
#include "catalog/tool_registry.h"
#include "src/base/problem.h"

namespace toolmux {

inline constexpr const char* kToolSearch = "tool_search";
inline constexpr std::size_t kDefaultSearchLimit = 5;
inline constexpr std::size_t kMaxSearchLimit = 20;

// What tool_search searches: the index, and for each of its documents the
// published tool (name, description, inputSchema as tools/list shows it).
class SkillSet;

struct SearchableCatalog {
  std::shared_ptr<const CatalogSearch> search;
  // Both owned by the Catalog, which outlives every call that searches it.
  const std::vector<nlohmann::json>* tools = nullptr;  // by document number
  const ToolPolicy* policy = nullptr;
  // What use taught (CatalogSearchRequest::memory): searches rank by it; null
  // when the catalog does not learn ("search": {"learn": false}).
  std::shared_ptr<const SearchMemory> memory;
  SearchRerankSettings rerank;  // the catalog file's "search"."rerank"
  // The catalog's skills (catalog/skills.h), owned by the Catalog too: a
  // search also names those whose name or description shares its words.
  // Null: none.
  const SkillSet* skills = nullptr;
};

// Set once, read by every call. Thread-safe.
class SearchIndexHolder {
 public:
  using Build = std::function<std::shared_ptr<const SearchableCatalog>()>;
  void set(std::shared_ptr<const SearchableCatalog> catalog);
  // Built when it is first asked for, by the thread that asks (those that ask
  // meanwhile wait for it): a process that never searches never builds the
  // index, and start-up does not wait for it (2 ms for the built-in tools,
  // about 23 ms at 1,000 tools, bench/search_speed).
  void set_on_first_use(Build build);
  std::shared_ptr<const SearchableCatalog> get() const;

 private:
  mutable std::mutex mutex_;
  mutable Build build_;  // until get() first runs it
  mutable std::shared_ptr<const SearchableCatalog> catalog_;
};

// Registers tool_search.
Problems register_tool_search(ToolRegistry& registry,
                              const std::shared_ptr<SearchIndexHolder>& holder);

struct ToolSearchQuery {
  std::string query;  // empty: the outline (the sources, or a source's groups or tools)
  std::vector<std::string> alternatives;
  std::string source;  // "" or a source or group an answer named
  std::size_t limit = kDefaultSearchLimit;
  // No words at all (only white space): asks for the outline.
  bool blank() const { return query.find_first_not_of(" \t\r\n") == std::string::npos; }
};

// What asking the client's model to order candidates came to.
struct RerankOutcome {
  bool asked = false;  // false: nothing was sent (the answer then says nothing of it)
  // When asked: the model's choice (RerankAnswer::chosen), or nothing, with why.
  std::optional<std::vector<std::size_t>> chosen;
  std::string problem;
};

// Re-ranking of an unsure answer by the client's model: the first
// `candidates` tools the caller may see (published tools, best first) are
// given to `ask`, once per search at most.
struct SearchReranking {
  std::size_t candidates = 10;
  std::function<RerankOutcome(const std::vector<const nlohmann::json*>& tools)> ask;
};

// tool_search's answer for `principal`, as its structuredContent:
// {"tools": [{name, description, inputSchema}, ...], "confidence": "high" |
// "medium" | "low", "sources": [{id, description, tools, groups?}, ...]}
// (sources only when the answer is not sure, or for an empty query), or
// {"error": "..."} for a source that does not exist. With `reranking`, an
// answer that is not sure of a query with words (and has two candidates or
// more) is put in the order the client's model chose, and says
// "reranked": true; when the model gave no order it keeps the search's order
// and says "reranked": false and "rerankProblem": why.
nlohmann::json search_catalog(const SearchableCatalog& catalog, const ToolSearchQuery& query,
                              std::string_view principal,
                              const SearchReranking* reranking = nullptr);

// The answer as text for the model (and for `toolmux search`).
std::string search_answer_text(const ToolSearchQuery& query, const nlohmann::json& answer);

// What a call of tool_search teaches (src/builtins/search_clicks.h): the terms
// of its arguments (SearchMemory::terms of the query and its alternatives;
// none for an empty query, which asks for the outline), and the names of the
// tools its result answered with, best first (none for an error or a result
// without them).
std::vector<std::string> search_terms(const nlohmann::json& arguments);
std::vector<std::string> answered_tools(const ToolResult& result);

}  // namespace toolmux
