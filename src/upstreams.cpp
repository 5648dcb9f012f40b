#include "src/upstreams.h"

#include <future>
#include <set>
#include <utility>

namespace toolmux {
namespace {

struct Listed {
  std::shared_ptr<McpClient> client;
  std::vector<nlohmann::json> tools;
};

// Starts, initializes and lists one upstream; null client when it fails.
Listed start_one(const UpstreamSpec& upstream, Logger& logger, std::chrono::milliseconds timeout) {
  ChildCommand command;
  command.argv = upstream.argv;
  command.cwd = upstream.cwd;
  command.env = upstream.env;
  std::string error;
  auto child = StdioChild::start(
      command,
      [&logger, name = upstream.name](std::string_view line) {
        logger.write(LogLevel::info, "upstream_stderr", {{"upstream", name}, {"line", line}});
      },
      error);
  if (!child) {
    logger.write(LogLevel::error, "upstream_failed",
                 {{"upstream", upstream.name}, {"reason", "cannot start: " + error}});
    return {};
  }
  auto client = McpClient::create(upstream.name, std::move(child), logger);
  error = client->initialize(timeout);
  std::optional<std::vector<nlohmann::json>> tools;
  if (error.empty()) tools = client->list_tools(timeout, error);
  if (!tools) {
    logger.write(LogLevel::error, "upstream_failed",
                 {{"upstream", upstream.name}, {"reason", error}});
    return {};
  }
  logger.write(
      LogLevel::info, "upstream_started",
      {{"upstream", upstream.name}, {"server", client->server_info()}, {"tools", tools->size()}});
  return {client, std::move(*tools)};
}

void register_tools(const UpstreamSpec& upstream, Listed& listed, ToolRegistry& registry,
                    Logger& logger, StartedUpstreams& started) {
  auto skip = [&](const std::string& tool, const std::string& reason) {
    logger.write(LogLevel::warning, "upstream_tool_left_out",
                 {{"upstream", upstream.name}, {"tool", tool}, {"reason", reason}});
  };
  std::set<std::string, std::less<>> listed_names;
  std::size_t added = 0;
  for (const nlohmann::json& tool : listed.tools) {
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
    auto client = listed.client;
    Problems problems =
        registry.add(*spec, [client, name](const nlohmann::json& arguments, CallContext& context) {
          return client->call_tool(name, arguments, context);
        });
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
    started.tool_upstream[spec->name] = upstream.name;
    auto change = upstream.tools.find(name);
    if (change != upstream.tools.end() && change->second.pinned)
      started.pinned.push_back(spec->name);
  }
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
  logger.write(
      LogLevel::info, "upstream_tools_registered",
      {{"upstream", upstream.name}, {"registered", added}, {"listed", listed.tools.size()}});
  started.clients.push_back(listed.client);
}

}  // namespace

StartedUpstreams start_upstreams(const std::vector<UpstreamSpec>& upstreams, ToolRegistry& registry,
                                 Logger& logger, std::chrono::milliseconds timeout) {
  std::vector<std::future<Listed>> starting;
  starting.reserve(upstreams.size());
  for (const UpstreamSpec& upstream : upstreams) {
    starting.push_back(std::async(std::launch::async, [&upstream, &logger, timeout] {
      return start_one(upstream, logger, timeout);
    }));
  }
  StartedUpstreams started;
  // Registered in the file's order, whatever order they finished starting in.
  for (std::size_t i = 0; i < upstreams.size(); ++i) {
    Listed listed = starting[i].get();
    if (listed.client) register_tools(upstreams[i], listed, registry, logger, started);
  }
  return started;
}

}  // namespace toolmux
