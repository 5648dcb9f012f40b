// The check_arguments stage (handler side: its answer can be as long as the
// arguments, so the result stages bound it): the JSON boundary, then the
// operator's argument policy (argument aliases, defaults, fixed values, and
// with "unknownArguments": "reject" no argument the tool does not declare),
// then the tool's input schema and its defaults. Checked arguments are set in
// `arguments` (and those the defaults filled in, in `filled_arguments`) and the
// call passed on; a failure is answered with an invalid_arguments isError
// result naming each argument and rule, and next is not called. Needs `tool`
// (resolve_tool before it), else CallResult::out_of_order().
#pragma once

#include "catalog/argument_check.h"
#include "src/pipeline/call.h"

namespace toolmux {

// What check_arguments does after the argument aliases, for arguments
// already past the JSON boundary (`check.arguments`): the operator's fixed
// values and "unknownArguments", then the tool's input schema and its
// defaults. Needs `call.tool` and `call.catalog`. Also used by before_hook on
// the arguments a hook rewrote (src/pipeline/call_hooks.h).
void check_for_tool(const ToolCall& call, ArgumentCheck& check);

}  // namespace toolmux

namespace toolmux::stages {

CallStage check_arguments();

}  // namespace toolmux::stages
