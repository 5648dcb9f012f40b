// Where large tool results go instead of the response: a RocksDB database in
// the data directory, read back page by page by read_tool_result.
//
// A result belongs to its owner (the session that produced it): read() gives
// the same not-found answer for an id that does not exist and for one that
// belongs to someone else, so ids cannot be probed. Ids are 256-bit random
// values (base64url, 43 characters), compared exactly as given.
//
// Several processes may use one data directory at once (two desktop clients
// launching the same configuration): RocksDB allows one writer per database,
// so the store lives in numbered slots, dir/results/slot-0, slot-1, ..., and a
// process takes the lowest slot no other process holds. A process restarted
// alone gets slot 0 back, with what it had stored.
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

struct ResultStoreOptions {
  std::filesystem::path data_dir;             // the store lives in data_dir/results/slot-N
  std::chrono::seconds retention{24 * 3600};  // results older than this are gone
  std::uint64_t max_bytes = 1ull << 30;       // past this, the oldest results are evicted
  std::size_t max_slots = 16;                 // processes that can share data_dir at once
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

// One stored result, as ResultStore::list gives it.
struct StoredResult {
  std::string id;
  std::uint64_t bytes = 0;
  std::uint64_t chars = 0;
  std::chrono::system_clock::time_point created;
  StoredFormat format;
};

class ResultStore {
 public:
  // Opens the store, creating what is missing. When no slot could be opened,
  // a Status naming the folder and RocksDB's reason: resource_exhausted when
  // every slot is taken or max_slots is 0, io_error otherwise.
  static Result<std::unique_ptr<ResultStore>> open(const ResultStoreOptions& options);
  ~ResultStore();

  // Stores `text` (valid UTF-8) for `owner` and returns its new id; evicts the
  // oldest results when the store would exceed max_bytes. Without a format,
  // text/plain text. Fails with invalid_argument when `text` is not UTF-8 or
  // format.mime_type is longer than StoredFormat::kMaxMimeTypeBytes,
  // resource_exhausted when `text` alone is larger than max_bytes, io_error on
  // a storage failure.
  Result<std::string> put(std::string_view owner, std::string_view text);
  Result<std::string> put(std::string_view owner, std::string_view text,
                          const StoredFormat& format);

  // At most `max_chars` characters from `offset_chars` (both count Unicode
  // characters). not_found when the id is unknown, expired, or not `owner`'s
  // (one answer for all three); out_of_range when offset_chars is past the
  // end. An offset equal to the length gives an empty last page.
  Result<ResultPage> read(std::string_view owner, std::string_view id, std::uint64_t offset_chars,
                          std::size_t max_chars) const;

  // The results of `owner` that have not expired, oldest first.
  std::vector<StoredResult> list(std::string_view owner) const;

  // Deletes every result of `owner` (its session ended).
  void delete_owner(std::string_view owner);

  // Deletes results older than the retention; called periodically and at open.
  // Returns how many were deleted.
  std::size_t expire_old();

  // Total bytes of stored text, and how many results.
  std::uint64_t stored_bytes() const;
  std::size_t stored_count() const;
  // The slot folder this process holds (for logs and tests).
  const std::filesystem::path& folder() const;

  struct Impl;

 private:
  explicit ResultStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace toolmux
