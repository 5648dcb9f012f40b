// The result store (result_store.h) in a RocksDB database in the data
// directory: one machine's, the default.
//
// Several processes may use one data directory at once (two desktop clients
// launching the same configuration): RocksDB allows one writer per database,
// so the store lives in numbered slots, dir/results/slot-0, slot-1, ..., and a
// process takes the lowest slot no other process holds. A process restarted
// alone gets slot 0 back, with what it had stored.
//
// Thread-safe: every method may be called from any thread.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "src/store/result_store.h"

namespace toolmux {

class RocksDbResultStore final : public ResultStore {
 public:
  // Opens the store in options.data_dir, creating what is missing. When no
  // slot could be opened, a Status naming the folder and RocksDB's reason:
  // resource_exhausted when every slot is taken or max_slots is 0, io_error
  // otherwise.
  static Result<std::unique_ptr<RocksDbResultStore>> open(const ResultStoreOptions& options);

  // For the operator (result_inventory.h): the store in one slot folder
  // (options.data_dir/results/slot-N) that holds a database, not the lowest
  // free one. Access::read_only reads beside the process that may hold the
  // slot, which keeps writing meanwhile (every table file is opened up front,
  // so its compactions cannot pull one away; a reader sees what was written
  // before it opened): put and remove then fail with io_error, delete_owner
  // and expire_old do nothing, and nothing expires at open. Access::write
  // takes the slot as open() does, and fails with io_error when another
  // process holds it. io_error naming the folder and RocksDB's reason when
  // it cannot be opened.
  enum class Access { read_only, write };
  static Result<std::unique_ptr<RocksDbResultStore>> open_slot(const ResultStoreOptions& options,
                                                               const std::filesystem::path& folder,
                                                               Access access);
  ~RocksDbResultStore() override;

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
  std::string where() const override { return folder().string(); }

  // The slot folder this process holds (for logs and tests).
  const std::filesystem::path& folder() const;

  struct Impl;

 private:
  explicit RocksDbResultStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace toolmux
