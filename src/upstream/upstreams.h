// The catalog file's upstream MCP servers as a set (src/upstream/upstream.h keeps each
// one serving), and how their tools join a catalog's registry.
//
// UpstreamSet::update makes the running set match a catalog file's upstreams
// section: it starts the new ones, stops the ones no longer declared,
// restarts the ones whose connection changed (command, args, cwd, env, url,
// headers) and hands the rest their new settings. It then waits, at most
// each one's start timeout and all at once, for newly started eager
// upstreams to list their tools, so a client's first tools/list sees them.
//
// register_upstream_tools turns each upstream's listed tools into registry
// tools (catalog/upstream_spec.h) whose handler relays the call through the
// Upstream. Nothing there is fatal: a tool that breaks the tool contract is
// logged (upstream, tool, reason) and left out; the rest load.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "catalog/tool_registry.h"
#include "catalog/upstream_spec.h"
#include "src/base/logger.h"
#include "src/upstream/upstream.h"

namespace toolmux {

class UpstreamSet {
 public:
  // `cache_dir`: where each upstream's last tool list is kept (empty: nowhere).
  // `hooks` are given to every upstream (called from their threads).
  UpstreamSet(Logger& logger, std::filesystem::path cache_dir, Upstream::Hooks hooks);
  ~UpstreamSet();
  UpstreamSet(const UpstreamSet&) = delete;
  UpstreamSet& operator=(const UpstreamSet&) = delete;

  void update(const std::vector<UpstreamSpec>& specs);
  // Stops every upstream. Idempotent.
  void stop();
  // In the catalog file's order.
  std::vector<std::shared_ptr<Upstream>> list() const;
  std::shared_ptr<Upstream> find(const std::string& name) const;

 private:
  Logger& logger_;
  const std::filesystem::path cache_dir_;
  const Upstream::Hooks hooks_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<Upstream>> upstreams_;
};

struct UpstreamTools {
  std::map<std::string, std::string> tool_upstream;  // registered tool name -> upstream name
  std::vector<std::string> pinned;                   // registered names the overrides pin
  std::size_t upstreams_with_tools = 0;
  std::vector<SourceInfo> sources;  // what each upstream says of itself, for tool_search
};

UpstreamTools register_upstream_tools(const std::vector<std::shared_ptr<Upstream>>& upstreams,
                                      ToolRegistry& registry, Logger& logger);

}  // namespace toolmux
