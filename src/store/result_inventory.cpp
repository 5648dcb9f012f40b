#include "src/store/result_inventory.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "src/store/db_slots.h"
#include "src/store/pg_result_store.h"
#include "src/store/pg_store.h"
#include "src/store/result_text.h"
#include "src/store/rocksdb_result_store.h"

namespace toolmux {

namespace fs = std::filesystem;

// One store: a RocksDB slot (folder set), or PostgreSQL.
struct ResultInventory::Shelf {
  fs::path folder;  // empty: PostgreSQL
  std::unique_ptr<ResultStore> store;
  bool writable = false;
};

ResultInventory::ResultInventory() = default;
ResultInventory::~ResultInventory() = default;

Result<std::unique_ptr<ResultInventory>> ResultInventory::open(const ResultStoreOptions& options) {
  std::unique_ptr<ResultInventory> inventory(new ResultInventory());
  ResultStoreOptions& o = inventory->options_;
  o.postgres = options.postgres;
  o.data_dir = options.data_dir;
  // Nothing is past the retention here (result_text::retention_ns caps it).
  o.retention = std::chrono::seconds::max();
  if (o.postgres) {
    auto store = PgResultStore::open(o);
    if (!store.ok()) return store.status();
    auto shelf = std::make_unique<Shelf>();
    shelf->store = std::move(*store);
    shelf->writable = true;
    inventory->shelves_.push_back(std::move(shelf));
    inventory->where_ = "the store at " + o.postgres->target();
    return inventory;
  }
  const fs::path base = o.data_dir / "results";
  for (fs::path& folder : existing_slots(base)) {
    auto store = RocksDbResultStore::open_slot(o, folder, RocksDbResultStore::Access::read_only);
    if (!store.ok()) return store.status();
    auto shelf = std::make_unique<Shelf>();
    shelf->folder = std::move(folder);
    shelf->store = std::move(*store);
    inventory->shelves_.push_back(std::move(shelf));
  }
  inventory->where_ = base.string();
  return inventory;
}

Result<std::vector<StoredResult>> ResultInventory::list() const {
  std::vector<StoredResult> all;
  for (const auto& shelf : shelves_) {
    auto listed = shelf->store->list_all();
    if (!listed.ok()) return listed.status();
    all.insert(all.end(), std::make_move_iterator(listed->begin()),
               std::make_move_iterator(listed->end()));
  }
  // Each slot's are in order already; stable keeps that order within a time.
  std::stable_sort(all.begin(), all.end(), [](const StoredResult& a, const StoredResult& b) {
    return a.created < b.created;
  });
  return all;
}

Result<ResultInventory::Shelf*> ResultInventory::shelf_of(std::string_view id) const {
  for (const auto& shelf : shelves_) {
    auto listed = shelf->store->list_all();
    if (!listed.ok()) return listed.status();
    for (const StoredResult& r : *listed) {
      if (r.id == id) return shelf.get();
    }
  }
  return result_text::no_such_result(id);
}

Result<StoredResult> ResultInventory::find(std::string_view id) const {
  for (const auto& shelf : shelves_) {
    auto listed = shelf->store->list_all();
    if (!listed.ok()) return listed.status();
    for (StoredResult& r : *listed) {
      if (r.id == id) return std::move(r);
    }
  }
  return result_text::no_such_result(id);
}

Result<ResultPage> ResultInventory::read(const StoredResult& result, std::uint64_t offset_chars,
                                         std::size_t max_chars) const {
  Result<ResultPage> page = result_text::not_found();
  for (const auto& shelf : shelves_) {
    page = shelf->store->read(result.owner, result.id, offset_chars, max_chars);
    if (!page.status().is_not_found()) return page;
  }
  return page;
}

Status ResultInventory::remove(std::string_view id) {
  auto shelf = shelf_of(id);
  if (!shelf.ok()) return shelf.status();
  Shelf& s = **shelf;
  if (!s.writable) {
    // Only one process may write a slot: the one that holds it, if any.
    if (slot_held(s.folder)) {
      return Status::io_error("result " + std::string(id) + " is in " + s.folder.string() +
                              ", which a running toolmux holds: only that process can delete " +
                              "it (when its session ends, or past the retention)");
    }
    // The read-only view stays until the writer is open (a read-only open
    // takes no lock, so both may be open at once), then gives way to it.
    auto writer =
        RocksDbResultStore::open_slot(options_, s.folder, RocksDbResultStore::Access::write);
    if (!writer.ok()) return writer.status();
    s.store = std::move(*writer);
    s.writable = true;
  }
  return s.store->remove(id);
}

}  // namespace toolmux
