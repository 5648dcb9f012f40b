// What a command tool is, as a catalog file declares it: the argv template,
// working directory, environment and output caps, the check of the template
// against the tool's input schema, and the filling of its placeholders. Running
// it is catalog/providers/command_tools.h.
//
// The argv template's placeholders ("{name}") are filled from the arguments
// after they passed the schema check; a value is always exactly one argv
// element (or, for an array argument filling a whole element, one element per
// item). An element whose placeholder names an absent argument is left out.
// "{{" and "}}" stand for literal braces.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/problem.h"

namespace toolmux {

using nlohmann::json;

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

}  // namespace toolmux
