#include "src/store/journal_store.h"

#include "src/store/pg_journal_store.h"
#include "src/store/rocksdb_journal_store.h"

namespace toolmux {

Result<std::unique_ptr<JournalStore>> JournalStore::open(const JournalStoreOptions& options) {
  if (options.postgres) {
    auto store = PgJournalStore::open(options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<JournalStore>(std::move(*store));
  }
  auto store = RocksDbJournalStore::open(options);
  if (!store.ok()) return store.status();
  return std::unique_ptr<JournalStore>(std::move(*store));
}

}  // namespace toolmux
