// The PostgreSQL store of `serve --store postgresql` (src/store/pg_store.h):
// where its connection string comes from, and opening it. The connection
// string may hold a password: nothing here logs it or puts it in a message.
#pragma once

#include <memory>
#include <string>

#include "src/assembly/serve_options.h"
#include "src/base/status.h"
#include "src/store/pg_store.h"

namespace toolmux {

// The environment variable that holds the connection string.
inline constexpr const char* kPostgresUrlVariable = "TOOLMUX_POSTGRES_URL";

// The connection string: the first line of options.store_url_file, trimmed,
// when that is given, else $TOOLMUX_POSTGRES_URL, trimmed. invalid_argument
// naming the file or the variable (never what they hold) when the file
// cannot be read or either is empty or missing.
Result<std::string> store_connection_string(const ServeOptions& options);

// The store, connected and its schema brought up to date (PgStore::open);
// its Status, which names host, port and database, when it cannot be.
Result<std::shared_ptr<PgStore>> open_shared_store(const ServeOptions& options);

}  // namespace toolmux
