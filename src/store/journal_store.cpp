#include "src/store/journal_store.h"

#include "src/store/pg_journal_store.h"
#include "src/store/rocksdb_journal_store.h"
#include "src/store/spooled_journal_store.h"

namespace toolmux {

Result<std::unique_ptr<JournalStore>> JournalStore::open(const JournalStoreOptions& options) {
  std::unique_ptr<JournalStore> store;
  // The spool of each: RocksDB's belongs to its slot (only the slot's holder
  // can write its calls); PostgreSQL's to any process on this data directory.
  SpoolOptions spool;
  spool.logger = options.logger;
  if (options.postgres) {
    auto opened = PgJournalStore::open(options);
    if (!opened.ok()) return opened.status();
    store = std::move(*opened);
    spool.base = options.data_dir / "journal" / "postgresql";
  } else {
    auto opened = RocksDbJournalStore::open(options);
    if (!opened.ok()) return opened.status();
    spool.base = (*opened)->folder();
    store = std::move(*opened);
  }
  if (!options.spool || options.data_dir.empty()) return store;
  auto spooled = SpooledJournalStore::open(std::move(store), std::move(spool));
  if (!spooled.ok()) return spooled.status();
  return std::unique_ptr<JournalStore>(std::move(*spooled));
}

}  // namespace toolmux
