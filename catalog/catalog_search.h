// Search over a whole catalog, for tool_search: the tools, and the sources
// they come from.
//
// A tool's own words often differ from the words a person uses for a need,
// while the source it comes from is much easier to recognise ("remember that
// Alice likes tea" says little about create_entities, and a lot about a
// memory server). So a catalog search ranks the sources too: each source (an
// upstream server, the catalog file's tools, toolmux's own) is one document
// of its own words (its name, title, description, instructions) and its
// tools' names and descriptions; a source of many tools is also split into
// groups (its tools' tags, or the prefixes of their names), each a document
// of its own. The sources' ranking scales each tool's score (a tool of the
// best-matching source counts more), tells how sure the answer is, and is
// named to the model when the answer is unsure, so that it can narrow its
// next search to one source or group.
//
// A search may carry several phrasings of one need (the query and its
// alternatives); their rankings are fused by reciprocal rank.
//
// Immutable once built; search() may be called from any number of threads.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/tool_search_index.h"

namespace toolmux {

class SearchMemory;  // catalog/search_memory.h

// What a source says about itself.
struct SourceInfo {
  std::string name;  // as SearchDocument::source has it
  std::string title;
  // Its own words: an upstream's description and instructions, or what the
  // operator wrote for it. The first sentence describes it to the model.
  std::string description;
};

struct CatalogSearchOptions {
  SearchOptions tools;  // the tool index
  // A tool's score is multiplied by 1 + prior * s, where s in [0, 1] is its
  // source's score for the query over the best source's: prior is
  // source_prior for one phrasing and source_prior_alternatives for several
  // (whose words rank the sources far better). 0: sources do not change the
  // tools' ranking.
  double source_prior = 0;
  double source_prior_alternatives = 0.3;
  // Sources and groups as documents: their own words, plus their tools' names
  // and descriptions (false: their own words only).
  bool source_documents_include_tools = true;
  // ... their descriptions too (false: their names and titles only).
  bool source_documents_include_descriptions = false;  // names only: as good on tune, far cheaper
  double source_b = 1.0;  // length normalisation of source documents (they vary a lot)
  // A source's score for a query mixes its score as a document (weight 1 -
  // source_from_hits) with the scores of its best tools among the first
  // source_hits hits (weight source_from_hits): the sum of its best
  // source_hit_count tools' scores, over the best source's sum.
  double source_from_hits = 0.85;
  std::size_t source_hits = 20;
  std::size_t source_hit_count = 1;
  // A source of more tools than this is split into groups.
  std::size_t group_threshold = 60;
  // Fusion of several phrasings: each ranking's first fusion_depth hits add
  // weight / (rrf_k + rank); the query's weight is query_weight, each
  // alternative's 1.
  double rrf_k = 10;
  std::size_t fusion_depth = 50;
  double query_weight = 1.0;
  // Confidence: high when the best hit covers at least this share of the
  // best score the query's words could give, and medium above half of it.
  double high_confidence = 0.5;
  // Learning from use (CatalogSearchRequest::memory): each hit's score gets
  // learned_weight x its tool's boost (SearchMemory::boosts of the query's
  // terms) x the best hit's score; a tool whose boost is at least
  // learned_pull joins the hits when the words did not bring it. 0: the
  // memory changes nothing.
  double learned_weight = 1.0;
  double learned_pull = 0.25;
};

struct CatalogSearchRequest {
  std::string query;
  std::vector<std::string> alternatives;
  // Only the tools of this source ("github") or group ("twilio/TwilioChatV2").
  std::string source;
  std::size_t limit = 5;
  std::function<bool(std::size_t)> allowed;  // tools the caller may see (all when unset)
  // Whether the answer names sources: always, or only when it is not sure
  // (counting what the caller may see costs a pass over the sources' tools).
  enum class Sources { always, when_unsure };
  Sources sources = Sources::always;
  // What earlier searches and the calls after them taught, by tool name
  // (SearchMemory::terms of `query` only); none when null (the catalog's
  // "search.learn": false). Read during search() only; not owned.
  const SearchMemory* memory = nullptr;
};

// A source or a group, as an answer names it.
struct SourceMatch {
  std::string id;           // "github", or "twilio/TwilioChatV2" for a group
  std::string description;  // one line
  std::size_t tools = 0;    // the tools in it the caller may see
  std::size_t groups = 0;   // a source's groups (0: not split)
  double score = 0;         // for this query, over the best source's; 0 in an outline
};

enum class SearchConfidence { high, medium, low };
const char* to_string(SearchConfidence confidence);

struct CatalogSearchAnswer {
  std::vector<ToolSearchIndex::Hit> hits;
  SearchConfidence confidence = SearchConfidence::low;
  // The best-matching sources (at most 3) and, within a grouped one, its best
  // groups (at most 3), best first. Empty when nothing matched.
  std::vector<SourceMatch> sources;
};

class CatalogSearch {
 public:
  // `sources` describes sources by name; a source of the documents that it
  // does not describe is described by its tools alone.
  static std::shared_ptr<const CatalogSearch> build(std::vector<SearchDocument> documents,
                                                    const std::vector<SourceInfo>& sources,
                                                    CatalogSearchOptions options = {});

  CatalogSearchAnswer search(const CatalogSearchRequest& request) const;

  // The catalog's outline: every source with a tool the caller may see; or,
  // given a source's name, its groups (empty when it has none). Sources in
  // the order they were first seen, groups by name.
  std::vector<SourceMatch> outline(std::string_view source,
                                   const std::function<bool(std::size_t)>& allowed) const;

  // Whether `id` names a source or a group, as CatalogSearchRequest::source takes it.
  bool has_source(std::string_view id) const;
  // The source ("github") and group ("twilio/TwilioChatV2", or empty) of a tool.
  const std::string& source_of(std::size_t document) const;
  const std::string& group_of(std::size_t document) const;

  const ToolSearchIndex& tools() const { return *tools_; }
  // The score each source gets for `text` over the best one's, by source number
  // (ToolSearchIndex::source_number), for --explain.
  std::vector<double> source_scores(std::string_view text) const;

  std::size_t memory_bytes() const;

  struct Impl;
  explicit CatalogSearch(std::unique_ptr<Impl> impl);
  ~CatalogSearch();

 private:
  std::unique_ptr<Impl> impl_;
  std::shared_ptr<const ToolSearchIndex> tools_;
};

}  // namespace toolmux
