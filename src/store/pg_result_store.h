// The result store (result_store.h) in PostgreSQL, shared by every toolmux
// instance on one database (pg_store.h): a result stored through one
// instance is read through any other.
//
// Tables (migration 1, pg_schema.cpp): toolmux_results, one row per result
// (owner, creation time, size in bytes and characters, format), and
// toolmux_result_chunks, its text in chunks of at most 64 KiB cut on
// character boundaries, each row with its first character's offset and its
// character count. A page reads the result's row, then only the chunks it
// covers. A result is written in one transaction, so a crash leaves all of it
// or none.
//
// Expiry runs in one instance at a time (an advisory lock: the others skip
// it); eviction past max_bytes, under another advisory lock, counts the
// results of every instance. The times compared are each instance's clock
// (options.now): instances' clocks should agree to well within the retention.
//
// Thread-safe: every method may be called from any thread; each takes a
// connection from the store's pool for its duration.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "src/store/pg_store.h"
#include "src/store/result_store.h"

namespace toolmux {

class PgResultStore final : public ResultStore {
 public:
  // The store on options.postgres (which must be set); deletes what has
  // expired. The pool's Status when no connection can be had.
  static Result<std::unique_ptr<PgResultStore>> open(const ResultStoreOptions& options);

  using ResultStore::put;
  Result<std::string> put(std::string_view owner, std::string_view text,
                          const StoredFormat& format) override;
  Result<ResultPage> read(std::string_view owner, std::string_view id, std::uint64_t offset_chars,
                          std::size_t max_chars) const override;
  std::vector<StoredResult> list(std::string_view owner) const override;
  void delete_owner(std::string_view owner) override;
  Result<std::vector<StoredResult>> list_all() const override;
  Status remove(std::string_view id) override;
  std::size_t expire_old() override;
  std::uint64_t stored_bytes() const override;
  std::size_t stored_count() const override;
  std::string where() const override;

 private:
  explicit PgResultStore(ResultStoreOptions options) : options_(std::move(options)) {}
  std::int64_t now_ns() const;
  std::int64_t cutoff_ns() const;  // results created at or before this have expired

  ResultStoreOptions options_;
  // When put() last swept out expired results, in options_.now's nanoseconds.
  std::atomic<std::int64_t> last_sweep_ns_{0};
};

}  // namespace toolmux
