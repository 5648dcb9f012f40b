// The journal of mutations and the audit trail, in one RocksDB database per
// slot (data_dir/journal/slot-N).
//
// Layout (one column family; every key starts with a one-letter kind and '/';
// numbers big-endian, times as nanoseconds since the epoch with the sign bit
// flipped, so that byte order is time order):
//
//   e/<seq, be64>              a journal entry (JSON): the intent, then also
//                              its outcome and end. seq, a per-slot counter,
//                              orders the entries as begin() took them.
//   c/<call id>                seq: entries by call id (finish, duplicates).
//   k/<principal length, be32><principal><key>
//                              seq: the idempotency index.
//   p/<seq, be64>              empty: entries without an outcome yet, which
//                              open() marks interrupted.
//   r/<seq, be64>              the result recorded for replay (JSON text).
//   x/<ended, be64><seq, be64> empty: entries by end, for retention.
//   a/<time, be64><seq, be64>  an audit record (JSON), in time order; seq
//                              (the same counter) orders records of the
//                              same nanosecond.
//
// begin() writes e/, c/, p/ and k/ in one synced batch; finish() writes e/,
// r/, x/ and a/ and deletes p/ in one synced batch, so an outcome never
// exists without its audit record. Retention deletes old audit records with
// one DeleteRange over a/ and old finished entries by walking x/.
//
// Readers (`toolmux journal`, `toolmux audit`) open each slot read-only
// (open_slot_read_only, db_slots.h), beside the process that writes it.
#include "src/store/rocksdb_journal_store.h"

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>

#include "src/store/db_keys.h"
#include "src/store/db_slots.h"
#include "src/store/journal_records.h"
#include "src/store/rocksdb_write.h"

namespace toolmux {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The interrupted calls open() keeps in memory for interrupted().
constexpr std::size_t kMaxInterruptedListed = 1024;
constexpr std::int64_t kSweepEveryNs = 3'600'000'000'000;  // an hour
// Finished entries deleted per batch when they pass the retention.
constexpr std::size_t kSweepBatch = 1000;

// ---- Keys ----

std::string seq_key(char kind, std::uint64_t seq) {
  std::string k{kind, '/'};
  put_be64(k, seq);
  return k;
}

std::string time_seq_key(char kind, std::int64_t ns, std::uint64_t seq) {
  std::string k{kind, '/'};
  put_be64(k, time_key_value(ns));
  put_be64(k, seq);
  return k;
}

std::string call_key(const std::string& call_id) { return "c/" + call_id; }

std::string idempotency_key(const std::string& principal, const std::string& key) {
  std::string k = "k/";
  put_be32(k, static_cast<std::uint32_t>(principal.size()));
  k += principal;
  k += key;
  return k;
}

std::string seq_value(std::uint64_t seq) {
  std::string v;
  put_be64(v, seq);
  return v;
}

std::optional<std::uint64_t> seq_from_value(std::string_view v) {
  if (v.size() != 8) return std::nullopt;
  return get_be(v, 0, 8);
}

// ---- Reading beside the writer ----

// One slot opened for reading (open_slot_read_only).
struct SlotReader {
  fs::path folder;
  bool held = false;  // a live process holds it (slot_held)
  std::unique_ptr<rocksdb::DB> db;
};

Result<std::vector<SlotReader>> open_readers(const fs::path& data_dir) {
  std::vector<SlotReader> readers;
  for (fs::path& folder : existing_slots(data_dir / "journal")) {
    SlotReader reader;
    // Before opening: an intent without outcome is running only if its
    // process is alive now, as the entries are read.
    reader.held = slot_held(folder);
    auto db = open_slot_read_only(folder, "the journal");
    if (!db.ok()) return db.status();
    reader.db = std::move(*db);
    reader.folder = std::move(folder);
    readers.push_back(std::move(reader));
  }
  return readers;
}

// An iterator over the keys of one prefix of one slot, with its bounds.
class PrefixCursor {
 public:
  PrefixCursor(rocksdb::DB& db, const std::string& lower, const std::string& upper)
      : lower_(lower), upper_(upper), lower_slice_(lower_), upper_slice_(upper_) {
    rocksdb::ReadOptions ro;
    ro.iterate_lower_bound = &lower_slice_;
    ro.iterate_upper_bound = &upper_slice_;
    ro.fill_cache = false;
    it_.reset(db.NewIterator(ro));
  }
  PrefixCursor(const PrefixCursor&) = delete;
  PrefixCursor& operator=(const PrefixCursor&) = delete;

  rocksdb::Iterator& operator*() { return *it_; }
  rocksdb::Iterator* operator->() { return it_.get(); }

 private:
  std::string lower_;
  std::string upper_;
  rocksdb::Slice lower_slice_;
  rocksdb::Slice upper_slice_;
  std::unique_ptr<rocksdb::Iterator> it_;
};

std::string_view key_of(const rocksdb::Iterator& it) { return {it.key().data(), it.key().size()}; }

std::string_view value_of(const rocksdb::Iterator& it) {
  return {it.value().data(), it.value().size()};
}

Status read_failure(const SlotReader& reader, const rocksdb::Status& status) {
  return Status::io_error("could not read the journal in " + reader.folder.string() + ": " +
                          status.ToString());
}

}  // namespace

// ---- The store ----

struct RocksDbJournalStore::Impl {
  JournalStoreOptions options;
  fs::path folder;
  std::unique_ptr<rocksdb::DB> db;
  SlotClaim claim;  // given up after ~Impl has closed db

  // Held by begin() and finish() from their checks to their writes, and by
  // the sweep of old entries.
  std::mutex mutex;
  std::atomic<std::uint64_t> next_seq{0};
  // When the retention was last applied, in the options' clock.
  std::atomic<std::int64_t> last_sweep_ns{0};
  std::vector<JournalEntry> interrupted;

  ~Impl() {
    if (db) {
      db->Close().PermitUncheckedError();
      db.reset();
    }
  }

  std::int64_t now_ns() const { return to_ns(options.now()); }

  Status write(rocksdb::WriteBatch& batch, bool sync) {
    rocksdb::WriteOptions wo;
    wo.sync = sync;
    const RocksDbWrite unchecked;  // audit() writes beside begin() and finish()
    rocksdb::Status status = db->Write(wo, &batch);
    if (!status.ok()) {
      return Status::io_error("could not write the journal in " + folder.string() + ": " +
                              status.ToString());
    }
    return Status::ok_status();
  }

  // The value of `key`; nullopt when absent (or unreadable).
  std::optional<std::string> get(const std::string& key,
                                 const rocksdb::Snapshot* snapshot = nullptr) const {
    rocksdb::ReadOptions ro;
    ro.snapshot = snapshot;
    std::string value;
    if (!db->Get(ro, key, &value).ok()) return std::nullopt;
    return value;
  }

  std::optional<JournalEntry> entry_at(std::uint64_t seq,
                                       const rocksdb::Snapshot* snapshot = nullptr) const {
    auto text = get(seq_key('e', seq), snapshot);
    return text ? entry_from_text(*text) : std::nullopt;
  }

  // The seq of the last key with `prefix` (its bytes at `at`), if any.
  std::optional<std::uint64_t> last_seq(const std::string& prefix, std::size_t at) const {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    it->SeekForPrev(prefix_end(prefix));
    if (!it->Valid()) return std::nullopt;
    std::string_view key = key_of(*it);
    if (key.substr(0, prefix.size()) != prefix || key.size() < at + 8) return std::nullopt;
    return get_be(key, at, 8);
  }

  void recover_seq() {
    std::uint64_t next = 0;
    if (auto seq = last_seq("e/", 2)) next = std::max(next, *seq + 1);
    if (auto seq = last_seq("a/", 10)) next = std::max(next, *seq + 1);
    next_seq = next;
  }

  // Marks every entry without an outcome interrupted, one batch each.
  Status mark_interrupted() {
    std::vector<std::uint64_t> pending;
    bool ok = scan_prefix(*db, "p/", [&](std::string_view key, std::string_view) {
      if (key.size() == 10) pending.push_back(get_be(key, 2, 8));
      return true;
    });
    if (!ok) return Status::io_error("could not read the journal in " + folder.string());
    for (std::uint64_t seq : pending) {
      rocksdb::WriteBatch batch;
      batch.Delete(seq_key('p', seq));
      auto entry = entry_at(seq);
      if (entry && !entry->outcome) {
        const auto now = options.now();
        entry->outcome = "interrupted";
        entry->ended = now;
        batch.Put(seq_key('e', seq), journal_json_text(entry_json(*entry)));
        batch.Put(time_seq_key('x', to_ns(now), seq), rocksdb::Slice());
        batch.Put(time_seq_key('a', to_ns(now), next_seq++),
                  audit_text(interrupted_record(entry->intent, now)));
      }
      if (Status written = write(batch, true); !written.ok()) return written;
      if (entry && interrupted.size() < kMaxInterruptedListed) {
        interrupted.push_back(std::move(*entry));
      }
    }
    return Status::ok_status();
  }

  // Applies the retention when the last time was an hour ago or more.
  void maybe_sweep() {
    const std::int64_t now = now_ns();
    std::int64_t last = last_sweep_ns.load();
    if (now - last >= kSweepEveryNs && last_sweep_ns.compare_exchange_strong(last, now)) {
      sweep(now);
    }
  }

  // Deletes the audit records and finished entries older than the retention.
  // Best effort: what fails now goes at the next sweep.
  void sweep(std::int64_t now) {
    const std::int64_t cutoff = now - retention_ns(options.audit_retention);
    const std::string audit_end = time_seq_key('a', cutoff, 0);
    bool any_old = false;
    scan_prefix(*db, "a/", [&](std::string_view key, std::string_view) {
      any_old = key < audit_end;
      return false;
    });
    if (any_old) {
      // One range tombstone rather than a delete per record.
      const RocksDbWrite unchecked;
      db->DeleteRange(rocksdb::WriteOptions(), db->DefaultColumnFamily(), "a/", audit_end)
          .PermitUncheckedError();
    }
    const std::string entries_end = time_seq_key('x', cutoff, 0);
    std::lock_guard<std::mutex> lock(mutex);
    for (;;) {
      std::vector<std::string> ended;
      scan_prefix(*db, "x/", [&](std::string_view key, std::string_view) {
        if (key >= entries_end) return false;
        ended.emplace_back(key);
        return ended.size() < kSweepBatch;
      });
      if (ended.empty()) return;
      rocksdb::WriteBatch batch;
      for (const std::string& key : ended) {
        batch.Delete(key);
        if (key.size() != 18) continue;
        const std::uint64_t seq = get_be(key, 10, 8);
        if (auto entry = entry_at(seq)) {
          batch.Delete(call_key(entry->intent.call_id));
          if (!entry->intent.idempotency_key.empty()) {
            batch.Delete(idempotency_key(entry->intent.principal, entry->intent.idempotency_key));
          }
        }
        batch.Delete(seq_key('e', seq));
        batch.Delete(seq_key('r', seq));
      }
      if (!write(batch, false).ok()) return;
    }
  }
};

RocksDbJournalStore::RocksDbJournalStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RocksDbJournalStore::~RocksDbJournalStore() = default;

Result<std::unique_ptr<RocksDbJournalStore>> RocksDbJournalStore::open(
    const JournalStoreOptions& options) {
  auto slot = open_free_slot(options.data_dir / "journal", options.max_slots, small_db_options(),
                             "the journal");
  if (!slot.ok()) return slot.status();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (!impl->options.now) impl->options.now = std::chrono::system_clock::now;
  impl->folder = slot->folder;
  impl->db = std::move(slot->db);
  impl->claim = std::move(slot->claim);
  impl->recover_seq();
  if (Status marked = impl->mark_interrupted(); !marked.ok()) return marked;
  const std::int64_t now = impl->now_ns();
  impl->last_sweep_ns = now;
  impl->sweep(now);
  return std::unique_ptr<RocksDbJournalStore>(new RocksDbJournalStore(std::move(impl)));
}

Status RocksDbJournalStore::begin(const JournalIntent& intent) {
  Impl& s = *impl_;
  if (intent.call_id.empty()) return Status::invalid_argument("a journal intent needs a call id");
  std::lock_guard<std::mutex> lock(s.mutex);
  // A call that ended without finishing (interrupted, timed out, cancelled,
  // ...) may be asked for again: it starts again under the same id and key,
  // in an entry of its own; the earlier entry stays as it was.
  auto taken = [&s](const std::string& key) {
    auto seq_text = s.get(key);
    if (!seq_text) return false;
    auto seq = seq_from_value(*seq_text);
    auto entry = seq ? s.entry_at(*seq) : std::nullopt;
    return !entry || !entry->outcome || *entry->outcome == "ok" || *entry->outcome == "tool_error";
  };
  if (taken(call_key(intent.call_id))) {
    return Status::invalid_argument("call " + intent.call_id + " is already in the journal");
  }
  const bool keyed = !intent.idempotency_key.empty();
  const std::string index_key =
      keyed ? idempotency_key(intent.principal, intent.idempotency_key) : std::string();
  if (keyed && taken(index_key)) {
    return Status::invalid_argument("the idempotency key \"" + intent.idempotency_key +
                                    "\" is already used by another call of this principal");
  }
  const std::uint64_t seq = s.next_seq++;
  JournalEntry entry;
  entry.intent = intent;
  if (entry.intent.started.time_since_epoch().count() == 0) entry.intent.started = s.options.now();
  rocksdb::WriteBatch batch;
  batch.Put(seq_key('e', seq), journal_json_text(entry_json(entry)));
  batch.Put(call_key(intent.call_id), seq_value(seq));
  batch.Put(seq_key('p', seq), rocksdb::Slice());
  if (keyed) batch.Put(index_key, seq_value(seq));
  return s.write(batch, true);
}

Status RocksDbJournalStore::finish(const std::string& call_id, const std::string& outcome,
                                   const nlohmann::json& result, const AuditRecord& audit) {
  Impl& s = *impl_;
  s.maybe_sweep();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto seq_text = s.get(call_key(call_id));
  auto seq = seq_text ? seq_from_value(*seq_text) : std::nullopt;
  auto entry = seq ? s.entry_at(*seq) : std::nullopt;
  if (!entry) return Status::not_found("call " + call_id + " has no intent in the journal");
  // "interrupted" was written by an open that took the call for dead (its
  // outcome waited in a spool): what it came to replaces it.
  const bool late = entry->outcome && *entry->outcome == "interrupted";
  if (entry->outcome && !late) {
    return Status::invalid_argument("call " + call_id + " already has an outcome (" +
                                    *entry->outcome + ")");
  }
  const auto now = s.options.now();
  rocksdb::WriteBatch batch;
  if (late && entry->ended) batch.Delete(time_seq_key('x', to_ns(*entry->ended), *seq));
  entry->outcome = outcome;
  entry->ended = now;
  std::string result_text;
  if (!result.is_null()) {
    result_text = journal_json_text(result);
    if (result_text.size() > kMaxReplayResultBytes) {
      entry->result_too_large = true;
      result_text.clear();
    }
  }
  AuditRecord record = audit;
  if (record.call_id.empty()) record.call_id = call_id;
  if (record.time.time_since_epoch().count() == 0) record.time = now;
  batch.Put(seq_key('e', *seq), journal_json_text(entry_json(*entry)));
  batch.Delete(seq_key('p', *seq));
  if (!result_text.empty()) batch.Put(seq_key('r', *seq), result_text);
  batch.Put(time_seq_key('x', to_ns(now), *seq), rocksdb::Slice());
  batch.Put(time_seq_key('a', to_ns(record.time), s.next_seq++), audit_text(record));
  return s.write(batch, true);
}

Status RocksDbJournalStore::audit(const AuditRecord& record) {
  Impl& s = *impl_;
  s.maybe_sweep();
  AuditRecord copy = record;
  if (copy.time.time_since_epoch().count() == 0) copy.time = s.options.now();
  rocksdb::WriteBatch batch;
  batch.Put(time_seq_key('a', to_ns(copy.time), s.next_seq++), audit_text(copy));
  return s.write(batch, false);
}

std::optional<JournalEntry> RocksDbJournalStore::find_by_key(const std::string& principal,
                                                             const std::string& key) const {
  const Impl& s = *impl_;
  // One snapshot: the entry and its result as one finish() wrote them.
  const SnapshotHold hold(*s.db);
  const rocksdb::Snapshot* snapshot = hold.get();
  auto seq_text = s.get(idempotency_key(principal, key), snapshot);
  auto seq = seq_text ? seq_from_value(*seq_text) : std::nullopt;
  auto entry = seq ? s.entry_at(*seq, snapshot) : std::nullopt;
  if (!entry) return std::nullopt;
  if (entry->outcome && !entry->result_too_large) {
    if (auto text = s.get(seq_key('r', *seq), snapshot)) {
      json result = json::parse(*text, nullptr, false);
      if (!result.is_discarded()) entry->result = std::move(result);
    }
  }
  return entry;
}

std::vector<AuditRecord> RocksDbJournalStore::latest_audit(std::size_t limit) const {
  std::vector<AuditRecord> out;
  if (limit == 0) return out;
  PrefixCursor cursor(*impl_->db, "a/", prefix_end("a/"));
  for (cursor->SeekToLast(); cursor->Valid() && out.size() < limit; cursor->Prev()) {
    if (auto record = audit_from_text(value_of(*cursor))) out.push_back(std::move(*record));
  }
  return out;
}

const std::vector<JournalEntry>& RocksDbJournalStore::interrupted() const {
  return impl_->interrupted;
}

const std::filesystem::path& RocksDbJournalStore::folder() const { return impl_->folder; }

// ---- Readers ----

Status for_each_journal_entry(const std::filesystem::path& data_dir, const JournalEntryFn& fn) {
  auto readers = open_readers(data_dir);
  if (!readers.ok()) return readers.status();
  // A merge of the slots by start: each slot's entries are in begin() order.
  struct Head {
    std::unique_ptr<PrefixCursor> cursor;
    std::optional<JournalEntry> entry;
  };
  std::vector<Head> heads;
  heads.reserve(readers->size());
  const auto advance = [](Head& head, const SlotReader& reader) -> Status {
    head.entry.reset();
    for (; (*head.cursor)->Valid(); (*head.cursor)->Next()) {
      head.entry = entry_from_text(value_of(**head.cursor));
      if (head.entry) {
        head.entry->running = !head.entry->outcome && reader.held;
        (*head.cursor)->Next();
        return Status::ok_status();
      }
    }
    rocksdb::Status status = (*head.cursor)->status();
    return status.ok() ? Status::ok_status() : read_failure(reader, status);
  };
  for (const SlotReader& reader : *readers) {
    Head head;
    head.cursor = std::make_unique<PrefixCursor>(*reader.db, "e/", prefix_end("e/"));
    (*head.cursor)->SeekToFirst();
    if (Status status = advance(head, reader); !status.ok()) return status;
    heads.push_back(std::move(head));
  }
  for (;;) {
    Head* next = nullptr;
    std::size_t next_index = 0;
    for (std::size_t i = 0; i < heads.size(); ++i) {
      if (heads[i].entry &&
          (!next || heads[i].entry->intent.started < next->entry->intent.started)) {
        next = &heads[i];
        next_index = i;
      }
    }
    if (!next) return Status::ok_status();
    if (!fn(*next->entry)) return Status::ok_status();
    if (Status status = advance(*next, (*readers)[next_index]); !status.ok()) return status;
  }
}

Status for_each_audit_record(const std::filesystem::path& data_dir, const AuditQuery& query,
                             const AuditRecordFn& fn) {
  auto readers = open_readers(data_dir);
  if (!readers.ok()) return readers.status();
  const std::string lower =
      query.since ? time_seq_key('a', to_ns(*query.since), 0) : std::string("a/");
  const std::string upper = prefix_end("a/");
  const auto matches = [&query](const AuditRecord& r) {
    return (query.tool.empty() || r.tool == query.tool) &&
           (query.principal.empty() || r.principal == query.principal);
  };
  std::vector<std::unique_ptr<PrefixCursor>> cursors;
  cursors.reserve(readers->size());
  for (const SlotReader& reader : *readers) {
    cursors.push_back(std::make_unique<PrefixCursor>(*reader.db, lower, upper));
  }
  // A merge of the slots by key (time, then seq; between slots the lower
  // slot first). With a limit, backwards from the newest until `limit`
  // records matched, then handed over oldest first.
  const bool backwards = query.limit > 0;
  for (auto& cursor : cursors) {
    if (backwards) {
      (*cursor)->SeekToLast();
    } else {
      (*cursor)->SeekToFirst();
    }
  }
  std::vector<AuditRecord> newest;
  for (;;) {
    std::size_t pick = cursors.size();
    for (std::size_t i = 0; i < cursors.size(); ++i) {
      rocksdb::Iterator& it = **cursors[i];
      if (!it.Valid()) continue;
      if (pick == cursors.size()) {
        pick = i;
        continue;
      }
      const std::string_view a = key_of(it).substr(2, 16);
      const std::string_view b = key_of(**cursors[pick]).substr(2, 16);
      // Ties: the lower slot first, so backwards the higher one.
      if (backwards ? a >= b : a < b) pick = i;
    }
    if (pick == cursors.size()) break;
    rocksdb::Iterator& it = **cursors[pick];
    auto record = audit_from_text(value_of(it));
    if (backwards) {
      it.Prev();
    } else {
      it.Next();
    }
    if (!record || !matches(*record)) continue;
    if (!backwards) {
      if (!fn(*record)) return Status::ok_status();
      continue;
    }
    newest.push_back(std::move(*record));
    if (newest.size() >= query.limit) break;
  }
  for (std::size_t i = 0; i < cursors.size(); ++i) {
    rocksdb::Status status = (*cursors[i])->status();
    if (!status.ok()) return read_failure((*readers)[i], status);
  }
  for (auto it = newest.rbegin(); it != newest.rend(); ++it) {
    if (!fn(*it)) break;
  }
  return Status::ok_status();
}

Result<std::vector<JournalEntry>> read_journal(const std::filesystem::path& data_dir) {
  return collect_all<JournalEntry>(
      [&data_dir](const JournalEntryFn& fn) { return for_each_journal_entry(data_dir, fn); });
}

Result<std::vector<AuditRecord>> read_audit(const std::filesystem::path& data_dir,
                                            const AuditQuery& query) {
  return collect_all<AuditRecord>(
      [&](const AuditRecordFn& fn) { return for_each_audit_record(data_dir, query, fn); });
}

}  // namespace toolmux
