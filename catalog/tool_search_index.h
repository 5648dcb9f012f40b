// Ranked search over tool definitions, for tool_search: a model describes what
// it wants to do, and the index returns the tools most likely to do it.
//
// BM25F: a tool is a document of separately weighted fields (name, title,
// description, parameter names, parameter descriptions, enum values), its
// text analysed into terms by catalog/text_analysis.h (names split and joined,
// words stemmed, stop words dropped from running text). Text that
// repeats across most tools of one source (boilerplate such as "This tool
// calls the GitHub API") is damped so that it does not drown the ranking.
//
// An index is immutable once built: build() makes a new one (off the request
// path, when the catalog changes) and callers swap a shared_ptr. search() may
// be called from any number of threads at once.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/text_analysis.h"

namespace toolmux {

// What the index sees of one tool.
struct SearchDocument {
  std::string name;
  std::string title;
  std::string description;
  std::vector<std::pair<std::string, std::string>> parameters;  // name, description
  std::vector<std::string> enum_values;
  std::vector<std::string> tags;  // the tool's own labels (ToolSpec tags, an API's operation tags)
  // What the tool's source says of itself (an upstream's title, description,
  // instructions), shared by all its tools.
  std::shared_ptr<const std::string> source_text;
  std::string source;  // where the tool comes from ("toolmux", "catalog", an upstream's name)
};

// A document from an MCP Tool object ({name, title?, description, inputSchema}):
// parameters are the top-level properties of inputSchema, with their
// descriptions and the string values of their enums (one level of nesting in
// objects and array items is followed too).
SearchDocument search_document_from_tool(const nlohmann::json& tool, std::string source);

struct SearchOptions {
  // BM25F field weights.
  double name_weight = 3.0;
  double title_weight = 2.0;
  double description_weight = 1.0;
  double parameter_name_weight = 1.0;
  double parameter_description_weight = 0.5;
  double enum_weight = 0.5;
  double tag_weight = 1.0;
  double source_text_weight = 0;  // off: it cost 2 tune queries at 0.25-1 (EXPERIMENTS.md, round 3)
  double k1 = 1.2;
  double b = 0.75;  // length normalisation, per field against that field's mean length
  bool stem = true;
  bool split_names = true;       // snake_case / camelCase / digits into words
  bool damp_boilerplate = true;  // damp terms frequent within one source
  // Query expansion: a query word also matches the words its entry lists, at
  // expansion_weight. Entries are looked up by stem when `stem` is on
  // ("removing" finds the entry "remove"). The built-in list,
  // default_synonyms(), is used unless use_default_synonyms is false; an entry
  // of `synonyms` replaces the built-in entry for the same word (an empty one
  // turns it off) and other entries add to the list.
  SynonymMap synonyms;
  bool use_default_synonyms = true;
  double expansion_weight = 0.5;
  // A synonym weighs at most as much as the word it stands for: its idf is
  // capped at the word's when the word is in the catalog. Without the cap a
  // synonym rarer than the word outranks the word itself ("read a file" in
  // the built-in catalog: get_file_info, through "get", above read_text_file).
  bool cap_synonym_idf = true;
  // A query word (or a synonym of one) that is a word of a document's source
  // name multiplies the score of that source's matching documents by
  // 1 + source_boost ("slack" in the query: Slack's tools first). 0: no boost.
  double source_boost = 0.5;
  // All the text in one field (name_weight and the other field weights are
  // not used): the plain_bm25() baseline.
  bool single_field = false;

  // Plain BM25, the baseline: one field of all the text, no name splitting,
  // no stemming, no boilerplate damping, no expansion, no source boost.
  static SearchOptions plain_bm25();
};

class ToolSearchIndex {
 public:
  static std::shared_ptr<const ToolSearchIndex> build(std::vector<SearchDocument> documents,
                                                      SearchOptions options = {});

  struct Hit {
    std::size_t document;  // index into the documents given to build()
    double score;
  };
  // The best `limit` documents for `query`, best first, ties broken by name so
  // the same query always gives the same order. `allowed` (when set) filters
  // documents before ranking. Empty when nothing matches.
  std::vector<Hit> search(std::string_view query, std::size_t limit,
                          const std::function<bool(std::size_t)>& allowed = {}) const;
  // The same, with each document's score multiplied by source_factor[its
  // source number] (size source_count(); a factor of 1 changes nothing).
  std::vector<Hit> search(std::string_view query, std::size_t limit,
                          const std::function<bool(std::size_t)>& allowed,
                          const std::vector<float>& source_factor) const;

  // The most a document could score for `query` without synonyms and source
  // boost: each query term at its idf times the saturation's ceiling; a word
  // the index does not know counts as a rare one. For a confidence measure.
  double ceiling(std::string_view query) const;

  // Sources are numbered in the order their first document was given.
  std::size_t source_count() const;
  std::size_t source_number(std::size_t document) const;

  // Why `document` scores what it does for `query`: one line per index term
  // the query matched in it (its query word or the synonym that led there,
  // the fields it is in and how often, its idf, damping and its share of the
  // score), and the source boost when one applied. The terms' shares add up
  // to the score search() gives, before any source_factor.
  struct TermScore {
    std::string query_word;                           // as the query has it (lower-case)
    std::string term;                                 // the index term it matched
    bool synonym = false;                             // matched through the synonym list
    std::vector<std::pair<std::string, int>> fields;  // field name, occurrences
    double idf = 0;
    double damping = 1;  // < 1 when the term is boilerplate in the tool's source
    double score = 0;
  };
  struct Explanation {
    std::vector<TermScore> terms;
    double source_boost = 1;  // the factor applied because the query named the source
    double score = 0;
  };
  Explanation explain(std::string_view query, std::size_t document) const;

  const SearchDocument& document(std::size_t i) const { return documents_[i]; }
  std::size_t size() const { return documents_.size(); }
  // Bytes the index holds (postings, vocabulary, documents), for benchmarks.
  std::size_t memory_bytes() const;

  // The words a text is indexed as (lower-case, split, stemmed as the options
  // say); exposed for tests and for `toolmux search --explain`.
  std::vector<std::string> analyze(std::string_view text, bool is_name) const;

  ~ToolSearchIndex();
  struct Impl;

 private:
  ToolSearchIndex(std::vector<SearchDocument> documents, std::unique_ptr<Impl> impl);
  std::vector<Hit> search_scaled(std::string_view query, std::size_t limit,
                                 const std::function<bool(std::size_t)>& allowed,
                                 const float* source_factor) const;
  std::vector<SearchDocument> documents_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace toolmux
