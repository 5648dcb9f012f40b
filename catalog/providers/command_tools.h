// Command tools: catalog-declared tools that run a program.
//
// The argv template's placeholders ("{name}") are filled from the arguments
// after they passed the schema check; the program is run directly, never
// through a shell, so a value is always exactly one argv element (or, for an
// array argument filling a whole element, one element per item). An element
// whose placeholder names an absent argument is left out. "{{" and "}}" stand
// for literal braces.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "catalog/tool.h"
#include "src/base/problem.h"

namespace toolmux {

struct CommandSpec {
  std::vector<std::string> argv;            // template, argv[0] is the program
  std::filesystem::path cwd;                // absolute; empty = toolmux's working directory
  std::vector<std::string> env_allow;       // names of toolmux's variables the child inherits
  std::map<std::string, std::string> env;   // fixed variables set for the child
  std::size_t max_output_bytes = 1 << 20;   // cap on captured stdout
  std::size_t max_stderr_bytes = 64 << 10;  // cap on captured stderr
};

// Checks the template against the tool's input schema: every placeholder names
// a property the schema declares; braces balance. Pointers are relative to the
// command object ("/argv/2").
Problems check_command_spec(const CommandSpec& command, const json& input_schema);

// Fills the template. Throws std::invalid_argument only for a template that
// check_command_spec would refuse.
std::vector<std::string> expand_argv(const std::vector<std::string>& argv_template,
                                     const json& arguments);

// The handler that runs the command: stdout becomes the text result; a
// non-zero exit, a signal or a failure to start is an isError result carrying
// the captured stderr; the deadline and cancellation kill the process group.
// While the command runs, progress is reported about once a second.
ToolHandler make_command_handler(CommandSpec command);

}  // namespace toolmux
