// The resolve_tool stage (request): finds the tool the call names, by name or
// alias, sets `tool` and passes the call on. An unknown name is answered with
// the closest names, without calling next: a -32602 error (outcome
// unknown_tool), or an isError result when the catalog's policy says so or
// when the name came through call_tool (the request itself was fine there).
// Needs unwrap_call_tool before it: a call still naming call_tool is answered
// CallResult::out_of_order().
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "src/pipeline/call.h"

namespace toolmux {

namespace stages {
CallStage resolve_tool();
}  // namespace stages

// The tool a call of `requested_name` with `arguments` reaches (through
// aliases, and through call_tool to the tool it names), or null when it
// reaches none. For what the call needs before it runs: its deadline, and
// the thread it may run on.
const RegisteredTool* reached_tool(const Catalog& catalog, const std::string& requested_name,
                                   const nlohmann::json& arguments);

}  // namespace toolmux
