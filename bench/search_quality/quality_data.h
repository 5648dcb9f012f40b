// What the search-quality programs share (evaluate.cpp, experiments.cpp): the
// catalog and query files as they read them, and the metrics of one query's
// ranking, so that the benchmark and the experiments score alike.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/catalog_search.h"
#include "catalog/tool_search_index.h"

namespace search_quality {

namespace fs = std::filesystem;
using nlohmann::json;

inline constexpr std::size_t kLimit = 10;

struct Query {
  std::string id;
  std::string kind;
  std::string text;
  std::string split;
  std::set<std::string> relevant;  // "<server>/<tool name>"
  std::string first_relevant;      // the first the file lists
};

struct Catalog {
  std::vector<toolmux::SearchDocument> documents;
  std::vector<std::string> ids;  // parallel to documents
};

inline json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  return json::parse(in);
}

inline Catalog load_catalog(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());  // a fixed document order, whatever the directory order
  if (files.empty()) throw std::runtime_error("no *.json in " + dir.string());
  Catalog catalog;
  std::set<std::string> seen;
  for (const auto& file : files) {
    const json tools = read_json(file);
    if (!tools.is_array()) throw std::runtime_error(file.string() + ": not a JSON array");
    for (const auto& tool : tools) {
      const std::string server = tool.at("server").get<std::string>();
      std::string id = server + "/" + tool.at("name").get<std::string>();
      if (!seen.insert(id).second) throw std::runtime_error("duplicate tool id " + id);
      catalog.documents.push_back(toolmux::search_document_from_tool(tool, server));
      catalog.ids.push_back(std::move(id));
    }
  }
  return catalog;
}

inline std::vector<Query> load_queries(const fs::path& path,
                                       const std::set<std::string>& known_ids) {
  const json doc = read_json(path);
  std::vector<Query> queries;
  std::set<std::string> seen;
  for (const auto& q : doc) {
    Query query{q.at("id").get<std::string>(),
                q.at("kind").get<std::string>(),
                q.at("query").get<std::string>(),
                q.at("split").get<std::string>(),
                {},
                {}};
    if (!seen.insert(query.id).second) throw std::runtime_error("duplicate query id " + query.id);
    for (const auto& r : q.at("relevant")) {
      const std::string id = r.get<std::string>();
      if (!known_ids.count(id)) throw std::runtime_error(query.id + ": unknown tool " + id);
      query.relevant.insert(id);
      if (query.first_relevant.empty()) query.first_relevant = id;
    }
    if (query.relevant.empty()) throw std::runtime_error(query.id + ": no relevant tools");
    queries.push_back(std::move(query));
  }
  return queries;
}

// sources.json: {"<server>": {"title": ..., "description": ...}}, each
// server's own words as its package publishes them.
inline std::vector<toolmux::SourceInfo> load_sources(const fs::path& path) {
  std::vector<toolmux::SourceInfo> sources;
  const json all = read_json(path);
  for (const auto& [name, info] : all.items())
    if (info.is_object())
      sources.push_back({name, info.value("title", ""), info.value("description", "")});
  return sources;
}

// Metrics of one query's ranking.
struct Scores {
  double recall1 = 0, recall5 = 0, mrr10 = 0, ndcg10 = 0;
};

inline Scores score(const std::vector<std::string>& ranked, const std::set<std::string>& relevant) {
  Scores s;
  double dcg = 0;
  std::size_t first = 0;  // 1-based rank of the first relevant hit, 0 = none in the top 10
  for (std::size_t i = 0; i < ranked.size() && i < kLimit; ++i) {
    if (!relevant.count(ranked[i])) continue;
    const double rank = static_cast<double>(i + 1);
    dcg += 1.0 / std::log2(rank + 1.0);
    if (first == 0) first = i + 1;
  }
  double ideal = 0;
  for (std::size_t i = 0; i < std::min(relevant.size(), kLimit); ++i) {
    ideal += 1.0 / std::log2(static_cast<double>(i + 2));
  }
  s.recall1 = (first == 1) ? 1.0 : 0.0;
  s.recall5 = (first >= 1 && first <= 5) ? 1.0 : 0.0;
  s.mrr10 = first ? 1.0 / static_cast<double>(first) : 0.0;
  s.ndcg10 = dcg / ideal;
  return s;
}

}  // namespace search_quality
