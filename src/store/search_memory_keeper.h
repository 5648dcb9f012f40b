// Where tool_search's memory of use (catalog/search_memory.h) lives between
// runs: a file in the data directory (search_memory_file.h), or a store that
// several instances share (pg_search_memory.h). A keeper loads the memory
// when it is made, keeps it on its own thread, and saves what changed once
// more when it is destroyed.
#pragma once

#include <string>

#include "src/base/status.h"

namespace toolmux {

class SearchMemoryKeeper {
 public:
  virtual ~SearchMemoryKeeper() = default;
  // Where the memory is kept, for the log: a path, or "postgresql".
  virtual std::string where() const = 0;
  // Saves (sends) what changed now; ok when nothing did. A failure is also
  // logged, and tried again later.
  virtual Status save_now() = 0;
};

}  // namespace toolmux
