// The PostgreSQL store of a deployment of many toolmux instances: one pool of
// connections to one database, its schema brought up to date when opened.
// What each kind of shared state keeps there has a store of its own built on
// it (pg_result_store.h; the state key in state_key.h).
//
// Thread-safe. Shared (std::shared_ptr) by the stores built on it.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "src/base/status.h"

namespace toolmux {

class PgPool;

struct PgStoreOptions {
  std::string conninfo;  // a libpq URI or key=value string; never logged
  std::size_t max_connections = 8;
  std::chrono::milliseconds acquire_timeout{5'000};
  std::chrono::seconds connect_timeout{5};
  std::chrono::milliseconds statement_timeout{30'000};
};

class PgStore {
 public:
  // Connects (unavailable naming host, port and database when the server
  // cannot be reached within connect_timeout: no waiting beyond it), then
  // applies the schema's migrations (pg_schema.h: invalid_argument when the
  // database is newer than this toolmux). invalid_argument when the
  // connection string does not parse (without repeating it).
  static Result<std::shared_ptr<PgStore>> open(const PgStoreOptions& options);

  // Connects once and reads the schema version (0: no toolmux tables yet),
  // changing nothing: for `toolmux doctor`. The same errors as open(), and
  // open()'s invalid_argument when the database is newer than this toolmux.
  struct Probe {
    std::string target;  // "host H port P database D"
    int schema_version = 0;
  };
  static Result<Probe> probe(const PgStoreOptions& options);
  ~PgStore();
  PgStore(const PgStore&) = delete;
  PgStore& operator=(const PgStore&) = delete;

  PgPool& pool() { return *pool_; }
  // "host H port P database D", for messages and logs.
  const std::string& target() const;
  // The schema version the database is at.
  int schema_version() const { return schema_version_; }

 private:
  PgStore(std::unique_ptr<PgPool> pool, int version);
  std::unique_ptr<PgPool> pool_;
  int schema_version_;
};

}  // namespace toolmux
