// Where large tool results go instead of the response, read back page by
// page by read_tool_result: an interface with two implementations, one
// contract (the comments below hold for both).
//
// - RocksDbResultStore (rocksdb_result_store.h): a RocksDB database in the
//   data directory, for one machine (the default).
// - PgResultStore (pg_result_store.h): PostgreSQL, shared by every toolmux
//   instance of a deployment: a result stored through one is read through
//   any other.
//
// A result belongs to its owner (the session that produced it): read() gives
// the same not-found answer for an id that does not exist and for one that
// belongs to someone else, so ids cannot be probed. Ids are 256-bit random
// values (base64url, 43 characters), compared exactly as given. Offsets and
// lengths count Unicode characters. A page read loads only the stored chunks
// (64 KiB of text each) that the page covers, never a whole result.
//
// Thread-safe: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

namespace toolmux {

class PgStore;  // src/store/pg_store.h

struct ResultStoreOptions {
  // PostgreSQL when set (data_dir and max_slots are not used then), else RocksDB.
  std::shared_ptr<PgStore> postgres;
  std::filesystem::path data_dir;             // RocksDB: data_dir/results/slot-N
  std::chrono::seconds retention{24 * 3600};  // results older than this are gone
  std::uint64_t max_bytes = 1ull << 30;       // past this, the oldest results are evicted
  std::size_t max_slots = 16;                 // RocksDB: processes sharing data_dir at once
  // The wall clock, replaceable in tests of expiry.
  std::function<std::chrono::system_clock::time_point()> now = std::chrono::system_clock::now;
};

struct ResultPage {
  std::string text;                          // whole UTF-8 characters only
  std::uint64_t offset = 0;                  // in Unicode characters, where `text` starts
  std::optional<std::uint64_t> next_offset;  // absent at the end
  std::uint64_t total_chars = 0;
};

// What a stored text is, for serving it as a resource: its MIME type, and
// whether it is the base64 of binary data (an image, an embedded resource's
// blob), which resources/read then gives back as a blob.
struct StoredFormat {
  static constexpr std::size_t kMaxMimeTypeBytes = 255;
  std::string mime_type = "text/plain";
  bool base64 = false;
};

// One stored result, as ResultStore::list and list_all give it.
struct StoredResult {
  std::string id;
  std::string owner;  // the session that stored it: a bearer secret, never printed
  std::uint64_t bytes = 0;
  std::uint64_t chars = 0;
  std::chrono::system_clock::time_point created;
  StoredFormat format;
};

class ResultStore {
 public:
  // Opens the store the options name (PostgreSQL when options.postgres is
  // set, else RocksDB), creating what is missing; that implementation's open
  // says how it fails.
  static Result<std::unique_ptr<ResultStore>> open(const ResultStoreOptions& options);
  virtual ~ResultStore() = default;

  // Stores `text` (valid UTF-8) for `owner` and returns its new id; evicts the
  // oldest results when the store would exceed max_bytes. Without a format,
  // text/plain text. Fails with invalid_argument when `text` is not UTF-8 or
  // format.mime_type is longer than StoredFormat::kMaxMimeTypeBytes,
  // resource_exhausted when `text` alone is larger than max_bytes, io_error on
  // a storage failure (unavailable when a shared store cannot be reached).
  Result<std::string> put(std::string_view owner, std::string_view text) {
    return put(owner, text, StoredFormat{});
  }
  virtual Result<std::string> put(std::string_view owner, std::string_view text,
                                  const StoredFormat& format) = 0;

  // At most `max_chars` characters from `offset_chars` (both count Unicode
  // characters). not_found when the id is unknown, expired, or not `owner`'s
  // (one answer for all three); out_of_range when offset_chars is past the
  // end. An offset equal to the length gives an empty last page.
  virtual Result<ResultPage> read(std::string_view owner, std::string_view id,
                                  std::uint64_t offset_chars, std::size_t max_chars) const = 0;

  // The results of `owner` that have not expired, oldest first.
  virtual std::vector<StoredResult> list(std::string_view owner) const = 0;

  // Deletes every result of `owner` (its session ended).
  virtual void delete_owner(std::string_view owner) = 0;

  // For the operator (`toolmux results`, src/store/result_inventory.h):
  // every result of every owner, oldest first, including those past the
  // retention that no sweep has deleted yet. RocksDB: the results of this
  // store's slot. io_error when the store cannot be read (unavailable when a
  // shared store cannot be reached).
  virtual Result<std::vector<StoredResult>> list_all() const = 0;

  // Deletes the result `id`, whatever its owner and age. not_found naming
  // the id when the store holds no result of that id; io_error on a storage
  // failure or a store opened read-only (unavailable when a shared store
  // cannot be reached).
  virtual Status remove(std::string_view id) = 0;

  // Deletes results older than the retention; called periodically and at open.
  // Returns how many were deleted.
  virtual std::size_t expire_old() = 0;

  // Total bytes of stored text, and how many results (in a shared store, of
  // every instance).
  virtual std::uint64_t stored_bytes() const = 0;
  virtual std::size_t stored_count() const = 0;
  // Where the results are, for logs: a folder, or a PostgreSQL host, port and
  // database (never a password).
  virtual std::string where() const = 0;
};

}  // namespace toolmux
