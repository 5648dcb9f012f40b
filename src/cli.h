// The command line: parsing only; src/main.cpp runs what it asks for.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "catalog/tool.h"

namespace toolmux {

struct ServeOptions {
  std::filesystem::path catalog_file;        // empty = built-in tools only
  std::vector<std::filesystem::path> roots;  // empty = the working directory
  std::filesystem::path data_dir;            // empty = $XDG_STATE_HOME/toolmux
  bool allow_writes = false;
  std::size_t page_size = 0;  // 0 = all tools on one page
  std::size_t max_message_bytes = std::size_t{16} << 20;
  LogLevel log_level = LogLevel::info;  // of the stderr log
};

struct CommandLine {
  enum class Action { serve, check, search, version, help, usage_error };
  Action action = Action::help;
  ServeOptions serve;
  std::filesystem::path check_file;
  std::string search_query;  // for search
  std::size_t search_limit = 5;
  std::string error;  // for usage_error
};

CommandLine parse_command_line(const std::vector<std::string>& args);
std::string usage_text();

}  // namespace toolmux
