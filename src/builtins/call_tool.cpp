#include "src/builtins/call_tool.h"

namespace toolmux {

Problems register_call_tool(ToolRegistry& registry) {
  using nlohmann::json;
  ToolSpec spec;
  spec.name = kCallTool;
  spec.title = "Call a tool by name";
  spec.description =
      "Call any tool this server offers by its name, with its arguments, including tools that "
      "are not in your tool list (find them with tool_search). The call is checked and "
      "answered exactly as a direct call of that tool would be.";
  spec.input_schema = {
      {"type", "object"},
      {"properties",
       {{"name", {{"type", "string"}, {"minLength", 1}, {"description", "The tool's name."}}},
        {"arguments",
         {{"type", "object"},
          {"description", "The tool's arguments, as its inputSchema describes them."}}},
        {"reason",
         {{"type", "string"},
          {"maxLength", 500},
          {"description",
           "Why you make this call, in a sentence: shown to the person asked to confirm a call "
           "that changes or deletes something."}}}}},
      {"required", {"name"}},
      {"additionalProperties", false}};
  // It can reach any tool: it is listed with the worst class the caller can
  // reach through it (src/assembly/tool_catalog.h, call_tool_listing); each
  // call is still judged by the tool it names.
  spec.side_effect = "destructive";
  spec.timeout = std::chrono::milliseconds(24 * 3600 * 1000);
  spec.runs_on_reader = false;  // the tool it names may take long, or ask for confirmation
  spec.schemas_vetted = true;   // toolmux's own: compiled at first use (tool.h)
  return registry.add(std::move(spec), [](const json&, CallContext&) {
    return ToolResult::error("call_tool is served by the call pipeline and has no handler");
  });
}

}  // namespace toolmux
