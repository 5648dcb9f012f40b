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

Result<PgStore::Probe> PgStore::probe(const PgStoreOptions& options) {
  PgConnectOptions connect;
  connect.connect_timeout = options.connect_timeout;
  connect.statement_timeout = options.statement_timeout;
  auto connection = PgConnection::connect(options.conninfo, connect);
  if (!connection.ok()) return connection.status();
  auto exists = (*connection)->exec("SELECT to_regclass('toolmux_schema') IS NOT NULL");
  if (!exists.ok()) return exists.status();
  if (exists->text(0, 0) != "t") return Probe{(*connection)->target(), 0};
  auto version = (*connection)->exec("SELECT coalesce(max(version), 0) FROM toolmux_schema");
  if (!version.ok()) return version.status();
  const auto found = static_cast<int>(version->integer(0, 0));
  const int known = pg_migrations().back().version;
  if (found > known) return newer_schema(found, known);
  return Probe{(*connection)->target(), found};
}

PgStore::PgStore(std::unique_ptr<PgPool> pool, int version)
    : pool_(std::move(pool)), schema_version_(version) {}

PgStore::~PgStore() = default;

const std::string& PgStore::target() const { return pool_->target(); }

}  // namespace toolmux
