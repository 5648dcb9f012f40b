// search_speed: how fast the tool search index builds and answers, on the real
// catalog (every JSON file of a folder: arrays of {server, name, description,
// inputSchema}) replicated to 1k, 10k and 100k tools. See README.md.
//
//   search_speed [CATALOG_DIR] [--sizes 1000,10000,100000] [--repeat 5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool_search_index.h"

using namespace toolmux;
using nlohmann::json;
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
  const auto at = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(at, values.size() - 1)];
}

struct Result {
  std::size_t tools;
  double build_ms;
  std::size_t memory_bytes;
  long long rss_growth_bytes;
  double p50_us;
  double p99_us;
  double max_us;
  double mean_hits;
};

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path dir = SEARCH_SPEED_DEFAULT_CATALOG;
  std::vector<std::size_t> sizes = {1000, 10000, 100000};
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::istringstream list(argv[++i]);
      std::string item;
      while (std::getline(list, item, ',')) sizes.push_back(std::stoul(item));
    } else if (arg == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::stoi(argv[++i]));
    } else if (arg == "--help" || arg == "-h") {
      std::cout << "usage: search_speed [CATALOG_DIR] [--sizes 1000,10000,100000] [--repeat 5]\n";
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
            << queries.size() << " queries x " << repeat << " runs, limit 5\n\n";

  std::vector<Result> results;
  for (std::size_t size : sizes) {
    const std::size_t rss_before = rss_bytes();
    std::vector<SearchDocument> documents = replicate(tools, size);
    const auto start = Clock::now();
    auto index = ToolSearchIndex::build(std::move(documents));
    const double build_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    const std::size_t rss_after = rss_bytes();

    std::size_t hits = 0;
    for (const auto& query : queries) hits += index->search(query, 5).size();  // warm up
    std::vector<double> latencies;
    latencies.reserve(queries.size() * static_cast<std::size_t>(repeat));
    std::vector<std::vector<double>> by_query(queries.size());
    for (int r = 0; r < repeat; ++r) {
      for (std::size_t q = 0; q < queries.size(); ++q) {
        const auto t0 = Clock::now();
        auto found = index->search(queries[q], 5);
        const auto t1 = Clock::now();
        const double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
        latencies.push_back(us);
        by_query[q].push_back(us);
        if (found.size() > 5) return 2;
      }
    }
    // The slowest queries (by their median), to see what the tail is made of.
    std::vector<std::pair<double, std::size_t>> medians;
    for (std::size_t q = 0; q < queries.size(); ++q)
      medians.emplace_back(percentile(by_query[q], 0.5), q);
    std::sort(medians.rbegin(), medians.rend());
    std::cout << size << " tools, slowest queries (median us):";
    for (std::size_t k = 0; k < 3 && k < medians.size(); ++k)
      std::cout << " \"" << queries[medians[k].second] << "\" " << medians[k].first;
    std::cout << "\n";
    results.push_back({size, build_ms, index->memory_bytes(),
                       static_cast<long long>(rss_after) - static_cast<long long>(rss_before),
                       percentile(latencies, 0.5), percentile(latencies, 0.99),
                       *std::max_element(latencies.begin(), latencies.end()),
                       static_cast<double>(hits) / static_cast<double>(queries.size())});
  }

  std::printf("%8s %10s %12s %12s %9s %9s %9s %6s\n", "tools", "build ms", "index MB", "RSS+ MB",
              "p50 us", "p99 us", "max us", "hits");
  for (const Result& r : results)
    std::printf("%8zu %10.1f %12.1f %12.1f %9.1f %9.1f %9.1f %6.2f\n", r.tools, r.build_ms,
                static_cast<double>(r.memory_bytes) / 1e6,
                static_cast<double>(r.rss_growth_bytes) / 1e6, r.p50_us, r.p99_us, r.max_us,
                r.mean_hits);
  json line = json::array();
  for (const Result& r : results)
    line.push_back({{"tools", r.tools},
                    {"build_ms", r.build_ms},
                    {"memory_bytes", r.memory_bytes},
                    {"rss_growth_bytes", r.rss_growth_bytes},
                    {"p50_us", r.p50_us},
                    {"p99_us", r.p99_us},
                    {"max_us", r.max_us}});
  std::cout << "\n" << json{{"search_speed", line}}.dump() << "\n";
  return 0;
}
