#include "src/builtins/tool_search.h"

#include <algorithm>
#include <set>
#include <utility>

#include "catalog/skills.h"
#include "catalog/text_analysis.h"
#include "src/builtins/tool_search_rerank.h"

namespace toolmux {

using nlohmann::json;

void SearchIndexHolder::set(std::shared_ptr<const SearchableCatalog> catalog) {
  std::lock_guard lock(mutex_);
  build_ = nullptr;
  catalog_ = std::move(catalog);
}

void SearchIndexHolder::set_on_first_use(Build build) {
  std::lock_guard lock(mutex_);
  catalog_ = nullptr;
  build_ = std::move(build);
}

std::shared_ptr<const SearchableCatalog> SearchIndexHolder::get() const {
  std::lock_guard lock(mutex_);
  if (build_) {
    // Under the lock: whoever asks meanwhile waits for this build, not a second one.
    catalog_ = build_();
    build_ = nullptr;
  }
  return catalog_;
}

namespace {

json tool_entry(const json& tool) {
  return {{"name", tool["name"]},
          {"description", tool.value("description", "")},
          {"inputSchema", tool["inputSchema"]}};
}

json source_entry(const SourceMatch& match) {
  json entry = {{"id", match.id}, {"description", match.description}, {"tools", match.tools}};
  if (match.groups > 0) entry["groups"] = match.groups;
  return entry;
}

constexpr std::size_t kMaxSkillHits = 3;

// The stems of the words of `value`, stop words left out.
std::set<std::string> stems_of(std::string_view value) {
  std::set<std::string> out;
  std::string buffer;
  std::string stem;
  text::tokenize_text(value, false, buffer, [&](std::string_view word, bool) {
    if (text::is_stop_word(word)) return;
    text::stem_english(word, stem);
    out.insert(stem);
  });
  return out;
}

// The skills whose name or description shares the most words with the query
// and its alternatives, best first (then by name), at most kMaxSkillHits;
// those that share none are left out. Each skill's words are taken anew:
// skills are few (at most 1024, with descriptions of at most 1024
// characters), a search's cost stays bounded.
json skill_hits(const SkillSet& skills, const ToolSearchQuery& query) {
  std::set<std::string> wanted = stems_of(query.query);
  for (const std::string& alternative : query.alternatives) {
    const std::set<std::string> more = stems_of(alternative);
    wanted.insert(more.begin(), more.end());
  }
  std::vector<std::pair<std::size_t, const Skill*>> scored;
  for (const Skill& skill : skills.skills()) {
    const std::set<std::string> words = stems_of(skill.name + " " + skill.description);
    const auto shared = static_cast<std::size_t>(std::count_if(
        wanted.begin(), wanted.end(), [&](const std::string& w) { return words.count(w) > 0; }));
    if (shared > 0) scored.emplace_back(shared, &skill);
  }
  std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second->name < b.second->name;
  });
  json out = json::array();
  for (std::size_t i = 0; i < scored.size() && i < kMaxSkillHits; ++i) {
    const Skill& skill = *scored[i].second;
    out.push_back({{"uri", skill.uri()}, {"name", skill.name}, {"description", skill.description}});
  }
  return out;
}

}  // namespace

json search_catalog(const SearchableCatalog& catalog, const ToolSearchQuery& query,
                    std::string_view principal, const SearchReranking* reranking) {
  const CatalogSearch& search = *catalog.search;
  auto allowed = [&](std::size_t doc) {
    const std::string& name = (*catalog.tools)[doc]["name"].get_ref<const std::string&>();
    return name != kToolSearch && (!catalog.policy || !catalog.policy->denial(principal, name));
  };
  json answer = {{"tools", json::array()}};
  if (!query.source.empty() && !search.has_source(query.source)) {
    std::string known;
    for (const auto& match : search.outline("", allowed))
      known += (known.empty() ? "" : ", ") + match.id;
    answer["error"] = "no source " + json(query.source).dump() +
                      (known.empty() ? std::string() : "; the sources are " + known);
    return answer;
  }
  const bool blank = query.blank();
  if (blank) {
    // The outline: the sources; a source's groups; or the tools of a group
    // or of a source without groups, in name order.
    answer["confidence"] = "high";
    const auto groups = search.outline(query.source, allowed);
    if (query.source.empty() || !groups.empty()) {
      answer["sources"] = json::array();
      for (const auto& match : groups) answer["sources"].push_back(source_entry(match));
      return answer;
    }
    std::vector<std::size_t> inside;
    for (std::size_t d = 0; d < search.tools().size(); ++d) {
      if ((search.source_of(d) == query.source || search.group_of(d) == query.source) &&
          allowed(d)) {
        inside.push_back(d);
      }
    }
    std::sort(inside.begin(), inside.end(), [&](std::size_t x, std::size_t y) {
      return search.tools().document(x).name < search.tools().document(y).name;
    });
    answer["more"] = inside.size() > query.limit ? inside.size() - query.limit : 0;
    if (inside.size() > query.limit) inside.resize(query.limit);
    for (std::size_t d : inside) answer["tools"].push_back(tool_entry((*catalog.tools)[d]));
    return answer;
  }
  CatalogSearchRequest request;
  request.query = query.query;
  request.alternatives = query.alternatives;
  request.source = query.source;
  request.limit = query.limit;
  request.sources = CatalogSearchRequest::Sources::when_unsure;
  request.memory = catalog.memory.get();
  // No access rule applies to this caller: every tool but tool_search itself
  // may be seen, so the search checks none (at 100,000 tools, checking and
  // counting each one is most of a search's time) and tool_search is dropped
  // from the hits after.
  const bool ruled =
      catalog.policy &&
      (catalog.policy->access.find(principal) != catalog.policy->access.end() ||
       catalog.policy->access.find(std::string_view("*")) != catalog.policy->access.end());
  // Re-ranking looks at more candidates than the answer may hold: the
  // client's model may bring a later one to the top.
  const bool may_rerank = reranking && reranking->ask;
  const std::size_t wanted =
      may_rerank ? std::max(query.limit, reranking->candidates) : query.limit;
  request.limit = wanted;
  if (ruled) {
    request.allowed = allowed;
  } else {
    ++request.limit;
  }
  const CatalogSearchAnswer found = search.search(request);
  std::vector<std::size_t> documents;
  for (const auto& hit : found.hits) {
    if (documents.size() == wanted || !allowed(hit.document)) continue;
    documents.push_back(hit.document);
  }
  const std::size_t candidates = may_rerank ? std::min(documents.size(), reranking->candidates) : 0;
  if (found.confidence != SearchConfidence::high && candidates >= 2) {
    std::vector<const json*> tools;
    for (std::size_t i = 0; i < candidates; ++i) tools.push_back(&(*catalog.tools)[documents[i]]);
    const RerankOutcome outcome = reranking->ask(tools);
    if (outcome.asked) {
      answer["reranked"] = outcome.chosen.has_value();
      if (outcome.chosen) {
        std::vector<std::size_t> reordered;
        for (std::size_t i : rerank_order(*outcome.chosen, candidates))
          reordered.push_back(documents[i]);
        std::copy(reordered.begin(), reordered.end(), documents.begin());
      } else {
        answer["rerankProblem"] = outcome.problem;
      }
    }
  }
  if (documents.size() > query.limit) documents.resize(query.limit);
  for (std::size_t d : documents) answer["tools"].push_back(tool_entry((*catalog.tools)[d]));
  if (catalog.skills && query.source.empty()) {
    if (json skills = skill_hits(*catalog.skills, query); !skills.empty()) {
      answer["skills"] = std::move(skills);
    }
  }
  answer["confidence"] = to_string(found.confidence);
  if (found.confidence != SearchConfidence::high && query.source.empty()) {
    answer["sources"] = json::array();
    for (const auto& match : found.sources) answer["sources"].push_back(source_entry(match));
  }
  return answer;
}

std::string search_answer_text(const ToolSearchQuery& query, const json& answer) {
  if (answer.contains("error")) return answer["error"].get<std::string>() + ".";
  const json& tools = answer["tools"];
  std::string text;
  auto list_sources = [&](const json& sources) {
    for (const auto& source : sources) {
      const std::string id = source["id"].get<std::string>();
      text += "\n- " + id + ": " + source["description"].get<std::string>() + " (" +
              std::to_string(source["tools"].get<std::size_t>()) + " tools";
      if (source.contains("groups"))
        text += " in " + std::to_string(source["groups"].get<std::size_t>()) + " groups";
      text += ")";
    }
  };
  const bool blank = query.blank();
  if (blank && answer.contains("sources")) {
    text = query.source.empty() ? "Where the tools come from:"
                                : "The groups of " + json(query.source).dump() + ":";
    list_sources(answer["sources"]);
    if (answer["sources"].empty()) text += "\n(none)";
    text +=
        "\n\nSearch within one with tool_search {\"query\": ..., \"source\": <its id>}; an empty "
        "query with a source lists what it holds.";
    return text;
  }
  if (tools.empty()) {
    text = "No tools match " + json(query.query).dump() +
           (query.source.empty() ? std::string() : " in " + json(query.source).dump()) +
           ". Try other words: the action (create, list, send, delete), the object (issue, file, "
           "message, pod) or the service (github, slack, kubernetes); or add alternatives.";
  } else {
    text = blank ? "The tools of " + json(query.source).dump() + ":\n"
                 : "Tools matching " + json(query.query).dump() +
                       (query.source.empty() ? std::string() : " in " + json(query.source).dump()) +
                       ", best first. Call one directly, or with call_tool {\"name\": ..., "
                       "\"arguments\": {...}}:\n";
    for (const auto& tool : tools) {
      text += "\n- " + tool["name"].get<std::string>() + ": " +
              tool["description"].get<std::string>() +
              "\n  inputSchema: " + tool["inputSchema"].dump();
    }
    if (answer.value("more", 0) > 0) {
      text += "\n\n... and " + std::to_string(answer["more"].get<std::size_t>()) +
              " more: search within it, or raise limit.";
    }
  }
  if (answer.contains("skills")) {
    text += "\n\nSkills matching " + json(query.query).dump() +
            " (instructions to follow: read the SKILL.md with resources/read):";
    for (const auto& skill : answer["skills"]) {
      text += "\n- " + skill["name"].get<std::string>() + ": " +
              skill["description"].get<std::string>() + " (read " +
              skill["uri"].get<std::string>() + ")";
    }
  }
  if (answer.contains("sources") && !answer["sources"].empty()) {
    text += "\n\nThese may not be what you need. The sources that match best:";
    list_sources(answer["sources"]);
    text +=
        "\nTo search one of them, call tool_search again with \"source\" set to its id (a "
        "group's id narrows further).";
  }
  return text;
}

std::vector<std::string> search_terms(const json& arguments) {
  if (!arguments.is_object()) return {};
  ToolSearchQuery query;
  if (auto it = arguments.find("query"); it != arguments.end() && it->is_string())
    query.query = it->get<std::string>();
  if (query.blank()) return {};
  // One text of every phrasing: terms() keeps each term once, the first
  // SearchMemory::kMaxQueryTerms of them.
  std::string text = query.query;
  if (auto it = arguments.find("alternatives"); it != arguments.end() && it->is_array()) {
    for (const auto& alternative : *it)
      if (alternative.is_string()) text += "\n" + alternative.get<std::string>();
  }
  return SearchMemory::terms(text);
}

std::vector<std::string> answered_tools(const ToolResult& result) {
  std::vector<std::string> names;
  if (result.is_error || !result.structured_content.is_object()) return names;
  auto tools = result.structured_content.find("tools");
  if (tools == result.structured_content.end() || !tools->is_array()) return names;
  for (const auto& tool : *tools) {
    if (!tool.is_object()) continue;
    if (auto name = tool.find("name"); name != tool.end() && name->is_string())
      names.push_back(name->get<std::string>());
  }
  return names;
}

namespace {

ToolResult answer(const SearchIndexHolder& holder, const json& args, CallContext& context) {
  auto catalog = holder.get();
  if (!catalog) return ToolResult::error("tool_search is not ready: the catalog is still loading");
  ToolSearchQuery query;
  query.query = args.value("query", std::string());
  if (auto it = args.find("alternatives"); it != args.end())
    query.alternatives = it->get<std::vector<std::string>>();
  query.source = args.value("source", std::string());
  query.limit = args.value("limit", kDefaultSearchLimit);
  // The client's model is asked only when the operator turned it on and the
  // client declared that it can be asked.
  SearchReranking reranking;
  const bool rerank = catalog->rerank.enabled && client_declares_sampling(context);
  if (rerank) {
    reranking.candidates = catalog->rerank.candidates;
    reranking.ask = [&](const std::vector<const json*>& tools) {
      return ask_client_to_rerank(context, catalog->rerank, query, tools);
    };
  }
  json found = search_catalog(*catalog, query, context.principal(), rerank ? &reranking : nullptr);
  // Stopped while asking (a 2026-07-28 client answers with a retry): this
  // answer is discarded, and nothing is recorded for it.
  if (context.cancelled()) return ToolResult::error("tool_search was stopped");
  if (found.contains("error")) return ToolResult::error(search_answer_text(query, found));
  std::vector<std::string> names;
  for (const auto& tool : found["tools"]) names.push_back(tool["name"].get<std::string>());
  context.tools_discovered(names);
  ToolResult result = ToolResult::text(search_answer_text(query, found));
  result.structured_content = std::move(found);
  return result;
}

}  // namespace

Problems register_tool_search(ToolRegistry& registry,
                              const std::shared_ptr<SearchIndexHolder>& holder) {
  ToolSpec spec;
  spec.name = kToolSearch;
  spec.title = "Search the tool catalog";
  spec.description =
      "Find tools by what you want to do. Describe the action, the object and the service in "
      "the words a tool would use, e.g. \"create a GitHub issue\", \"send an SMS\", \"list "
      "kubernetes pods\". If you are not sure of the words, add up to 3 alternatives: the same "
      "need phrased other ways (other verbs, the API's or CLI's own terms, the service's name). "
      "Returns the best matches (5 by default, at most 20), each with its name, description and "
      "inputSchema, so you can call it right away (directly, or through call_tool). When the "
      "answer is unsure it also names the sources (servers, and groups of a large one) that "
      "match best: pass one as \"source\" to search only there. An empty query lists the "
      "sources (with a source: its groups or tools).";
  const json text_item = {{"type", "string"}, {"minLength", 1}, {"maxLength", 300}};
  spec.input_schema = {
      {"type", "object"},
      {"properties",
       {{"query",
         {{"type", "string"},
          {"maxLength", 1000},
          {"description", "What you want to do, in a few words (empty: list the sources)."}}},
        {"alternatives",
         {{"type", "array"},
          {"items", text_item},
          {"maxItems", 3},
          {"description", "Other phrasings of the same need, searched together with query."}}},
        {"source",
         {{"type", "string"},
          {"maxLength", 300},
          {"description",
           "Search only this source or group, by the id an earlier answer gave it."}}},
        {"limit",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", static_cast<int>(kMaxSearchLimit)},
          {"default", static_cast<int>(kDefaultSearchLimit)},
          {"description", "How many tools to return (default 5, at most 20)."}}}}},
      {"additionalProperties", false}};
  const json source_schema = {{"type", "object"},
                              {"properties",
                               {{"id", {{"type", "string"}}},
                                {"description", {{"type", "string"}}},
                                {"tools", {{"type", "integer"}}},
                                {"groups", {{"type", "integer"}}}}},
                              {"required", {"id", "description", "tools"}}};
  spec.output_schema = {{"type", "object"},
                        {"properties",
                         {{"tools",
                           {{"type", "array"},
                            {"items",
                             {{"type", "object"},
                              {"properties",
                               {{"name", {{"type", "string"}}},
                                {"description", {{"type", "string"}}},
                                {"inputSchema", {{"type", "object"}}}}},
                              {"required", {"name", "description", "inputSchema"}}}}}},
                          {"confidence", {{"type", "string"}, {"enum", {"high", "medium", "low"}}}},
                          {"sources", {{"type", "array"}, {"items", source_schema}}},
                          {"skills",
                           {{"type", "array"},
                            {"items",
                             {{"type", "object"},
                              {"properties",
                               {{"uri", {{"type", "string"}}},
                                {"name", {{"type", "string"}}},
                                {"description", {{"type", "string"}}}}},
                              {"required", {"uri", "name", "description"}}}}}},
                          {"more", {{"type", "integer"}}},
                          {"reranked", {{"type", "boolean"}}},
                          {"rerankProblem", {{"type", "string"}}}}},
                        {"required", {"tools"}}};
  spec.side_effect = "read_only";
  spec.idempotent = true;
  // A search of the in-memory index takes far less; the client's model, when
  // asked to re-rank, may take up to "search.rerank.timeoutMs" (25 s at most).
  spec.timeout = std::chrono::milliseconds(30000);
  spec.returns_by_deadline = true;  // it waits for the client's model only until its deadline
  spec.runs_on_reader = false;      // that wait; and the first search builds the index
  spec.tags = {"discovery"};
  spec.schemas_vetted = true;  // toolmux's own: compiled at first use (tool.h)
  return registry.add(std::move(spec), [holder](const json& args, CallContext& context) {
    return answer(*holder, args, context);
  });
}

}  // namespace toolmux
