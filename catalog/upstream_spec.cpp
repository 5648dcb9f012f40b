#include "catalog/upstream_spec.h"

#include <algorithm>

namespace toolmux {
namespace {

// The hint's value when the upstream gave it as a boolean, else `absent`:
// MCP's defaults are readOnlyHint false, destructiveHint true, idempotentHint
// false, openWorldHint true.
bool hint(const nlohmann::json& annotations, const char* name, bool absent = false) {
  if (!annotations.is_object()) return absent;
  auto it = annotations.find(name);
  return it != annotations.end() && it->is_boolean() ? it->get<bool>() : absent;
}

std::string string_field(const nlohmann::json& object, const char* name) {
  if (!object.is_object()) return "";
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

SideEffect side_effect_from_annotations(const nlohmann::json& annotations) {
  if (hint(annotations, "readOnlyHint")) return SideEffect::read_only;
  if (hint(annotations, "destructiveHint", true)) return SideEffect::destructive;
  // Not destructive: it reaches the world outside its server unless it says
  // openWorldHint false (MCP's default is true).
  return hint(annotations, "openWorldHint", true) ? SideEffect::remote_mutation
                                                  : SideEffect::local_mutation;
}

std::optional<ToolSpec> upstream_tool_spec(const UpstreamSpec& upstream,
                                           const nlohmann::json& tool) {
  const std::string name = string_field(tool, "name");
  if (upstream.include && std::find(upstream.include->begin(), upstream.include->end(), name) ==
                              upstream.include->end()) {
    return std::nullopt;
  }
  if (std::find(upstream.exclude.begin(), upstream.exclude.end(), name) != upstream.exclude.end()) {
    return std::nullopt;
  }
  const nlohmann::json annotations =
      tool.is_object() ? tool.value("annotations", nlohmann::json()) : nlohmann::json();
  ToolSpec spec;
  spec.name = upstream.prefix + name;
  spec.title = string_field(tool, "title");
  if (spec.title.empty()) spec.title = string_field(annotations, "title");
  spec.description = string_field(tool, "description");
  spec.input_schema = tool.is_object() ? tool.value("inputSchema", nlohmann::json()) : nullptr;
  spec.output_schema = tool.is_object() ? tool.value("outputSchema", nlohmann::json()) : nullptr;
  spec.side_effect = std::string(side_effect_name(side_effect_from_annotations(annotations)));
  spec.timeout = kUpstreamDefaultTimeout;
  spec.returns_by_deadline = true;  // the request gives up at the deadline
  spec.runs_on_reader = false;      // it waits for the upstream's answer
  spec.idempotent = hint(annotations, "idempotentHint");
  spec.open_world = hint(annotations, "openWorldHint", true);
  // A tool the upstream runs as a task: its answer says when (a
  // CreateTaskResult), and toolmux's task follows the upstream's.
  if (tool.is_object() && tool.contains("execution") && tool["execution"].is_object()) {
    const std::string support = string_field(tool["execution"], "taskSupport");
    if (support == "optional" || support == "required") {
      spec.task_support = support == "required" ? TaskSupport::required : TaskSupport::optional;
      spec.task_started_by_handler = true;
    }
  }
  std::optional<bool> spotlight = upstream.spotlight;
  spec.redact_personal_data = upstream.redact_personal_data;
  auto override_it = upstream.tools.find(name);
  if (override_it != upstream.tools.end()) {
    const UpstreamToolOverride& change = override_it->second;
    if (change.name) spec.name = *change.name;
    if (change.description) spec.description = *change.description;
    // The operator's class stands for the upstream's hints, openWorldHint too.
    if (change.side_effect) {
      spec.side_effect = *change.side_effect;
      spec.open_world.reset();
    }
    if (change.timeout) spec.timeout = *change.timeout;
    if (change.spotlight) spotlight = change.spotlight;
    if (change.redact_personal_data) spec.redact_personal_data = *change.redact_personal_data;
  }

  // A tool that may reach the open world may bring back text written by
  // anyone: spotlighted unless the operator says otherwise.
  const bool open_world = spec.open_world.value_or(side_effect_from_name(spec.side_effect) ==
                                                   SideEffect::remote_mutation);
  spec.untrusted_output = spotlight.value_or(open_world);
  return spec;
}

bool may_be_upstream_tool(const std::vector<UpstreamSpec>& upstreams, std::string_view tool) {
  for (const UpstreamSpec& upstream : upstreams) {
    if (tool.substr(0, upstream.prefix.size()) == upstream.prefix) return true;  // "" too
    for (const auto& [name, change] : upstream.tools) {
      if (change.name && *change.name == tool) return true;
    }
  }
  return false;
}

bool same_connection(const UpstreamSpec& a, const UpstreamSpec& b) {
  return a.url == b.url && a.headers == b.headers && a.oauth == b.oauth && a.argv == b.argv &&
         a.cwd == b.cwd && a.env == b.env;
}

}  // namespace toolmux
