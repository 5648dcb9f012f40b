// The check_arguments stage (handler side: its answer can be as long as the
// arguments, so the result stages bound it): the JSON boundary, then the
// operator's argument policy (argument aliases, defaults, fixed values), then
// the tool's input schema. Checked arguments are set in `arguments` and the
// call passed on; a failure is answered with an invalid_arguments isError
// result naming each argument and rule, and next is not called. Needs `tool`
// (resolve_tool before it), else CallResult::out_of_order().
#pragma once

#include "src/pipeline/call.h"

namespace toolmux::stages {

CallStage check_arguments();

}  // namespace toolmux::stages
