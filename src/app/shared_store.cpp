#include "src/app/shared_store.h"

#include <cstdlib>

#include "src/base/file_io.h"

namespace toolmux {

namespace {

constexpr std::size_t kMaxStoreUrlFileBytes = std::size_t{64} << 10;

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

}  // namespace

Result<std::string> store_connection_string(const ServeOptions& options) {
  if (!options.store_url_file.empty()) {
    const std::string file = options.store_url_file.string();
    // Only a regular file, and a connection string is short: a FIFO or a
    // device named by mistake is refused at once, never waited on.
    Result<std::string> text = read_regular_file(options.store_url_file, kMaxStoreUrlFileBytes);
    if (!text.ok()) return Status::invalid_argument("--store-url-file: " + text.message());
    const std::string line = trimmed(text->substr(0, text->find('\n')));
    if (line.empty()) {
      return Status::invalid_argument("--store-url-file " + file +
                                      ": its first line is empty; it should be the connection "
                                      "string (postgresql://... or host=... dbname=...)");
    }
    return line;
  }
  const char* value = std::getenv(kPostgresUrlVariable);
  std::string url = value ? trimmed(value) : std::string();
  if (url.empty()) {
    return Status::invalid_argument(
        std::string("--store postgresql needs a connection string: set ") + kPostgresUrlVariable +
        " or give --store-url-file FILE");
  }
  return url;
}

Result<std::shared_ptr<PgStore>> open_shared_store(const ServeOptions& options) {
  Result<std::string> url = store_connection_string(options);
  if (!url.ok()) return url.status();
  PgStoreOptions store;
  store.conninfo = std::move(*url);
  return PgStore::open(store);
}

}  // namespace toolmux
