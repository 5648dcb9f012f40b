#include "src/store/pg_store.h"

#include "src/store/pg_connection.h"
#include "src/store/pg_schema.h"

namespace toolmux {

Result<std::shared_ptr<PgStore>> PgStore::open(const PgStoreOptions& options) {
  PgPoolOptions pool_options;
  pool_options.conninfo = options.conninfo;
  pool_options.max_connections = options.max_connections;
  pool_options.acquire_timeout = options.acquire_timeout;
  pool_options.connect.connect_timeout = options.connect_timeout;
  pool_options.connect.statement_timeout = options.statement_timeout;
  auto pool = PgPool::make(pool_options);
  if (!pool.ok()) return pool.status();
  int version = 0;
  {
    auto lease = (*pool)->acquire();
    if (!lease.ok()) return lease.status();
    auto migrated = migrate_pg_schema(**lease);
    if (!migrated.ok()) return migrated.status();
    version = *migrated;
  }
  return std::shared_ptr<PgStore>(new PgStore(std::move(*pool), version));
}

PgStore::PgStore(std::unique_ptr<PgPool> pool, int version)
    : pool_(std::move(pool)), schema_version_(version) {}

PgStore::~PgStore() = default;

const std::string& PgStore::target() const { return pool_->target(); }

}  // namespace toolmux
