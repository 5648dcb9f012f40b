// A Logger whose lines a test reads back, from a file of its own.
#pragma once

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/logger.h"
#include "tests/support/temp_dir.h"

namespace toolmux::testing {

struct CapturedLog {
  TempDir dir;
  std::FILE* file = std::fopen((dir.path() / "log").c_str(), "w");
  Logger logger{file};
  CapturedLog() = default;
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  ~CapturedLog() { std::fclose(file); }
  // The lines logged so far with this event.
  std::vector<nlohmann::json> lines(const std::string& event) {
    std::fflush(file);
    std::istringstream text(read_file(dir.path() / "log"));
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(text, line);) {
      if (auto record = nlohmann::json::parse(line); record["event"] == event)
        out.push_back(record);
    }
    return out;
  }
};

}  // namespace toolmux::testing
