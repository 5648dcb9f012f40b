#include "src/store/lazy_result_store.h"

#include <cstdlib>

namespace toolmux {

Result<ResultStore*> LazyResultStore::get() {
  std::lock_guard lock(mutex_);
  if (!store_) {
    auto opened = ResultStore::open(options_);
    if (!opened.ok()) return opened.status();
    store_ = std::move(opened).value();
  }
  return store_.get();
}

void LazyResultStore::configure(ResultStoreOptions options) {
  std::lock_guard lock(mutex_);
  if (!store_) options_ = std::move(options);
}

ResultStore* LazyResultStore::if_open() {
  std::lock_guard lock(mutex_);
  return store_.get();
}

std::filesystem::path default_data_dir() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state == '/') {
    return std::filesystem::path(state) / "toolmux";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::filesystem::path(home) / ".local" / "state" / "toolmux";
  }
  return std::filesystem::temp_directory_path() / "toolmux-state";
}

}  // namespace toolmux
