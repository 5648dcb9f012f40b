#include "src/store/result_store.h"

#include "src/store/pg_result_store.h"
#include "src/store/rocksdb_result_store.h"

namespace toolmux {

Result<std::unique_ptr<ResultStore>> ResultStore::open(const ResultStoreOptions& options) {
  if (options.postgres) {
    auto store = PgResultStore::open(options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<ResultStore>(std::move(*store));
  }
  auto store = RocksDbResultStore::open(options);
  if (!store.ok()) return store.status();
  return std::unique_ptr<ResultStore>(std::move(*store));
}

}  // namespace toolmux
