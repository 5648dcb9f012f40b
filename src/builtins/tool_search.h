// tool_search: the built-in tool that finds tools by what they do, so that a
// model can work with a catalog far larger than its tool list.
//
// It answers from a ToolSearchIndex over the catalog's published tools. The
// index can only be built once every tool is registered, tool_search included,
// so the tool reads it through a SearchIndexHolder that build_catalog fills
// last. Search never returns a tool the caller may not call.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool_policy.h"
#include "catalog/tool_registry.h"
#include "catalog/tool_search_index.h"
#include "src/base/problem.h"

namespace toolmux {

inline constexpr const char* kToolSearch = "tool_search";
inline constexpr std::size_t kDefaultSearchLimit = 5;
inline constexpr std::size_t kMaxSearchLimit = 20;

// What tool_search searches: the index, and for each of its documents the
// published tool (name, description, inputSchema as tools/list shows it).
struct SearchableCatalog {
  std::shared_ptr<const ToolSearchIndex> index;
  // Both owned by the Catalog, which outlives every call that searches it.
  const std::vector<nlohmann::json>* tools = nullptr;  // by document number
  const ToolPolicy* policy = nullptr;
};

// Set once, read by every call. Thread-safe.
class SearchIndexHolder {
 public:
  void set(std::shared_ptr<const SearchableCatalog> catalog);
  std::shared_ptr<const SearchableCatalog> get() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const SearchableCatalog> catalog_;
};

// Registers tool_search. `summary` goes into its description so the model
// knows what it can find ("2,880 tools from github, slack, ..."), with advice
// on how to write a query.
Problems register_tool_search(ToolRegistry& registry,
                              const std::shared_ptr<SearchIndexHolder>& holder,
                              const std::string& summary);

// The hits for `query` that `principal` may call, best first: each
// {name, description, inputSchema} as tools/list shows it.
nlohmann::json search_tools(const SearchableCatalog& catalog, std::string_view query,
                            std::size_t limit, std::string_view principal);

}  // namespace toolmux
