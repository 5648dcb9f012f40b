// The unwrap_call_tool stage (request): a call of call_tool {name, arguments}
// (src/builtins/call_tool.h), by that name or an alias of it, becomes a call
// of `name` with `arguments`, and the boundary violations found under them,
// with `via_call_tool` set; the rest of the chain then treats it exactly as a
// direct call of that tool. A call_tool call that cannot be unwrapped (no
// name, arguments not an object, another key, call_tool naming itself, a
// boundary violation outside /arguments) is answered with an
// invalid_arguments isError result, and next is not called. Any other call is
// passed on untouched.
#pragma once

#include "src/pipeline/call.h"

namespace toolmux::stages {

CallStage unwrap_call_tool();

}  // namespace toolmux::stages
