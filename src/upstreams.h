// Starts the catalog file's upstream MCP servers and registers their tools:
// each upstream is started as a child process (transports/stdio_child.h),
// initialized and listed (src/mcp_client.h), and each tool it lists becomes a
// registry tool (catalog/upstream_spec.h) whose handler relays the call.
//
// Nothing here is fatal: an upstream that cannot start, or answers wrongly,
// is logged with the reason and left out; a tool that breaks the tool
// contract is logged (upstream, tool, reason) and left out; the rest load.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "catalog/tool_registry.h"
#include "catalog/upstream_spec.h"
#include "src/logger.h"
#include "src/mcp_client.h"

namespace toolmux {

struct StartedUpstreams {
  std::vector<std::shared_ptr<McpClient>> clients;   // the upstreams that serve
  std::map<std::string, std::string> tool_upstream;  // registered tool name -> upstream name
  std::vector<std::string> pinned;                   // registered names the overrides pin
};

// Starts every upstream at once and waits for each to be listed (at most
// `timeout` for its initialize and again for its tools/list).
StartedUpstreams start_upstreams(const std::vector<UpstreamSpec>& upstreams, ToolRegistry& registry,
                                 Logger& logger,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace toolmux
