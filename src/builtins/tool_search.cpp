#include "src/builtins/tool_search.h"

#include <utility>

namespace toolmux {

using nlohmann::json;

void SearchIndexHolder::set(std::shared_ptr<const SearchableCatalog> catalog) {
  std::lock_guard lock(mutex_);
  catalog_ = std::move(catalog);
}

std::shared_ptr<const SearchableCatalog> SearchIndexHolder::get() const {
  std::lock_guard lock(mutex_);
  return catalog_;
}

json search_tools(const SearchableCatalog& catalog, std::string_view query, std::size_t limit,
                  std::string_view principal) {
  auto allowed = [&](std::size_t doc) {
    const std::string& name = (*catalog.tools)[doc]["name"].get_ref<const std::string&>();
    return name != kToolSearch && (!catalog.policy || !catalog.policy->denial(principal, name));
  };
  json found = json::array();
  for (const auto& hit : catalog.index->search(query, limit, allowed)) {
    const json& tool = (*catalog.tools)[hit.document];
    found.push_back({{"name", tool["name"]},
                     {"description", tool.value("description", "")},
                     {"inputSchema", tool["inputSchema"]}});
  }
  return found;
}

namespace {

ToolResult answer(const SearchIndexHolder& holder, const json& args, CallContext& context) {
  auto catalog = holder.get();
  if (!catalog) return ToolResult::error("tool_search is not ready: the catalog is still loading");
  const std::string query = args["query"].get<std::string>();
  const std::size_t limit = args.value("limit", kDefaultSearchLimit);
  json found = search_tools(*catalog, query, limit, context.principal());
  std::vector<std::string> names;
  for (const auto& tool : found) names.push_back(tool["name"].get<std::string>());
  context.tools_discovered(names);

  std::string text;
  if (found.empty()) {
    text = "No tools match " + json(query).dump() +
           ". Try broader or different words: the action (create, list, send, delete), the "
           "object (issue, file, message, pod) or the service (github, slack, kubernetes).";
  } else {
    text = "Tools matching " + json(query).dump() + ", best first. Call one directly, or with " +
           "call_tool {\"name\": ..., \"arguments\": {...}}:\n";
    for (const auto& tool : found) {
      text += "\n- " + tool["name"].get<std::string>() + ": " +
              tool["description"].get<std::string>() +
              "\n  inputSchema: " + tool["inputSchema"].dump();
    }
  }
  ToolResult result = ToolResult::text(std::move(text));
  result.structured_content = {{"tools", std::move(found)}};
  return result;
}

}  // namespace

Problems register_tool_search(ToolRegistry& registry,
                              const std::shared_ptr<SearchIndexHolder>& holder,
                              const std::string& summary) {
  ToolSpec spec;
  spec.name = kToolSearch;
  spec.title = "Search the tool catalog";
  spec.description =
      "Find tools by what you want to do. " + summary +
      " Describe the action, the object and the service, e.g. \"create a GitHub issue\", "
      "\"send an SMS\", \"list kubernetes pods\". Returns the best matches (5 by default, at "
      "most 20), each with its name, description and inputSchema, so you can call it right "
      "away (directly, or through call_tool).";
  spec.input_schema = {{"type", "object"},
                       {"properties",
                        {{"query",
                          {{"type", "string"},
                           {"minLength", 1},
                           {"maxLength", 1000},
                           {"description", "What you want to do, in a few words."}}},
                         {"limit",
                          {{"type", "integer"},
                           {"minimum", 1},
                           {"maximum", static_cast<int>(kMaxSearchLimit)},
                           {"default", static_cast<int>(kDefaultSearchLimit)},
                           {"description", "How many tools to return (default 5, at most 20)."}}}}},
                       {"required", {"query"}},
                       {"additionalProperties", false}};
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
                              {"required", {"name", "description", "inputSchema"}}}}}}}},
                        {"required", {"tools"}}};
  spec.side_effect = "read_only";
  spec.idempotent = true;
  spec.timeout = std::chrono::milliseconds(5000);
  spec.returns_by_deadline = true;  // a search of the in-memory index
  spec.tags = {"discovery"};
  return registry.add(std::move(spec), [holder](const json& args, CallContext& context) {
    return answer(*holder, args, context);
  });
}

}  // namespace toolmux
