// Search-quality benchmark for tool_search: loads the real tool catalog and the
// sources' own words (sources.json), builds a CatalogSearch with toolmux's
// configuration (CatalogSearchOptions{}) and with the plain BM25 baseline
// (SearchOptions::plain_bm25(), sources not used), runs every query of
// queries.json (or sealed.json) and prints Recall@1, Recall@5, MRR@10, nDCG@10
// and Source@3 (a relevant tool's source among the first three sources the
// answer names), overall, per kind and per split; with --alternatives, also
// toolmux given each query's alternatives. See README.md in this folder.
// With --replay, learning from use instead (catalog/search_memory.h): the
// tune queries in id order, the first half as earlier sessions (each a
// search, then a call of its first relevant tool) and the second half as
// later ones, scored with and without what the earlier ones taught; then the
// halves swapped.
//
//   search_quality [--catalog DIR] [--queries FILE] [--sources FILE]
//                  [--alternatives FILE] [--split NAME] [--set KEY=VALUE]...
//                  [--show-misses] [--json-only] [--config both|toolmux|plain]
//                  [--replay]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/search_quality/quality_data.h"
#include "catalog/catalog_search.h"
#include "catalog/search_memory.h"
#include "catalog/tool_search_index.h"

#ifndef TOOLMUX_SQ_DEFAULT_CATALOG
#define TOOLMUX_SQ_DEFAULT_CATALOG "../shared/data/catalog"
#endif
#ifndef TOOLMUX_SQ_DEFAULT_SOURCES
#define TOOLMUX_SQ_DEFAULT_SOURCES "bench/search_quality/sources.json"
#endif
#ifndef TOOLMUX_SQ_DEFAULT_QUERIES
#define TOOLMUX_SQ_DEFAULT_QUERIES "bench/search_quality/queries.json"
#endif

namespace {

using namespace search_quality;

namespace fs = std::filesystem;
using nlohmann::json;

struct Aggregate {
  std::size_t n = 0;
  Scores sum;
  double source3 = 0;
  void add(const Scores& s, bool source_found) {
    ++n;
    source3 += source_found ? 1.0 : 0.0;
    sum.recall1 += s.recall1;
    sum.recall5 += s.recall5;
    sum.mrr10 += s.mrr10;
    sum.ndcg10 += s.ndcg10;
  }
  double mean(double Scores::*field) const { return n ? sum.*field / static_cast<double>(n) : 0.0; }
  json to_json() const {
    return json{{"n", n},
                {"recall@1", mean(&Scores::recall1)},
                {"recall@5", mean(&Scores::recall5)},
                {"mrr@10", mean(&Scores::mrr10)},
                {"ndcg@10", mean(&Scores::ndcg10)},
                {"source@3", n ? source3 / static_cast<double>(n) : 0.0}};
  }
};

struct Miss {
  const Query* query;
  std::vector<std::pair<std::string, double>> top;  // what came back (top 5)
  std::size_t first_relevant;                       // 1-based within the top 10, 0 = none
};

struct RunResult {
  std::string name;
  std::vector<std::pair<std::string, Aggregate>> groups;  // in print order
  std::vector<Miss> misses;
  double build_ms = 0;
  double query_us = 0;  // mean per query
  std::size_t memory_bytes = 0;
};

using Alternatives = std::map<std::string, std::vector<std::string>>;

// What a run learns from use: searches with `memory`, and with `learn`, a
// call of each query's first relevant tool after its search is scored.
struct Learning {
  toolmux::SearchMemory* memory = nullptr;
  bool learn = false;
};

// The click a query's session would make: its first relevant tool, by the
// name a call uses.
void click(toolmux::SearchMemory& memory, const Query& q) {
  memory.record(toolmux::SearchMemory::terms(q.text),
                q.first_relevant.substr(q.first_relevant.find('/') + 1));
}

RunResult run(const std::string& name, const toolmux::CatalogSearchOptions& options,
              const Catalog& catalog, const std::vector<toolmux::SourceInfo>& sources,
              const std::vector<Query>& queries, const Alternatives* alternatives,
              Learning learning = {}) {
  RunResult result;
  result.name = name;
  const auto t0 = std::chrono::steady_clock::now();
  const auto search = toolmux::CatalogSearch::build(catalog.documents, sources, options);
  const auto t1 = std::chrono::steady_clock::now();
  result.build_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  result.memory_bytes = search->memory_bytes();

  const std::vector<std::string> group_names = {
      "all",          "kind=task",     "kind=paraphrase",    "kind=keyword",
      "split=tune",   "split=heldout", "tune/task",          "tune/paraphrase",
      "tune/keyword", "heldout/task",  "heldout/paraphrase", "heldout/keyword"};
  std::map<std::string, Aggregate> groups;
  double query_seconds = 0;
  for (const auto& q : queries) {
    toolmux::CatalogSearchRequest request;
    request.query = q.text;
    request.limit = kLimit;
    request.memory = learning.memory;
    if (alternatives) {
      auto it = alternatives->find(q.id);
      if (it == alternatives->end()) throw std::runtime_error(q.id + ": no alternatives");
      request.alternatives = it->second;
    }
    const auto s0 = std::chrono::steady_clock::now();
    const auto answer = search->search(request);
    query_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    const auto& hits = answer.hits;
    std::set<std::string> wanted_sources;
    for (const auto& id : q.relevant) wanted_sources.insert(id.substr(0, id.find('/')));
    bool source_found = false;
    std::size_t named = 0;
    for (const auto& match : answer.sources) {
      if (match.id.find('/') != std::string::npos) continue;  // a group
      if (++named > 3) break;
      source_found = source_found || wanted_sources.count(match.id) > 0;
    }
    std::vector<std::string> ranked;
    ranked.reserve(hits.size());
    for (const auto& h : hits) ranked.push_back(catalog.ids.at(h.document));
    const Scores s = score(ranked, q.relevant);
    if (learning.memory && learning.learn) click(*learning.memory, q);
    for (const std::string& g :
         {std::string("all"), "kind=" + q.kind, "split=" + q.split, q.split + "/" + q.kind,
          std::string("confidence=") + toolmux::to_string(answer.confidence)}) {
      groups[g].add(s, source_found);
    }
    if (s.recall5 == 0.0) {
      Miss m{&q, {}, 0};
      for (std::size_t i = 0; i < hits.size(); ++i) {
        if (i < 5) m.top.emplace_back(ranked[i], hits[i].score);
        if (!m.first_relevant && q.relevant.count(ranked[i])) m.first_relevant = i + 1;
      }
      result.misses.push_back(std::move(m));
    }
  }
  result.query_us = queries.empty() ? 0 : query_seconds * 1e6 / static_cast<double>(queries.size());
  for (const auto& g : group_names) {
    if (groups.count(g)) result.groups.emplace_back(g, groups[g]);
  }
  for (const auto& [g, agg] : groups) {  // any kind/split outside the usual names
    if (std::find(group_names.begin(), group_names.end(), g) == group_names.end())
      result.groups.emplace_back(g, agg);
  }
  return result;
}

// `overall_only`: the rows of all queries and of each kind.
void print_table(const std::vector<RunResult>& results, bool overall_only = false) {
  std::printf("%-20s %-24s %5s %8s %8s %8s %8s %8s\n", "group", "config", "n", "R@1", "R@5",
              "MRR@10", "nDCG@10", "Source@3");
  std::vector<std::string> rows;
  for (const auto& r : results) {
    for (const auto& group : r.groups)
      if (std::find(rows.begin(), rows.end(), group.first) == rows.end() &&
          (!overall_only || group.first == "all" || group.first.rfind("kind=", 0) == 0))
        rows.push_back(group.first);
  }
  for (const auto& g : rows) {
    for (const auto& r : results) {
      Aggregate agg;
      for (const auto& group : r.groups)
        if (group.first == g) agg = group.second;
      std::printf("%-20s %-24s %5zu %8.3f %8.3f %8.3f %8.3f %8.3f\n", g.c_str(), r.name.c_str(),
                  agg.n, agg.mean(&Scores::recall1), agg.mean(&Scores::recall5),
                  agg.mean(&Scores::mrr10), agg.mean(&Scores::ndcg10),
                  agg.n ? agg.source3 / static_cast<double>(agg.n) : 0.0);
    }
  }
  for (const auto& r : results) {
    std::printf(
        "%s: build %.1f ms, %.1f us/query, index %.2f MiB, %zu queries missing from the top 5\n",
        r.name.c_str(), r.build_ms, r.query_us,
        static_cast<double>(r.memory_bytes) / (1024.0 * 1024.0), r.misses.size());
  }
}

void print_misses(const RunResult& r) {
  std::printf("\n== %s: %zu queries with no relevant tool in the top 5\n", r.name.c_str(),
              r.misses.size());
  for (const auto& m : r.misses) {
    std::printf("%s [%s/%s] \"%s\"\n", m.query->id.c_str(), m.query->kind.c_str(),
                m.query->split.c_str(), m.query->text.c_str());
    std::string want;
    for (const auto& id : m.query->relevant) want += (want.empty() ? "" : ", ") + id;
    std::printf("  want: %s\n", want.c_str());
    if (m.first_relevant) {
      std::printf("  first relevant at rank %zu\n", m.first_relevant);
    } else {
      std::printf("  no relevant tool in the top %zu\n", kLimit);
    }
    if (m.top.empty()) std::printf("  got: nothing\n");
    for (std::size_t i = 0; i < m.top.size(); ++i) {
      std::printf("  %zu. %-60s %.3f\n", i + 1, m.top[i].first.c_str(), m.top[i].second);
    }
  }
}

int usage(const char* argv0) {
  std::fprintf(
      stderr,
      "usage: %s [--catalog DIR] [--queries FILE] [--sources FILE] [--alternatives FILE]\n"
      "          [--split NAME] [--set KEY=VALUE]... [--show-misses] [--json-only]\n"
      "          [--config both|toolmux|plain] [--replay]\n"
      "KEY: source_prior, source_b, include_tools, group_threshold, rrf_k, fusion_depth,\n"
      "     query_weight, high_confidence, expansion_weight, cap_synonym_idf, source_boost,\n"
      "     learned_weight, learned_pull\n"
      "defaults: --catalog %s\n          --queries %s\n",
      argv0, TOOLMUX_SQ_DEFAULT_CATALOG, TOOLMUX_SQ_DEFAULT_QUERIES);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path catalog_dir = TOOLMUX_SQ_DEFAULT_CATALOG;
  fs::path queries_path = TOOLMUX_SQ_DEFAULT_QUERIES;
  bool show_misses = false;
  bool json_only = false;
  std::string config = "both";
  fs::path sources_path = TOOLMUX_SQ_DEFAULT_SOURCES;
  fs::path alternatives_path;
  std::string split;
  bool replay = false;
  toolmux::CatalogSearchOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(std::string(arg) + " needs a value");
      return argv[++i];
    };
    try {
      if (arg == "--catalog") {
        catalog_dir = value();
      } else if (arg == "--queries") {
        queries_path = value();
      } else if (arg == "--show-misses") {
        show_misses = true;
      } else if (arg == "--json-only") {
        json_only = true;
      } else if (arg == "--sources") {
        sources_path = value();
      } else if (arg == "--alternatives") {
        alternatives_path = value();
      } else if (arg == "--split") {
        split = value();
      } else if (arg == "--set") {
        const std::string setting = value();
        const auto eq = setting.find('=');
        if (eq == std::string::npos) throw std::runtime_error("--set needs KEY=VALUE");
        const std::string key = setting.substr(0, eq);
        const double v = std::stod(setting.substr(eq + 1));
        if (key == "source_prior")
          options.source_prior = v;
        else if (key == "prior_alternatives")
          options.source_prior_alternatives = v;
        else if (key == "source_b")
          options.source_b = v;
        else if (key == "from_hits")
          options.source_from_hits = v;
        else if (key == "source_hits")
          options.source_hits = static_cast<std::size_t>(v);
        else if (key == "hit_count")
          options.source_hit_count = static_cast<std::size_t>(v);
        else if (key == "source_text_weight")
          options.tools.source_text_weight = v;
        else if (key == "include_descriptions")
          options.source_documents_include_descriptions = v != 0;
        else if (key == "include_tools")
          options.source_documents_include_tools = v != 0;
        else if (key == "group_threshold")
          options.group_threshold = static_cast<std::size_t>(v);
        else if (key == "rrf_k")
          options.rrf_k = v;
        else if (key == "fusion_depth")
          options.fusion_depth = static_cast<std::size_t>(v);
        else if (key == "query_weight")
          options.query_weight = v;
        else if (key == "high_confidence")
          options.high_confidence = v;
        else if (key == "expansion_weight")
          options.tools.expansion_weight = v;
        else if (key == "cap_synonym_idf")
          options.tools.cap_synonym_idf = v != 0;
        else if (key == "source_boost")
          options.tools.source_boost = v;
        else if (key == "learned_weight")
          options.learned_weight = v;
        else if (key == "learned_pull")
          options.learned_pull = v;
        else
          throw std::runtime_error("unknown --set key " + key);
      } else if (arg == "--replay") {
        replay = true;
      } else if (arg == "--config") {
        config = value();
        if (config != "both" && config != "toolmux" && config != "plain") return usage(argv[0]);
      } else {
        return usage(argv[0]);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return usage(argv[0]);
    }
  }

  try {
    const Catalog catalog = load_catalog(catalog_dir);
    const std::set<std::string> known(catalog.ids.begin(), catalog.ids.end());
    std::vector<Query> queries = load_queries(queries_path, known);
    if (!split.empty()) {
      std::erase_if(queries, [&](const Query& q) { return q.split != split; });
      if (queries.empty()) throw std::runtime_error("no query of split " + split);
    }
    const std::vector<toolmux::SourceInfo> sources = load_sources(sources_path);
    Alternatives alternatives;
    if (!alternatives_path.empty()) {
      const json all = read_json(alternatives_path);
      for (const auto& [id, list] : all.items())
        alternatives[id] = list.get<std::vector<std::string>>();
    }

    std::vector<RunResult> results;
    if (replay) {
      // Only the tune queries: never the held-out half, never the sealed set.
      std::vector<Query> tune;
      for (const auto& q : queries)
        if (q.split == "tune") tune.push_back(q);
      if (tune.empty())
        throw std::runtime_error("--replay uses the tune queries, and there are none");
      std::sort(tune.begin(), tune.end(),
                [](const Query& x, const Query& y) { return x.id < y.id; });
      const auto middle = tune.begin() + static_cast<std::ptrdiff_t>((tune.size() + 1) / 2);
      const std::vector<Query> first(tune.begin(), middle);
      const std::vector<Query> second(middle, tune.end());
      for (const auto& [order, earlier, later] :
           {std::tuple{"", &first, &second}, std::tuple{"swapped ", &second, &first}}) {
        const std::string tag = std::string(order);
        // The earlier sessions: each searched, then called its tool.
        toolmux::SearchMemory memory;
        for (const auto& q : *earlier) click(memory, q);
        results.push_back(run(tag + "later", options, catalog, sources, *later, nullptr));
        results.push_back(run(tag + "later+memory", options, catalog, sources, *later, nullptr,
                              {&memory, false}));
        // Learning goes on during the later sessions too.
        toolmux::SearchMemory online;
        for (const auto& q : *earlier) click(online, q);
        results.push_back(
            run(tag + "later+online", options, catalog, sources, *later, nullptr, {&online, true}));
        // The earlier queries asked again: what the memory does when words recur.
        results.push_back(run(tag + "again", options, catalog, sources, *earlier, nullptr));
        results.push_back(run(tag + "again+memory", options, catalog, sources, *earlier, nullptr,
                              {&memory, false}));
        if (alternatives.empty()) continue;
        // Besides the earlier sessions, others that had the later sessions' needs
        // in other words: each alternative phrasing of a later query, searched,
        // then its tool called.
        toolmux::SearchMemory rephrased;
        for (const auto& q : *earlier) click(rephrased, q);
        for (const auto& q : *later) {
          auto it = alternatives.find(q.id);
          if (it == alternatives.end()) throw std::runtime_error(q.id + ": no alternatives");
          for (const auto& text : it->second) {
            Query other = q;
            other.text = text;
            click(rephrased, other);
          }
        }
        results.push_back(run(tag + "later+rephrased", options, catalog, sources, *later, nullptr,
                              {&rephrased, false}));
      }
    }
    if (!replay && config != "toolmux") {
      toolmux::CatalogSearchOptions plain;
      plain.tools = toolmux::SearchOptions::plain_bm25();
      plain.source_prior = 0;
      results.push_back(run("plain_bm25", plain, catalog, {}, queries, nullptr));
    }
    if (!replay && config != "plain") {
      results.push_back(run("toolmux", options, catalog, sources, queries, nullptr));
      if (!alternatives.empty())
        results.push_back(run("toolmux+alts", options, catalog, sources, queries, &alternatives));
    }

    if (!json_only) {
      std::printf("%zu tools, %zu queries (catalog %s)\n\n", catalog.documents.size(),
                  queries.size(), catalog_dir.string().c_str());
      print_table(results, replay);
      if (show_misses) {
        for (const auto& r : results) print_misses(r);
      }
      std::printf("\n");
    }
    json line{{"tools", catalog.documents.size()}, {"queries", queries.size()}};
    for (const auto& r : results) {
      json groups = json::object();
      for (const auto& [g, agg] : r.groups) groups[g] = agg.to_json();
      line[r.name] = {{"groups", groups},
                      {"build_ms", r.build_ms},
                      {"query_us", r.query_us},
                      {"memory_bytes", r.memory_bytes}};
    }
    std::cout << line.dump() << std::endl;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "search_quality: %s\n", e.what());
    return 1;
  }
  return 0;
}
