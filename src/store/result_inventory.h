// Every stored result of a data directory or of a shared store, whoever
// stored it, for the operator (`toolmux results`, src/app/store_commands.h).
//
// RocksDB: every slot of data_dir/results (one per process that shared the
// data directory, rocksdb_result_store.h), each opened read-only beside the
// server that may hold it, which keeps writing meanwhile; a slot is opened
// for writing only to delete from it, and only when no live process holds
// it. PostgreSQL: the results of every instance.
//
// Nothing expires here: the retention is the catalog's, which the operator's
// command does not read. What is stored is shown, including results past the
// retention that no sweep has deleted yet.
//
// Not thread-safe: one command's, on one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"
#include "src/store/result_store.h"

namespace toolmux {

class ResultInventory {
 public:
  // The store options names: options.postgres when set, else every slot of
  // options.data_dir/results that holds a database (none when there is no
  // such folder). Only data_dir and postgres are used. io_error naming the
  // first slot that cannot be read; the pool's Status when PostgreSQL cannot
  // be reached.
  static Result<std::unique_ptr<ResultInventory>> open(const ResultStoreOptions& options);
  ~ResultInventory();
  ResultInventory(const ResultInventory&) = delete;
  ResultInventory& operator=(const ResultInventory&) = delete;

  // Every result of every owner, oldest first (RocksDB: the slots merged by
  // creation time). io_error (unavailable) when the store cannot be read.
  Result<std::vector<StoredResult>> list() const;
  // The result `id`; not_found naming the id when no slot holds one.
  Result<StoredResult> find(std::string_view id) const;
  // A page of `result` (as list() or find() gave it), as ResultStore::read
  // gives one; not_found when it was deleted meanwhile.
  Result<ResultPage> read(const StoredResult& result, std::uint64_t offset_chars,
                          std::size_t max_chars) const;
  // Deletes the result `id`, whatever its owner. not_found naming the id
  // when no slot holds it. RocksDB: io_error when a live process holds its
  // slot (only that process may write there: it deletes the result when its
  // session ends or the retention passes), or the slot cannot be opened for
  // writing; once opened, the slot stays this inventory's until it goes.
  Status remove(std::string_view id);
  // For messages: the results folder, or "the store at HOST:PORT/DB".
  const std::string& where() const { return where_; }

 private:
  struct Shelf;
  ResultInventory();
  // The shelf holding `id` and its metadata, or not_found.
  Result<Shelf*> shelf_of(std::string_view id) const;

  ResultStoreOptions options_;
  std::vector<std::unique_ptr<Shelf>> shelves_;
  std::string where_;
};

}  // namespace toolmux
