// `toolmux check`'s fuzzing options (--fuzz, --cases N, --seed S), parsed
// apart from src/cli.h's CommandLine so that the serve options stay as they are.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace toolmux {

struct CheckFuzzOptions {
  bool fuzz = false;
  std::size_t cases = 20;  // 1..1000
  std::size_t seed = 1;
};

// For a `check` command line: moves --fuzz, --cases N and --seed S from
// `args` into `out`, leaving the rest for parse_command_line. Returns a usage
// error ("--cases needs a whole number from 1 to 1000"), or nullopt. Other
// command lines are left alone.
std::optional<std::string> take_check_fuzz_options(std::vector<std::string>& args,
                                                   CheckFuzzOptions& out);

}  // namespace toolmux
