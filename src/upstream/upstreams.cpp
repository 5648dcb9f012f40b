#include "src/upstream/upstreams.h"

#include "src/builtins/call_tool.h"
#include "src/builtins/result_tools.h"
#include "src/builtins/tool_search.h"

#include <set>
#include <utility>

namespace toolmux {
namespace {

void register_tools(const std::shared_ptr<Upstream>& source, ToolRegistry& registry, Logger& logger,
                    UpstreamTools& registered) {
  const UpstreamSpec upstream = source->spec();
  const std::vector<nlohmann::json> listed = source->tools();
  auto skip = [&](const std::string& tool, const std::string& reason) {
    logger.write(LogLevel::warning, "upstream_tool_left_out",
                 {{"upstream", upstream.name}, {"tool", tool}, {"reason", reason}});
  };
  std::set<std::string, std::less<>> listed_names;
  std::size_t added = 0;
  constexpr std::size_t kUndescribedExamples = 5;
  std::size_t undescribed_tools = 0;
  std::vector<std::string> undescribed_examples;
  for (const nlohmann::json& tool : listed) {
    const std::string name = tool.is_object() && tool.contains("name") && tool["name"].is_string()
                                 ? tool["name"].get<std::string>()
                                 : "";
    if (name.empty()) {
      skip(tool.is_object() ? tool.value("name", nlohmann::json()).dump() : tool.dump(),
           "the tool has no name");
      continue;
    }
    listed_names.insert(name);
    auto spec = upstream_tool_spec(upstream, tool);
    if (!spec) continue;  // include/exclude
    if (spec->name == kToolSearch || spec->name == kCallTool || spec->name == kReadToolResult) {
      // Another toolmux (or a server with the same idea) as an upstream: its
      // discovery tools would shadow this one's.
      skip(name, "the name " + spec->name +
                     " is reserved for toolmux's own tool; give it another "
                     "with a prefix or a \"name\" override");
      continue;
    }
    const SideEffect effect =
        side_effect_from_name(spec->side_effect).value_or(SideEffect::remote_mutation);
    Problems problems = registry.add(
        *spec,
        [source, name, effect](const nlohmann::json& arguments, CallContext& context) {
          return McpClient::tool_result(source->call_tool(name, arguments, context, effect));
        },
        ToolOwner::upstream);
    if (!problems.empty()) {
      std::string reason;
      for (const Problem& problem : problems) {
        if (!reason.empty()) reason += "; ";
        reason +=
            problem.pointer.empty() ? problem.message : problem.pointer + ": " + problem.message;
      }
      skip(name, reason);
      continue;
    }
    ++added;
    // What toolmux would refuse of a tool of its own, said once per upstream.
    if (Problems undescribed = undescribed_properties(spec->input_schema); !undescribed.empty()) {
      ++undescribed_tools;
      if (undescribed_examples.size() < kUndescribedExamples) {
        undescribed_examples.push_back(spec->name + " " + undescribed.front().pointer);
      }
    }
    registered.tool_upstream[spec->name] = upstream.name;
    auto change = upstream.tools.find(name);
    if (change != upstream.tools.end() && change->second.pinned)
      registered.pinned.push_back(spec->name);
  }
  if (listed.empty()) return;  // not listed yet: nothing to compare the names with
  // Names the operator gave that the upstream does not list: likely typos.
  auto unknown = [&](const std::string& tool, const char* where) {
    if (!listed_names.count(tool)) {
      logger.write(LogLevel::warning, "upstream_unknown_tool",
                   {{"upstream", upstream.name}, {"tool", tool}, {"field", where}});
    }
  };
  if (upstream.include) {
    for (const auto& tool : *upstream.include) unknown(tool, "include");
  }
  for (const auto& tool : upstream.exclude) unknown(tool, "exclude");
  for (const auto& [tool, change] : upstream.tools) unknown(tool, "tools");
  if (undescribed_tools > 0) {
    logger.write(LogLevel::warning, "upstream_undescribed_properties",
                 {{"upstream", upstream.name},
                  {"tools", undescribed_tools},
                  {"examples", undescribed_examples},
                  {"reason",
                   "these tools' input schemas have properties without a description, which "
                   "toolmux refuses in a tool of its own; the model sees only their names"}});
  }
  logger.write(LogLevel::info, "upstream_tools_registered",
               {{"upstream", upstream.name}, {"registered", added}, {"listed", listed.size()}});
  if (added > 0) ++registered.upstreams_with_tools;
}

}  // namespace

UpstreamSet::UpstreamSet(Logger& logger, std::filesystem::path cache_dir, Upstream::Hooks hooks)
    : logger_(logger), cache_dir_(std::move(cache_dir)), hooks_(std::move(hooks)) {}

UpstreamSet::~UpstreamSet() { stop(); }

void UpstreamSet::update(const std::vector<UpstreamSpec>& specs) {
  std::vector<std::shared_ptr<Upstream>> next;
  std::vector<std::shared_ptr<Upstream>> started;
  std::vector<std::shared_ptr<Upstream>> retired;
  {
    std::lock_guard lock(mutex_);
    std::map<std::string, std::shared_ptr<Upstream>> running;
    for (const auto& upstream : upstreams_) running[upstream->name()] = upstream;
    for (const UpstreamSpec& spec : specs) {
      auto it = running.find(spec.name);
      if (it != running.end() && same_connection(it->second->spec(), spec)) {
        it->second->set_spec(spec);
        next.push_back(it->second);
        running.erase(it);
        continue;
      }
      if (it != running.end()) {
        logger_.write(LogLevel::info, "upstream_replaced", {{"upstream", spec.name}});
        retired.push_back(it->second);
        running.erase(it);
      }
      const std::filesystem::path cache =
          cache_dir_.empty() ? std::filesystem::path() : cache_dir_ / (spec.name + ".json");
      auto upstream = Upstream::create(spec, logger_, cache, hooks_);
      next.push_back(upstream);
      started.push_back(upstream);
    }
    for (auto& [name, upstream] : running) {
      logger_.write(LogLevel::info, "upstream_removed", {{"upstream", name}});
      retired.push_back(upstream);
    }
    upstreams_ = next;
  }
  for (const auto& upstream : retired) upstream->stop();
  for (const auto& upstream : started) upstream->start();
  // All at once: each waits its own start at most (the era probe, then
  // initialize and tools/list).
  for (const auto& upstream : started) {
    const UpstreamLifecycle& lifecycle = upstream->spec().lifecycle;
    upstream->wait_started(lifecycle.probe_timeout + lifecycle.start_timeout * 2);
  }
}

void UpstreamSet::stop() {
  std::vector<std::shared_ptr<Upstream>> all;
  {
    std::lock_guard lock(mutex_);
    all = upstreams_;
  }
  for (const auto& upstream : all) upstream->stop();
}

std::vector<std::shared_ptr<Upstream>> UpstreamSet::list() const {
  std::lock_guard lock(mutex_);
  return upstreams_;
}

std::shared_ptr<Upstream> UpstreamSet::find(const std::string& name) const {
  std::lock_guard lock(mutex_);
  for (const auto& upstream : upstreams_) {
    if (upstream->name() == name) return upstream;
  }
  return nullptr;
}

UpstreamTools register_upstream_tools(const std::vector<std::shared_ptr<Upstream>>& upstreams,
                                      ToolRegistry& registry, Logger& logger) {
  UpstreamTools registered;
  for (const auto& upstream : upstreams) {
    register_tools(upstream, registry, logger, registered);
    registered.sources.push_back(upstream->source_info());
  }
  return registered;
}

}  // namespace toolmux
