// Command tools: running what catalog/command_spec.h declares. The program is
// run directly, never through a shell, so a filled placeholder is always
// exactly the argv elements expand_argv made of it.
#pragma once

#include "catalog/command_spec.h"
#include "catalog/tool.h"

namespace toolmux {

// The handler that runs the command: stdout becomes the text result; a
// non-zero exit, a signal or a failure to start is an isError result carrying
// the captured stderr; the deadline and cancellation kill the process group.
// While the command runs, progress is reported about once a second.
ToolHandler make_command_handler(CommandSpec command);

}  // namespace toolmux
