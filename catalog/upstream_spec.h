// What the catalog file's "upstreams" section declares: MCP servers toolmux
// starts as child processes and is the client of, and how their tools join
// the catalog (prefix, include/exclude, per-tool overrides).
//
// upstream_tool_spec turns one tool an upstream listed into the ToolSpec
// toolmux registers for it. Pure functions on plain data; the spec it returns
// may still break the contract (ToolRegistry::add is where that is checked).
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"

namespace toolmux {

// An upstream tool's timeout when the catalog file gives none.
inline constexpr std::chrono::milliseconds kUpstreamDefaultTimeout{60000};

// "tools": {"<upstream tool name>": {...}}: what the operator changes in one
// upstream tool. Absent fields keep what the upstream says.
struct UpstreamToolOverride {
  std::optional<std::string> name;  // the whole published name (no prefix added)
  std::optional<std::string> description;
  std::optional<std::string> side_effect;
  std::optional<std::chrono::milliseconds> timeout;
  bool pinned = false;  // always listed when discovery is on
};

struct UpstreamSpec {
  std::string name;               // the key in "upstreams"
  std::vector<std::string> argv;  // "command" then "args"
  std::filesystem::path cwd;      // empty = toolmux's working directory
  // The child's whole environment: the inherited basics (PATH, HOME, ...)
  // then "env" with its references resolved, as "NAME=value" entries.
  std::vector<std::string> env;
  std::string prefix;  // put before each tool's name; default "<name>_"
  std::optional<std::vector<std::string>> include;  // nullopt = every tool
  std::vector<std::string> exclude;
  std::map<std::string, UpstreamToolOverride, std::less<>> tools;
};

// readOnlyHint true -> read_only; else destructiveHint true -> destructive;
// else remote_mutation (an upstream acts on something outside toolmux).
SideEffect side_effect_from_annotations(const nlohmann::json& annotations);

// The spec for `tool` (one entry of the upstream's tools/list result), with
// the prefix and the operator's overrides applied; nullopt when include or
// exclude leave the tool out. The handler is the caller's to attach.
std::optional<ToolSpec> upstream_tool_spec(const UpstreamSpec& upstream,
                                           const nlohmann::json& tool);

}  // namespace toolmux
