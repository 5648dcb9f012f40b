// Search-quality experiments (not product code): builds SearchOptions variants
// and synonym maps (WordNet, hand-written list), pseudo-relevance feedback,
// and evaluates them on the TUNE half of queries.json; `--final a,b,c` then
// reports the named variants on the held-out half once; `--speed N` times
// some variants on the catalog replicated to N tools. See EXPERIMENTS.md in
// this folder.
//
//   search_quality_experiments [--catalog DIR] [--queries FILE] [--synonyms FILE]
//       [--wordnet DIR] [--misses VARIANT] [--final V1,V2,...] [--only PREFIX]
//       [--speed N [--speed-variants V1,V2,...]]
#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool_search_index.h"
#include "bench/search_quality/quality_data.h"

#ifndef TOOLMUX_SQ_DEFAULT_CATALOG
#define TOOLMUX_SQ_DEFAULT_CATALOG "../shared/data/catalog"
#endif
#ifndef TOOLMUX_SQ_DEFAULT_QUERIES
#define TOOLMUX_SQ_DEFAULT_QUERIES "bench/search_quality/queries.json"
#endif
#ifndef TOOLMUX_SQ_DEFAULT_SYNONYMS
#define TOOLMUX_SQ_DEFAULT_SYNONYMS "bench/search_quality/synonyms.json"
#endif

namespace {

using namespace search_quality;

namespace fs = std::filesystem;
using nlohmann::json;
using Synonyms = std::map<std::string, std::vector<std::string>, std::less<>>;

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  std::string w;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      w += static_cast<char>(std::tolower(c));
    } else if (!w.empty()) {
      out.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) out.push_back(std::move(w));
  return out;
}

// ---------------------------------------------------------------- WordNet
struct WordNet {
  // pos -> lemma -> synset offsets (most frequent sense first)
  std::map<char, std::unordered_map<std::string, std::vector<long>>> index;
  std::map<char, std::string> data;  // whole data.<pos> file
  std::map<char, std::unordered_map<std::string, std::string>> exceptions;  // inflected -> base

  explicit WordNet(const fs::path& dir) {
    const std::vector<std::pair<char, std::string>> poses = {{'n', "noun"}, {'v', "verb"}, {'a', "adj"}};
    for (const auto& [p, name] : poses) {
      std::ifstream in(dir / ("index." + name));
      if (!in) throw std::runtime_error("no WordNet under " + dir.string());
      std::string line;
      while (std::getline(in, line)) {
        if (line.empty() || line[0] == ' ') continue;
        std::istringstream ss(line);
        std::string lemma, pos;
        int synset_cnt = 0, p_cnt = 0;
        ss >> lemma >> pos >> synset_cnt >> p_cnt;
        for (int i = 0; i < p_cnt; ++i) { std::string s; ss >> s; }
        int sense_cnt = 0, tagsense = 0;
        ss >> sense_cnt >> tagsense;
        auto& offs = index[p][lemma];
        for (int i = 0; i < synset_cnt; ++i) { long o; ss >> o; offs.push_back(o); }
      }
      std::ifstream d(dir / ("data." + name), std::ios::binary);
      data[p].assign(std::istreambuf_iterator<char>(d), {});
      std::ifstream ex(dir / (name + ".exc"));
      while (std::getline(ex, line)) {
        std::istringstream ss(line);
        std::string a, b;
        ss >> a >> b;
        if (!a.empty() && !b.empty()) exceptions[p].emplace(a, b);
      }
    }
  }
  std::vector<std::string> synset_words(char p, long offset) const {
    const std::string& d = data.at(p);
    const auto end = d.find('\n', static_cast<std::size_t>(offset));
    std::istringstream ss(d.substr(static_cast<std::size_t>(offset), end - static_cast<std::size_t>(offset)));
    std::string off, lex, type, wcnt_hex;
    ss >> off >> lex >> type >> wcnt_hex;
    const int wcnt = std::stoi(wcnt_hex, nullptr, 16);
    std::vector<std::string> words;
    for (int i = 0; i < wcnt; ++i) {
      std::string w, lexid;
      ss >> w >> lexid;
      if (auto paren = w.find('('); paren != std::string::npos) w.erase(paren);  // adj markers
      for (auto& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      words.push_back(w);
    }
    return words;
  }
  // Base forms (a small morphy): exceptions, then detachment rules.
  std::vector<std::string> bases(char p, const std::string& w) const {
    std::vector<std::string> out;
    const auto& idx = index.at(p);
    if (idx.count(w)) out.push_back(w);
    if (auto it = exceptions.at(p).find(w); it != exceptions.at(p).end() && idx.count(it->second)) out.push_back(it->second);
    static const std::map<char, std::vector<std::pair<std::string, std::string>>> rules = {
        {'n', {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"ches", "ch"}, {"shes", "sh"}, {"ies", "y"}}},
        {'v', {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}}},
        {'a', {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}}}};
    if (out.empty()) {
      for (const auto& [suf, rep] : rules.at(p)) {
        if (w.size() > suf.size() + 1 && w.compare(w.size() - suf.size(), suf.size(), suf) == 0) {
          std::string b = w.substr(0, w.size() - suf.size()) + rep;
          if (idx.count(b)) { out.push_back(b); break; }
        }
      }
    }
    return out;
  }
};

const std::set<std::string>& stopwords() {
  static const std::set<std::string> s = {
      "a", "an", "the", "of", "to", "in", "on", "for", "from", "into", "by", "with", "at", "as", "and", "or",
      "is", "are", "was", "be", "it", "its", "it's", "this", "that", "these", "those", "my", "our", "me", "i",
      "you", "your", "what", "which", "who", "how", "when", "why", "do", "did", "does", "so", "all", "every",
      "there", "s", "t", "can", "one", "up", "out", "about", "over", "under", "get", "have", "has", "not", "no",
      "will", "would", "should", "than", "then", "still", "much", "many", "some", "any", "each", "we", "us"};
  return s;
}

// For each word of the queries: the other lemmas of its first `senses`
// synsets (noun and verb, adjectives when `adj`), single words only, kept
// when they occur in the catalog's vocabulary (cat_vocab, lower-case words).
Synonyms wordnet_synonyms(const WordNet& wn, const std::vector<Query>& queries, int senses, bool adj,
                          const std::set<std::string>& cat_vocab) {
  Synonyms out;
  std::set<std::string> qwords;
  for (const auto& q : queries)
    for (auto& w : words_of(q.text)) qwords.insert(w);
  for (const auto& w : qwords) {
    if (stopwords().count(w) || w.size() < 2 || std::isdigit(static_cast<unsigned char>(w[0]))) continue;
    std::set<std::string> syn;
    for (char p : {'n', 'v', 'a'}) {
      if (p == 'a' && !adj) continue;
      for (const auto& base : wn.bases(p, w)) {
        const auto& offs = wn.index.at(p).at(base);
        for (std::size_t i = 0; i < offs.size() && static_cast<int>(i) < senses; ++i) {
          for (auto& lemma : wn.synset_words(p, offs[i])) {
            if (lemma.find('_') != std::string::npos || lemma.find('-') != std::string::npos) continue;
            if (lemma == w || lemma == base || !cat_vocab.count(lemma)) continue;
            syn.insert(lemma);
          }
        }
      }
    }
    if (!syn.empty()) out[w] = std::vector<std::string>(syn.begin(), syn.end());
  }
  return out;
}

Synonyms merge(Synonyms a, const Synonyms& b) {
  for (const auto& [k, v] : b) {
    auto& slot = a[k];
    for (const auto& x : v)
      if (std::find(slot.begin(), slot.end(), x) == slot.end()) slot.push_back(x);
  }
  return a;
}

Synonyms load_synonyms(const fs::path& path) {
  Synonyms s;
  const json j = read_json(path);
  for (const auto& [k, v] : j.at("synonyms").items()) s[k] = v.get<std::vector<std::string>>();
  return s;
}

// ---------------------------------------------------------------- evaluation
struct Variant {
  std::string name;
  toolmux::SearchOptions options;
  double source_boost = 0;  // >0: a query word naming a source multiplies that source's scores by 1+boost
  // Pseudo-relevance feedback (round 2): the terms that weigh most in the top
  // prf_docs hits re-rank the top prf_depth hits (see feedback_rerank).
  std::size_t prf_docs = 0, prf_terms = 0, prf_depth = 100;
  double prf_weight = 0;
};

struct Agg {
  std::size_t n = 0;
  Scores s;
  void add(const Scores& x) { ++n; s.recall1 += x.recall1; s.recall5 += x.recall5; s.mrr10 += x.mrr10; s.ndcg10 += x.ndcg10; }
  double r1() const { return n ? s.recall1 / n : 0; }
  double r5() const { return n ? s.recall5 / n : 0; }
  double mrr() const { return n ? s.mrr10 / n : 0; }
  double ndcg() const { return n ? s.ndcg10 / n : 0; }
};

// Source names a query word can name: each server name, and its parts split on '-' '_'.
std::map<std::string, std::set<std::string>> source_words(const Catalog& c) {
  std::map<std::string, std::set<std::string>> m;
  for (const auto& d : c.documents) {
    m[d.source].insert(d.source);
    for (auto& w : words_of(d.source))
      if (w != "rest") m[w].insert(d.source);
  }
  m["k8s"].insert("kubernetes");
  m["kubectl"].insert("kubernetes");
  m["mongo"].insert("mongodb");
  return m;
}

// Each document as a bag of index terms (name x3, title x2, description,
// parameter names, parameter descriptions x0.5), normalised to sum 1, and
// each term's idf.
struct FeedbackModel {
  std::vector<std::map<std::string, double>> bags;
  std::map<std::string, double> idf;

  explicit FeedbackModel(const toolmux::ToolSearchIndex& index) {
    std::map<std::string, std::size_t> df;
    for (std::size_t d = 0; d < index.size(); ++d) {
      const auto& doc = index.document(d);
      std::map<std::string, double> bag;
      auto add = [&](const std::string& text, bool is_name, double w) {
        for (auto& t : index.analyze(text, is_name)) bag[t] += w;
      };
      add(doc.name, true, 3);
      add(doc.title, false, 2);
      add(doc.description, false, 1);
      for (const auto& [pn, pd] : doc.parameters) {
        add(pn, true, 1);
        add(pd, false, 0.5);
      }
      double total = 0;
      for (auto& [t, w] : bag) total += w;
      for (auto& [t, w] : bag) {
        w /= total;
        ++df[t];
      }
      bags.push_back(std::move(bag));
    }
    const double n = static_cast<double>(index.size());
    for (auto& [t, f] : df) idf[t] = std::log((n - f + 0.5) / (f + 0.5) + 1.0);
  }
};

// RM3-style feedback as a re-ranking: the top prf_docs hits, weighted by
// their scores, give a term distribution (times idf, query terms left out);
// its prf_terms best terms score each of the top prf_depth hits (the share of
// the feedback weight the document has), added at prf_weight x the top score.
void feedback_rerank(const toolmux::ToolSearchIndex& index, const FeedbackModel& model, const Variant& v,
                     const std::string& text, std::vector<toolmux::ToolSearchIndex::Hit>& hits) {
  if (hits.empty()) return;
  std::set<std::string> query_terms;
  for (auto& t : index.analyze(text, true)) query_terms.insert(t);
  std::map<std::string, double> weight;
  double score_sum = 0;
  for (std::size_t i = 0; i < hits.size() && i < v.prf_docs; ++i) score_sum += hits[i].score;
  for (std::size_t i = 0; i < hits.size() && i < v.prf_docs; ++i)
    for (const auto& [t, w] : model.bags[hits[i].document])
      if (!query_terms.count(t)) weight[t] += hits[i].score / score_sum * w * model.idf.at(t);
  std::vector<std::pair<double, std::string>> best;
  for (auto& [t, w] : weight) best.emplace_back(w, t);
  std::sort(best.rbegin(), best.rend());
  if (best.size() > v.prf_terms) best.resize(v.prf_terms);
  double total = 0;
  for (auto& [w, t] : best) total += w;
  if (total <= 0) return;
  const double top_score = hits[0].score;
  for (auto& h : hits) {
    double share = 0;
    const auto& bag = model.bags[h.document];
    for (auto& [w, t] : best)
      if (bag.count(t)) share += w / total;
    h.score += v.prf_weight * top_score * share;
  }
  std::stable_sort(hits.begin(), hits.end(), [](const auto& a, const auto& b) { return a.score > b.score; });
}

std::vector<std::string> ranked_ids(const toolmux::ToolSearchIndex& index, const Catalog& c, const Variant& v,
                                    const std::string& text,
                                    const std::map<std::string, std::set<std::string>>& srcw,
                                    std::vector<std::pair<std::string, double>>* top = nullptr,
                                    const FeedbackModel* feedback = nullptr) {
  std::set<std::string> named;
  if (v.source_boost > 0)
    for (auto& w : words_of(text))
      if (auto it = srcw.find(w); it != srcw.end()) named.insert(it->second.begin(), it->second.end());
  auto hits = index.search(text, named.empty() && !feedback ? kLimit : std::max<std::size_t>(400, v.prf_depth));
  if (feedback) {
    hits.resize(std::min(hits.size(), v.prf_depth));
    feedback_rerank(index, *feedback, v, text, hits);
  }
  if (!named.empty()) {
    for (auto& h : hits)
      if (named.count(index.document(h.document).source)) h.score *= 1.0 + v.source_boost;
    std::stable_sort(hits.begin(), hits.end(), [](const auto& a, const auto& b) { return a.score > b.score; });
    if (hits.size() > kLimit) hits.resize(kLimit);
  }
  std::vector<std::string> ids;
  for (const auto& h : hits) {
    ids.push_back(c.ids[h.document]);
    if (top && top->size() < 5) top->emplace_back(c.ids[h.document], h.score);
  }
  return ids;
}

using Groups = std::map<std::string, Agg>;  // "all", "task", "paraphrase", "keyword"

Groups evaluate(const Variant& v, const Catalog& c, const std::vector<Query>& qs, const std::string& split,
                const std::map<std::string, std::set<std::string>>& srcw, bool show_misses = false) {
  const auto index = toolmux::ToolSearchIndex::build(c.documents, v.options);
  std::unique_ptr<FeedbackModel> feedback;
  if (v.prf_docs > 0) feedback = std::make_unique<FeedbackModel>(*index);
  Groups g;
  for (const auto& q : qs) {
    if (q.split != split) continue;
    std::vector<std::pair<std::string, double>> top;
    const auto s = score(ranked_ids(*index, c, v, q.text, srcw, &top, feedback.get()), q.relevant);
    g["all"].add(s);
    g[q.kind].add(s);
    if (show_misses && s.recall5 == 0) {
      std::printf("%s [%s] \"%s\"\n  want:", q.id.c_str(), q.kind.c_str(), q.text.c_str());
      for (auto& r : q.relevant) std::printf(" %s", r.c_str());
      std::printf("\n");
      for (auto& [id, sc] : top) std::printf("    %-58s %.3f\n", id.c_str(), sc);
    }
  }
  return g;
}

void print_header() {
  std::printf("%-34s | %-11s | %-11s | %-11s | %-11s\n", "variant", "all R5/nDCG", "task", "paraphrase",
              "keyword");
}
void print_row(const std::string& name, const Groups& g) {
  auto cell = [&](const char* k) {
    auto it = g.find(k);
    static char buf[32];
    if (it == g.end()) return std::string("-");
    std::snprintf(buf, sizeof buf, "%.3f/%.3f", it->second.r5(), it->second.ndcg());
    return std::string(buf);
  };
  std::printf("%-34s | %s | %s | %s | %s\n", name.c_str(), cell("all").c_str(), cell("task").c_str(),
              cell("paraphrase").c_str(), cell("keyword").c_str());
  std::fflush(stdout);
}

// CPU time of this thread: on a machine shared with other jobs, less noisy
// than wall time (other processes' load does not count, cache sharing does).
double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Query latency (thread CPU time) of some variants on the catalog replicated to `size` tools
// (renamed copies "<name>_copyN", as bench/search_speed does), every query of
// queries.json (texts only), limit 5: per query the median of 5 runs, then the
// p50 and p99 over queries. Variants take turns run by run, so that load from
// elsewhere on the machine falls on all of them alike.
void time_variants(const std::vector<Variant>& all, const std::string& names, const Catalog& c,
                   const std::vector<Query>& qs, std::size_t size) {
  std::vector<toolmux::SearchDocument> docs;
  docs.reserve(size);
  for (std::size_t i = 0; i < size; ++i) {
    auto d = c.documents[i % c.documents.size()];
    if (const std::size_t copy = i / c.documents.size(); copy > 0) d.name += "_copy" + std::to_string(copy);
    docs.push_back(std::move(d));
  }
  std::vector<const Variant*> chosen;
  std::vector<std::shared_ptr<const toolmux::ToolSearchIndex>> indexes;
  std::stringstream ss(names);
  for (std::string name; std::getline(ss, name, ',');) {
    for (const auto& v : all)
      if (v.name == name) {
        chosen.push_back(&v);
        indexes.push_back(toolmux::ToolSearchIndex::build(docs, v.options));
      }
  }
  constexpr int kRuns = 5;
  std::vector<std::vector<std::vector<double>>> us(chosen.size(), std::vector<std::vector<double>>(qs.size()));
  for (int run = 0; run < kRuns; ++run)
    for (std::size_t q = 0; q < qs.size(); ++q)
      for (std::size_t v = 0; v < chosen.size(); ++v) {
        const double t0 = thread_cpu_us();
        const auto hits = indexes[v]->search(qs[q].text, 5);
        us[v][q].push_back(thread_cpu_us() - t0);
        if (hits.size() > 5) std::abort();
      }
  std::printf("%zu tools, %zu queries x %d runs, limit 5\n", size, qs.size(), kRuns);
  for (std::size_t v = 0; v < chosen.size(); ++v) {
    std::vector<double> medians;
    for (auto& runs : us[v]) {
      std::sort(runs.begin(), runs.end());
      medians.push_back(runs[kRuns / 2]);
    }
    std::sort(medians.begin(), medians.end());
    std::printf("%-34s p50 %7.1f us  p99 %7.1f us  index %.1f MB\n", chosen[v]->name.c_str(),
                medians[medians.size() / 2], medians[medians.size() * 99 / 100],
                static_cast<double>(indexes[v]->memory_bytes()) / 1e6);
  }
}

}  // namespace

int main(int argc, char** argv) {
  fs::path catalog_dir = TOOLMUX_SQ_DEFAULT_CATALOG, queries_path = TOOLMUX_SQ_DEFAULT_QUERIES,
           synonyms_path = TOOLMUX_SQ_DEFAULT_SYNONYMS, wordnet_dir = "/usr/share/wordnet";
  std::string misses_of, final_list, only, dump_wordnet, speed_variants = "default,product";
  std::size_t speed_size = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&] { if (i + 1 >= argc) throw std::runtime_error(a + " needs a value"); return std::string(argv[++i]); };
    if (a == "--catalog") catalog_dir = val();
    else if (a == "--queries") queries_path = val();
    else if (a == "--synonyms") synonyms_path = val();
    else if (a == "--wordnet") wordnet_dir = val();
    else if (a == "--misses") misses_of = val();
    else if (a == "--final") final_list = val();
    else if (a == "--only") only = val();
    else if (a == "--dump-wordnet") dump_wordnet = val();
    else if (a == "--speed") speed_size = std::stoul(val());
    else if (a == "--speed-variants") speed_variants = val();
    else { std::fprintf(stderr, "unknown option %s\n", a.c_str()); return 2; }
  }
  const Catalog c = load_catalog(catalog_dir);
  const auto qs = load_queries(queries_path, std::set<std::string>(c.ids.begin(), c.ids.end()));
  const auto srcw = source_words(c);

  std::set<std::string> cat_vocab;
  for (const auto& d : c.documents) {
    std::string all = d.name + " " + d.title + " " + d.description;
    for (auto& [pn, pd] : d.parameters) all += " " + pn + " " + pd;
    for (auto& e : d.enum_values) all += " " + e;
    // split camelCase too
    std::string split;
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (i && std::isupper(static_cast<unsigned char>(all[i])) && std::islower(static_cast<unsigned char>(all[i - 1]))) split += ' ';
      split += all[i];
    }
    for (auto& w : words_of(split)) cat_vocab.insert(w);
  }

  const WordNet wn(wordnet_dir);
  const Synonyms hand = fs::exists(synonyms_path) ? load_synonyms(synonyms_path) : Synonyms{};
  Synonyms core;  // the generic subset ("core" keys of synonyms.json)
  if (fs::exists(synonyms_path)) {
    const json j = read_json(synonyms_path);
    if (j.contains("core"))
      for (const auto& k : j.at("core")) core[k.get<std::string>()] = hand.at(k.get<std::string>());
  }
  std::map<std::string, Synonyms> wnmaps;
  for (int senses : {1, 2}) {
    wnmaps["wn" + std::to_string(senses)] = wordnet_synonyms(wn, qs, senses, false, cat_vocab);
    wnmaps["wn" + std::to_string(senses) + "a"] = wordnet_synonyms(wn, qs, senses, true, cat_vocab);
  }
  if (!dump_wordnet.empty()) {
    json j = json::object();
    for (auto& [k, v] : wnmaps.at(dump_wordnet)) j[k] = v;
    std::cout << j.dump(1) << "\n";
    return 0;
  }

  std::vector<Variant> vs;
  // Round 1 variants start from the round-1 defaults: SearchOptions{} without
  // the built-in synonyms and without the product's source boost ("default"
  // below). Round 2 variants ("product ...") start from SearchOptions{} as
  // shipped.
  toolmux::SearchOptions def{};
  def.use_default_synonyms = false;
  def.source_boost = 0;
  vs.push_back({"plain_bm25", toolmux::SearchOptions::plain_bm25(), 0});
  vs.push_back({"default", def, 0});
  // 0. Round 2: the product's built-in synonyms and source boost.
  {
    const toolmux::SearchOptions product{};
    vs.push_back({"product", product, 0});
    for (double boost : {0.0, 0.1, 0.25, 0.5, 1.0, 2.0}) {
      auto o = product;
      o.source_boost = boost;
      vs.push_back({"product boost=" + std::to_string(boost).substr(0, 4), o, 0});
    }
    for (double ew : {0.3, 0.4, 0.6, 0.8, 1.0}) {
      auto o = product;
      o.expansion_weight = ew;
      vs.push_back({"product ew=" + std::to_string(ew).substr(0, 3), o, 0});
    }
    auto o = product;
    o.use_default_synonyms = false;
    vs.push_back({"product nosyn", o, 0});
    o.synonyms = core;
    vs.push_back({"product nosyn+core", o, 0});
    o = product;
    o.synonyms = core;
    vs.push_back({"product +core", o, 0});
    // The first draft of the built-in list also expanded the catalog's own
    // commonest words (the slowest to search: their synonyms have the longest
    // posting lists); these four entries were dropped from the shipped list.
    o = product;
    o.synonyms = {{"create", {"add", "new"}},
                  {"get", {"fetch", "read"}},
                  {"search", {"find", "query"}},
                  {"user", {"member", "account"}}};
    vs.push_back({"product +draft entries", o, 0});
    o = product;
    // Pseudo-relevance feedback on top of the shipped defaults.
    for (std::size_t docs : {3, 10})
      for (std::size_t terms : {5, 10, 20})
        for (double w : {0.1, 0.25, 0.5}) {
          Variant prf{"", o, 0};
          prf.prf_docs = docs;
          prf.prf_terms = terms;
          prf.prf_weight = w;
          char name[64];
          std::snprintf(name, sizeof name, "product prf k=%zu m=%zu w=%.2f", docs, terms, w);
          prf.name = name;
          vs.push_back(prf);
        }
  }
  // 1. WordNet
  for (const auto& [wname, map] : wnmaps)
    for (double ew : {0.2, 0.3, 0.4, 0.6}) {
      auto o = def;
      o.synonyms = map;
      o.expansion_weight = ew;
      char n[64];
      std::snprintf(n, sizeof n, "%s ew=%.1f", wname.c_str(), ew);
      vs.push_back({n, o, 0});
    }
  // 2. hand list
  for (double ew : {0.3, 0.4, 0.5, 0.6, 0.8, 1.0}) {
    auto o = def;
    o.synonyms = hand;
    o.expansion_weight = ew;
    char n[64];
    std::snprintf(n, sizeof n, "hand ew=%.1f", ew);
    vs.push_back({n, o, 0});
  }
  for (double ew : {0.5, 0.8, 1.0}) {
    auto o = def;
    o.synonyms = core;
    o.expansion_weight = ew;
    char n[64];
    std::snprintf(n, sizeof n, "core ew=%.1f", ew);
    vs.push_back({n, o, 0});
    std::snprintf(n, sizeof n, "core ew=%.1f srcboost=1.0", ew);
    vs.push_back({n, o, 1.0});
    o.synonyms = hand;
    std::snprintf(n, sizeof n, "hand ew=%.1f srcboost=1.0", ew);
    vs.push_back({n, o, 1.0});
    o.k1 = 1.6;
    std::snprintf(n, sizeof n, "hand ew=%.1f srcboost=1.0 k1=1.6", ew);
    vs.push_back({n, o, 1.0});
  }
  {
    auto o = def;
    o.synonyms = merge(core, wnmaps["wn2"]);
    o.expansion_weight = 0.5;
    vs.push_back({"core+wn2 ew=0.5", o, 0});
  }
  // 3. sweeps (on default, and on hand ew=0.5)
  for (const std::string base : {"", "hand+"}) {
    auto b0 = def;
    if (!base.empty()) { b0.synonyms = hand; b0.expansion_weight = 0.5; }
    auto add = [&](const std::string& n, const toolmux::SearchOptions& o, double boost = 0) { vs.push_back({base + n, o, boost}); };
    for (double w : {1.5, 2.0, 4.0, 5.0}) { auto o = b0; o.name_weight = w; add("name=" + std::to_string(w).substr(0, 3), o); }
    for (double w : {1.0, 3.0}) { auto o = b0; o.title_weight = w; add("title=" + std::to_string(w).substr(0, 3), o); }
    for (double w : {0.5, 1.5, 2.0}) { auto o = b0; o.description_weight = w; add("desc=" + std::to_string(w).substr(0, 3), o); }
    for (double w : {0.5, 2.0}) { auto o = b0; o.parameter_name_weight = w; add("pname=" + std::to_string(w).substr(0, 3), o); }
    for (double w : {0.0, 0.25, 1.0}) { auto o = b0; o.parameter_description_weight = w; add("pdesc=" + std::to_string(w).substr(0, 4), o); }
    for (double w : {0.0, 1.0}) { auto o = b0; o.enum_weight = w; add("enum=" + std::to_string(w).substr(0, 3), o); }
    for (double x : {0.3, 0.5, 0.9, 1.0}) { auto o = b0; o.b = x; add("b=" + std::to_string(x).substr(0, 3), o); }
    for (double x : {0.6, 0.9, 1.6, 2.0}) { auto o = b0; o.k1 = x; add("k1=" + std::to_string(x).substr(0, 3), o); }
    { auto o = b0; o.damp_boilerplate = false; add("damp=off", o); }
    { auto o = b0; o.stem = false; add("stem=off", o); }
    { auto o = b0; o.split_names = false; add("split=off", o); }
    for (double x : {0.25, 0.5, 1.0, 2.0}) add("srcboost=" + std::to_string(x).substr(0, 4), b0, x);
    { auto o = b0; o.damp_boilerplate = false; add("damp=off+srcboost=0.5", o, 0.5); }
  }
  // combos
  {
    auto o = def;
    o.synonyms = merge(hand, wnmaps["wn1"]);
    for (double ew : {0.3, 0.5}) {
      o.expansion_weight = ew;
      vs.push_back({"hand+wn1 ew=" + std::to_string(ew).substr(0, 3), o, 0});
      vs.push_back({"hand+wn1 ew=" + std::to_string(ew).substr(0, 3) + " srcboost=0.5", o, 0.5});
    }
  }

  if (speed_size > 0) {
    time_variants(vs, speed_variants, c, qs, speed_size);
    return 0;
  }

  if (!misses_of.empty()) {
    for (const auto& v : vs)
      if (v.name == misses_of) {
        print_row(v.name, evaluate(v, c, qs, "tune", srcw, true));
        return 0;
      }
    std::fprintf(stderr, "no variant %s\n", misses_of.c_str());
    return 2;
  }

  if (final_list.empty()) {
    std::printf("TUNE split (R@5/nDCG@10)\n");
    print_header();
    for (const auto& v : vs)
      if (only.empty() || v.name.rfind(only, 0) == 0 || v.name == "plain_bm25" || v.name == "default")
        print_row(v.name, evaluate(v, c, qs, "tune", srcw));
    return 0;
  }
  std::set<std::string> chosen;
  std::stringstream ss(final_list);
  for (std::string x; std::getline(ss, x, ',');) chosen.insert(x);
  chosen.insert("plain_bm25");
  chosen.insert("default");
  for (const std::string split : {"tune", "heldout"}) {
    std::printf("\n%s split (R@5/nDCG@10)\n", split.c_str());
    print_header();
    for (const auto& v : vs)
      if (chosen.count(v.name)) {
        const auto g = evaluate(v, c, qs, split, srcw);
        print_row(v.name, g);
        std::printf("%-34s   R@1 %.3f  MRR@10 %.3f\n", "", g.at("all").r1(), g.at("all").mrr());
      }
  }
  return 0;
}
