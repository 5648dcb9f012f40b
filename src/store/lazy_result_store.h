// The result store, opened on first use: a server that never offloads never
// touches the disk, and starts without waiting for RocksDB.
// Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "src/store/result_store.h"

namespace toolmux {

class LazyResultStore {
 public:
  explicit LazyResultStore(ResultStoreOptions options) : options_(std::move(options)) {}

  // Replaces the options; only before the store is first opened.
  void configure(ResultStoreOptions options);

  // The store (never null), opening it on the first call; ResultStore::open's
  // Status when it cannot be opened (each later call tries again).
  Result<ResultStore*> get();
  // The store if it is open, else null; never opens it.
  ResultStore* if_open();

 private:
  ResultStoreOptions options_;
  std::mutex mutex_;
  std::unique_ptr<ResultStore> store_;
};

// The default data directory: $XDG_STATE_HOME/toolmux, else ~/.local/state/toolmux.
std::filesystem::path default_data_dir();

}  // namespace toolmux
