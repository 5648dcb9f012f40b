// search_speed: how fast the tool search index builds and answers, on the real
// catalog (every JSON file of a folder: arrays of {server, name, description,
// inputSchema}) replicated to 1k, 10k and 100k tools, beside SQLite FTS5 (the
// peer, fts5_peer.h) on the same documents and queries in the same run. See
// README.md.
//
//   search_speed [CATALOG_DIR] [--sizes 1000,10000,100000] [--repeat 5] [--no-optimize]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/search_speed/fts5_peer.h"
#include "catalog/catalog_search.h"
#include "catalog/tool_search_index.h"

using namespace toolmux;
using nlohmann::json;
using toolmux::bench::Fts5Peer;
using Clock = std::chrono::steady_clock;

namespace {

// A fixed mix of what a model might ask for, over the catalog's domains.
const char* const kQueries[] = {
    // GitHub
    "create a github issue", "list open issues in a repository", "comment on an issue",
    "close an issue", "open a pull request", "merge a pull request", "review a pull request",
    "list pull requests", "get the diff of a pull request", "create a branch",
    "list branches of a repository", "get file contents from a repository",
    "push files to a repository", "create a new repository", "fork a repository",
    "search code on github", "search repositories", "search users", "list commits", "get a commit",
    "create a release", "list releases", "list workflow runs", "rerun a failed workflow",
    "download workflow artifacts", "add a label to an issue", "assign an issue to a user",
    "list collaborators", "add a collaborator", "create a gist", "star a repository",
    "list notifications", "get the authenticated user", "create a webhook",
    "delete a branch protection rule", "list deploy keys", "create a tag", "compare two commits",
    "list organization members", "create a team", "get repository topics", "update a milestone",
    "list code scanning alerts", "dependabot alerts", "list secrets for actions",
    // Twilio
    "send an sms", "send a text message", "send a whatsapp message", "make a phone call",
    "list phone numbers", "buy a phone number", "list messages", "get call logs",
    "create a conference", "record a call", "verify a phone number", "send a verification code",
    "check a verification code", "create a messaging service", "list recordings",
    "delete a recording", "create a sip domain", "list queues", "transcribe a recording",
    "look up a phone number", "create a chat conversation", "add a participant to a conversation",
    "send an email", "create a flex workflow", "list sip trunks", "create a video room",
    "list usage records", "create an api key", "list subaccounts", "update a webhook url",
    "send a fax", "list short codes", "create a task queue", "list workers",
    "create a sync document", "get account balance", "list alerts", "create a studio flow",
    "list available phone numbers in a country", "port a phone number",
    // Browser (playwright, chrome devtools)
    "take a screenshot of the page", "navigate to a url", "click a button", "fill in a form",
    "type text into an input", "press a key", "go back to the previous page", "open a new tab",
    "close the browser", "wait for text to appear", "get the page snapshot",
    "evaluate javascript on the page", "upload a file", "select an option in a dropdown",
    "hover over an element", "drag and drop", "list network requests", "get console messages",
    "resize the browser window", "handle a dialog", "save the page as pdf",
    "record a performance trace", "emulate a slow network", "emulate a mobile device",
    "list open pages", "scroll down", "get cookies", "run a lighthouse audit", "inspect an element",
    "take a heap snapshot",
    // MongoDB
    "list databases", "list collections", "find documents in a collection", "insert a document",
    "update many documents", "delete documents", "run an aggregation pipeline", "create an index",
    "count documents", "get collection schema", "drop a collection", "explain a query plan",
    "connect to a mongodb cluster", "list atlas clusters", "create a database user",
    // Notion
    "search notion pages", "create a notion page", "query a database", "append blocks to a page",
    "get a page", "update page properties", "list users in the workspace", "retrieve a block",
    "add a comment to a page", "create a database",
    // Kubernetes
    "list kubernetes pods", "get pod logs", "describe a deployment", "scale a deployment",
    "delete a pod", "list namespaces", "apply a manifest", "port forward to a pod",
    "install a helm chart", "list services", "get events", "exec a command in a container",
    "rollout restart a deployment", "list nodes", "create a configmap",
    // Sentry
    "list sentry issues", "get error details", "find the stack trace of an error", "list projects",
    "resolve an issue in sentry", "search events", "list releases in sentry",
    "get the latest errors", "create a sentry project", "analyze an issue with seer",
    // Filesystem
    "read a file", "write a file", "edit a text file", "list directory contents",
    "create a directory", "move a file", "search for files", "get file info", "read multiple files",
    "show the directory tree", "list allowed directories", "read an image file", "delete a file",
    "rename a file", "find files by pattern",
    // Memory, Slack, everything
    "create entities in the knowledge graph", "add observations", "delete relations",
    "search the knowledge graph", "read the whole graph", "post a message to a slack channel",
    "reply in a thread", "add a reaction", "list slack channels", "get channel history",
    "get user profile", "echo a message", "add two numbers", "long running operation",
    "get a sample image", "print environment variables",
    // Short, vague and odd ones
    "issue", "message", "screenshot", "pods", "files", "users", "delete", "list", "webhooks",
    "getHTTPResponse", "list_issues", "listissues", "sms", "k8s logs", "how do I deploy my app",
    "translate text to french", "weather forecast", "xyzzy plugh", "billing invoices",
    "rate limit status", "audit log", "ssh keys", "oauth token", "download a file from a url",
    "convert markdown to html", "schedule a meeting"};

struct Tool {
  std::string source;
  json definition;
};

std::vector<Tool> load_catalog(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<Tool> tools;
  for (const auto& file : files) {
    std::ifstream in(file);
    json tools_json = json::parse(in);
    for (auto& tool : tools_json) {
      std::string source = tool.value("server", file.stem().string());
      tools.push_back({std::move(source), std::move(tool)});
    }
  }
  return tools;
}

// `size` documents: the catalog, then renamed copies ("<name>_copyN").
std::vector<SearchDocument> replicate(const std::vector<Tool>& tools, std::size_t size) {
  std::vector<SearchDocument> documents;
  documents.reserve(size);
  for (std::size_t i = 0; i < size; ++i) {
    const Tool& tool = tools[i % tools.size()];
    SearchDocument d = search_document_from_tool(tool.definition, tool.source);
    if (const std::size_t copy = i / tools.size(); copy > 0)
      d.name += "_copy" + std::to_string(copy);
    documents.push_back(std::move(d));
  }
  return documents;
}

// Resident set size of this process, in bytes (Linux).
std::size_t rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      std::size_t kb = 0;
      fields >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto at =
      static_cast<std::size_t>(std::llround(p * static_cast<double>(values.size() - 1)));
  return values[std::min(at, values.size() - 1)];
}

// What one engine gave at one size.
struct Measure {
  double build_ms = 0;
  std::size_t memory_bytes = 0;  // toolmux: memory_bytes(); FTS5: sqlite3_memory_used() growth
  long long rss_growth_bytes = 0;
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;
  double mean_hits = 0;
  std::vector<double> latencies;              // every timed call
  std::vector<std::vector<double>> by_query;  // the same, per query
  std::size_t hits = 0;                       // results of the warm-up round

  template <class Search>
  void time(std::size_t query, Search&& search) {
    const auto t0 = Clock::now();
    const std::size_t found = search();
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (found > 5) throw std::logic_error("more results than the limit");
    latencies.push_back(us);
    by_query[query].push_back(us);
  }

  void summarize(std::size_t queries) {
    p50_us = percentile(latencies, 0.5);
    p99_us = percentile(latencies, 0.99);
    max_us = *std::max_element(latencies.begin(), latencies.end());
    mean_hits = static_cast<double>(hits) / static_cast<double>(queries);
  }

  // The slowest queries (by their median), to see what the tail is made of.
  void print_slowest(const char* engine, std::size_t size,
                     const std::vector<std::string>& queries) const {
    std::vector<std::pair<double, std::size_t>> medians;
    for (std::size_t q = 0; q < queries.size(); ++q)
      medians.emplace_back(percentile(by_query[q], 0.5), q);
    std::sort(medians.rbegin(), medians.rend());
    std::cout << size << " tools, " << engine << ", slowest queries (median us):";
    for (std::size_t k = 0; k < 3 && k < medians.size(); ++k)
      std::cout << " \"" << queries[medians[k].second] << "\" " << medians[k].first;
    std::cout << "\n";
  }

  json to_json() const {
    return {{"build_ms", build_ms},
            {"memory_bytes", memory_bytes},
            {"rss_growth_bytes", rss_growth_bytes},
            {"p50_us", p50_us},
            {"p99_us", p99_us},
            {"max_us", max_us},
            {"mean_hits", mean_hits}};
  }
};

struct Result {
  std::size_t tools = 0;
  Measure toolmux;
  Measure fts5;     // every word of the query
  Measure fts5_ns;  // the same table, the query's stop words dropped as the index drops them
  double fts5_insert_ms = 0;
  double fts5_optimize_ms = 0;
  std::size_t fts5_peak_bytes = 0;  // sqlite3_memory_highwater() growth during the build
};

// bm25() column weights from the index's defaults; FTS5 has one column for the
// parameters, weighted as the mean of the names' and the descriptions' weights.
toolmux::bench::Fts5Weights fts5_weights() {
  const SearchOptions o;
  return {o.name_weight, o.title_weight, o.description_weight,
          (o.parameter_name_weight + o.parameter_description_weight) / 2, o.enum_weight};
}

// `query` without the words the index drops as stop words ("a", "the", "to"...):
// those whose analysis as running text gives no term.
std::string without_stop_words(const ToolSearchIndex& index, const std::string& query) {
  std::istringstream words(query);
  std::string kept;
  std::string word;
  while (words >> word) {
    if (index.analyze(word, false).empty()) continue;
    if (!kept.empty()) kept += ' ';
    kept += word;
  }
  return kept;
}

long long growth(std::size_t before, std::size_t after) {
  return static_cast<long long>(after) - static_cast<long long>(before);
}

Result measure(const std::vector<Tool>& tools, std::size_t size,
               const std::vector<std::string>& queries, int repeat, bool optimize) {
  Result result;
  result.tools = size;
  const std::vector<SearchDocument> documents = replicate(tools, size);

  // toolmux: RSS from before its copy of the documents, which the index keeps.
  std::size_t rss_before = rss_bytes();
  std::vector<SearchDocument> copy = documents;
  auto start = Clock::now();
  // What tool_search searches: the tools and their sources (and the groups of
  // the large ones), asked as tool_search asks a catalog without access rules
  // (sources only when unsure; one more hit, tool_search's own, dropped after).
  auto search = CatalogSearch::build(std::move(copy), {});
  result.toolmux.build_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  result.toolmux.rss_growth_bytes = growth(rss_before, rss_bytes());
  result.toolmux.memory_bytes = search->memory_bytes();
  const ToolSearchIndex* index = &search->tools();
  auto allowed = [index](std::size_t d) { return index->document(d).name != "tool_search"; };
  auto ask = [&](const std::string& query) {
    CatalogSearchRequest request;
    request.query = query;
    request.limit = 6;
    request.sources = CatalogSearchRequest::Sources::when_unsure;
    const auto hits = search->search(request).hits;
    std::size_t kept = 0;
    for (const auto& hit : hits) kept += kept < 5 && allowed(hit.document) ? 1 : 0;
    return kept;
  };

  // FTS5: the database holds its own copy of the text (the FTS5 content table).
  const std::size_t sqlite_before = Fts5Peer::sqlite_memory_used();
  Fts5Peer::sqlite_memory_highwater(true);
  rss_before = rss_bytes();
  Fts5Peer peer(documents, fts5_weights(), optimize);
  result.fts5.rss_growth_bytes = growth(rss_before, rss_bytes());
  result.fts5_insert_ms = peer.insert_ms();
  result.fts5_optimize_ms = peer.optimize_ms();
  result.fts5.build_ms = peer.insert_ms() + peer.optimize_ms();
  result.fts5.memory_bytes =
      static_cast<std::size_t>(growth(sqlite_before, Fts5Peer::sqlite_memory_used()));
  result.fts5_peak_bytes =
      static_cast<std::size_t>(growth(sqlite_before, Fts5Peer::sqlite_memory_highwater(false)));

  // The FTS5 query strings are made once, outside the timing (as the index's
  // query parsing is inside it: a few hundred ns either way).
  std::vector<std::string> matches;
  std::vector<std::string> matches_ns;
  for (const auto& query : queries) {
    matches.push_back(Fts5Peer::match_expression(query));
    matches_ns.push_back(Fts5Peer::match_expression(without_stop_words(*index, query)));
  }
  std::vector<std::int64_t> rows;
  for (std::size_t q = 0; q < queries.size(); ++q) {  // warm up
    result.toolmux.hits += ask(queries[q]);
    peer.search(matches[q], 5, rows);
    result.fts5.hits += rows.size();
    peer.search(matches_ns[q], 5, rows);
    result.fts5_ns.hits += rows.size();
  }
  for (Measure* m : {&result.toolmux, &result.fts5, &result.fts5_ns}) {
    m->latencies.reserve(queries.size() * static_cast<std::size_t>(repeat));
    m->by_query.resize(queries.size());
  }
  // The engines take turns, a round of every query each, so that a burst of
  // load on the machine falls on both.
  for (int r = 0; r < repeat; ++r) {
    for (std::size_t q = 0; q < queries.size(); ++q)
      result.toolmux.time(q, [&] { return ask(queries[q]); });
    for (std::size_t q = 0; q < queries.size(); ++q)
      result.fts5.time(q, [&] {
        peer.search(matches[q], 5, rows);
        return rows.size();
      });
    for (std::size_t q = 0; q < queries.size(); ++q)
      result.fts5_ns.time(q, [&] {
        peer.search(matches_ns[q], 5, rows);
        return rows.size();
      });
  }
  result.fts5_ns.build_ms = result.fts5.build_ms;
  result.fts5_ns.memory_bytes = result.fts5.memory_bytes;
  result.fts5_ns.rss_growth_bytes = result.fts5.rss_growth_bytes;
  for (auto [m, engine] : {std::pair{&result.toolmux, "toolmux"}, std::pair{&result.fts5, "fts5"},
                           std::pair{&result.fts5_ns, "fts5-ns"}}) {
    m->summarize(queries.size());
    m->print_slowest(engine, size, queries);
  }
  return result;
}

void print_row(std::size_t tools, const char* engine, const Measure& m) {
  std::printf("%8zu %-8s %10.1f %10.1f %9.1f %9.1f %9.1f %9.1f %6.2f\n", tools, engine, m.build_ms,
              static_cast<double>(m.memory_bytes) / 1e6,
              static_cast<double>(m.rss_growth_bytes) / 1e6, m.p50_us, m.p99_us, m.max_us,
              m.mean_hits);
}

double ratio(double toolmux, double peer) { return peer > 0 ? toolmux / peer : 0; }

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path dir = SEARCH_SPEED_DEFAULT_CATALOG;
  std::vector<std::size_t> sizes = {1000, 10000, 100000};
  int repeat = 5;
  bool optimize = true;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::istringstream list(argv[++i]);
      std::string item;
      while (std::getline(list, item, ',')) sizes.push_back(std::stoul(item));
    } else if (arg == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::stoi(argv[++i]));
    } else if (arg == "--no-optimize") {
      optimize = false;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << "usage: search_speed [CATALOG_DIR] [--sizes 1000,10000,100000] [--repeat 5]"
                   " [--no-optimize]\n";
      return 0;
    } else {
      dir = arg;
    }
  }

  std::vector<Tool> tools;
  try {
    tools = load_catalog(dir);
  } catch (const std::exception& e) {
    std::cerr << "search_speed: cannot load " << dir << ": " << e.what() << "\n";
    return 1;
  }
  if (tools.empty()) {
    std::cerr << "search_speed: no tools in " << dir << "\n";
    return 1;
  }
  const std::vector<std::string> queries(std::begin(kQueries), std::end(kQueries));
  std::cout << "catalog: " << tools.size() << " tools from " << dir.string() << "; "
            << queries.size() << " queries x " << repeat << " runs, limit 5; peer: SQLite "
            << Fts5Peer::sqlite_version() << " FTS5"
            << (optimize ? " (build includes 'optimize')" : " (no 'optimize')") << "\n\n";

  std::vector<Result> results;
  try {
    for (std::size_t size : sizes)
      results.push_back(measure(tools, size, queries, repeat, optimize));
  } catch (const std::exception& e) {
    std::cerr << "search_speed: " << e.what() << "\n";
    return 1;
  }

  std::printf("\n%8s %-8s %10s %10s %9s %9s %9s %9s %6s\n", "tools", "engine", "build ms",
              "memory MB", "RSS+ MB", "p50 us", "p99 us", "max us", "hits");
  for (const Result& r : results) {
    print_row(r.tools, "toolmux", r.toolmux);
    print_row(r.tools, "fts5", r.fts5);
    print_row(r.tools, "fts5-ns", r.fts5_ns);
    for (auto [peer, label] : {std::pair{&r.fts5, "/fts5"}, std::pair{&r.fts5_ns, "/fts5-ns"}})
      std::printf("%8zu %-8s %10.3g %10.3g %9s %9.3g %9.3g %9.3g\n", r.tools, label,
                  ratio(r.toolmux.build_ms, peer->build_ms),
                  ratio(static_cast<double>(r.toolmux.memory_bytes),
                        static_cast<double>(peer->memory_bytes)),
                  "", ratio(r.toolmux.p50_us, peer->p50_us), ratio(r.toolmux.p99_us, peer->p99_us),
                  ratio(r.toolmux.max_us, peer->max_us));
  }
  std::printf(
      "/fts5, /fts5-ns: toolmux divided by the peer (below 1: toolmux is faster or smaller);\n"
      "fts5-ns: the same table, the query's stop words dropped as toolmux drops them\n");
  for (const Result& r : results)
    std::printf("fts5 at %zu tools: inserts %.1f ms + optimize %.1f ms; peak %.1f MB\n", r.tools,
                r.fts5_insert_ms, r.fts5_optimize_ms, static_cast<double>(r.fts5_peak_bytes) / 1e6);

  json line = json::array();
  for (const Result& r : results) {
    json fts5 = r.fts5.to_json();
    fts5["insert_ms"] = r.fts5_insert_ms;
    fts5["optimize_ms"] = r.fts5_optimize_ms;
    fts5["peak_bytes"] = r.fts5_peak_bytes;
    line.push_back({{"tools", r.tools},
                    {"toolmux", r.toolmux.to_json()},
                    {"fts5", fts5},
                    {"fts5_ns", r.fts5_ns.to_json()}});
  }
  std::cout << "\n" << json{{"search_speed", line}}.dump() << "\n";
  return 0;
}
