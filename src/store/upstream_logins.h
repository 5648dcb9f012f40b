// The logins `toolmux login UPSTREAM` keeps: for each upstream whose "oauth"
// grant is authorization_code, the client it registered and the tokens its
// authorization server granted (OAuthClient::login_text, transports/
// oauth_client.h), read by every toolmux that serves the catalog and written
// again by the one that refreshes them. Secrets: never logged, never in a
// result, never in an error message.
//
// Two implementations, one contract:
// - LoginFiles: one file per upstream, data_dir/logins/NAME.json, mode 0600
//   in a folder of mode 0700, written whole or not at all
//   (write_file_atomically), read without following a symbolic link. Files,
//   not the RocksDB beside them, because each process on a data directory has
//   a RocksDB of its own (its journal slot) while a login is for all of them.
// - PgLogins: the table toolmux_upstream_logins of a deployment's PostgreSQL
//   store, one row per upstream name.
//
// Thread-safe.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "src/base/status.h"
#include "src/store/pg_store.h"

namespace toolmux {

class UpstreamLogins {
 public:
  // The largest login kept, in bytes.
  static constexpr std::size_t kMaxLoginBytes = std::size_t{64} * 1024;

  virtual ~UpstreamLogins() = default;
  // The login kept for `upstream`, nullopt when there is none; an error when
  // the store cannot be read (or holds something that is not a login file).
  virtual Result<std::optional<std::string>> read(const std::string& upstream) const = 0;
  // Keeps `login` for `upstream`, replacing any before; invalid_argument when
  // it is over kMaxLoginBytes.
  virtual Status write(const std::string& upstream, const std::string& login) = 0;
  // Forgets it: true when there was one.
  virtual Result<bool> remove(const std::string& upstream) = 0;
  // Where they are kept, for messages: a folder, or "PostgreSQL".
  virtual std::string where() const = 0;
};

// Files in data_dir/logins (made, mode 0700, at the first write).
std::unique_ptr<UpstreamLogins> login_files(const std::filesystem::path& data_dir);

// The table in PostgreSQL (schema version 8, src/store/pg_schema.cpp).
std::unique_ptr<UpstreamLogins> pg_logins(std::shared_ptr<PgStore> store);

}  // namespace toolmux
