// The journal store (journal_store.h) in RocksDB, for one machine: databases
// in numbered slots, data_dir/journal/slot-N.
//
// Several processes may use one data directory at once: as the result store,
// the journal lives in numbered slots, a process taking the lowest free one
// (a process restarted alone gets slot 0 back, and with it the intents its
// predecessor left). Replay and interruption are per slot: open() marks the
// intents of its slot that have no outcome interrupted, each in one batch
// with its audit record. read_journal and read_audit read every slot.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "src/store/journal_store.h"

namespace toolmux {

class RocksDbJournalStore final : public JournalStore {
 public:
  // A Status naming the folder and RocksDB's reason when no slot could be
  // opened: resource_exhausted when every slot is taken, io_error otherwise.
  static Result<std::unique_ptr<RocksDbJournalStore>> open(const JournalStoreOptions& options);
  ~RocksDbJournalStore() override;

  Status begin(const JournalIntent& intent) override;
  Status finish(const std::string& call_id, const std::string& outcome,
                const nlohmann::json& result, const AuditRecord& audit) override;
  Status audit(const AuditRecord& record) override;
  std::optional<JournalEntry> find_by_key(const std::string& principal,
                                          const std::string& key) const override;
  std::vector<AuditRecord> latest_audit(std::size_t limit) const override;
  const std::vector<JournalEntry>& interrupted() const override;
  std::string where() const override { return folder().string(); }

  // The slot folder this store holds (data_dir/journal/slot-N).
  const std::filesystem::path& folder() const;

 private:
  struct Impl;
  explicit RocksDbJournalStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace toolmux
