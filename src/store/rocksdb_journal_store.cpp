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
//                              same nanosecond. Its members chain_seq and
//                              chain_prev are its link (audit_chain.h).
//   h/<chain seq, be64>        the a/ key of the record at that place of the
//                              chain: the chain in the order of its appends.
//   m/<first chain seq, be64>  a signed retention marker (JSON): what
//                              retention removed from the front of the chain.
//
// begin() writes e/, c/, p/ and k/ in one synced batch; finish() writes e/,
// r/, x/ and a/ and deletes p/ in one synced batch, so an outcome never
// exists without its audit record. Appends to the chain are serialized
// (chain_mutex), so that it never forks. Retention deletes the expired front
// of the chain by walking h/ (never a record behind one that is kept), with
// its marker in the same batch; records without a link (written before the
// chain) by walking a/; and old finished entries by walking x/.
//
// Readers (`toolmux journal`, `toolmux audit`) open each slot read-only
// (open_slot_read_only, db_slots.h), beside the process that writes it.
#include "src/store/rocksdb_journal_store.h"

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>

#include "src/base/logger.h"
#include "src/store/audit_chain.h"
#include "src/store/db_keys.h"
#include "src/store/db_slots.h"
#include "src/store/journal_records.h"
#include "src/store/rocksdb_write.h"
#include "src/store/state_key.h"

namespace toolmux {

namespace {

// A journal slot's database. Each write inserts keys of two or three
// families at once (an audit record "a/" and its chain index "h/", an entry
// "e/" ...), each family in ascending order: the memtable keeps an insert
// hint per two-byte family, where one shared hint would be wrong at every
// insert and each would search the skip list from its top. RocksDB uses the
// hints only when one thread inserts a write group into the memtable, which
// is all the journal needs: its writes are few at once (begin() beside one
// append to the chain, which the chain's mutex serializes).
rocksdb::Options journal_db_options() {
  rocksdb::Options options = small_db_options();
  options.allow_concurrent_memtable_write = false;
  options.write_buffer_size = 4 << 20;
  options.memtable_insert_with_hint_prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(2));
  return options;
}

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::system_clock;

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
  // Held from an audit record's link to its write, and by the retention of
  // the chain's front; taken after `mutex` when both are.
  std::mutex chain_mutex;
  AuditChainLink chain_head{0, std::string(kAuditChainGenesis)};  // the next record's link
  // The key retention markers are signed with; "" when the state key could
  // not be had (then the chain's front is kept).
  std::string marker_key;
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

  // The chain's head from its last record, else from the last retention
  // marker (the chain goes on from what it removed), else the genesis.
  void recover_chain() {
    if (auto seq = last_seq("h/", 2)) {
      auto record_key = get(seq_key('h', *seq));
      auto stored = record_key ? get(*record_key) : std::nullopt;
      // A record that is gone: verify names it; the chain goes on.
      chain_head = {*seq + 1, stored ? audit_chain_hash(*stored) : std::string(kAuditChainGenesis)};
      return;
    }
    if (auto marker = last_marker()) chain_head = {marker->last_seq + 1, marker->last_hash};
  }

  // The last retention marker, when its signature holds.
  std::optional<RetentionMarker> last_marker() const {
    if (marker_key.empty()) return std::nullopt;
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    it->SeekForPrev(prefix_end("m/"));
    if (!it->Valid() || key_of(*it).substr(0, 2) != "m/") return std::nullopt;
    auto marker = marker_from_text(value_of(*it), marker_key);
    if (!marker.ok()) return std::nullopt;
    return *marker;
  }

  // Puts `record` in `batch` as the chain's next link; the caller holds
  // chain_mutex and, once the batch is written, makes the returned link the
  // head.
  AuditChainLink append_audit(rocksdb::WriteBatch& batch, const AuditRecord& record) {
    const std::string record_key = time_seq_key('a', to_ns(record.time), next_seq++);
    const std::string stored = chained_audit_text(audit_text(record), chain_head);
    batch.Put(record_key, stored);
    batch.Put(seq_key('h', chain_head.seq), record_key);
    return {chain_head.seq + 1, audit_chain_hash(stored)};
  }

  // Writes `batch` holding chain_mutex, with `head` the chain's head after it.
  Status write_chained(rocksdb::WriteBatch& batch, bool sync, AuditChainLink head) {
    Status written = write(batch, sync);
    if (written.ok()) chain_head = std::move(head);
    return written;
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
      const std::lock_guard<std::mutex> chain_lock(chain_mutex);
      AuditChainLink head = chain_head;
      if (entry && !entry->outcome) {
        const auto now = options.now();
        entry->outcome = "interrupted";
        entry->ended = now;
        batch.Put(seq_key('e', seq), journal_json_text(entry_json(*entry)));
        batch.Put(time_seq_key('x', to_ns(now), seq), rocksdb::Slice());
        head = append_audit(batch, interrupted_record(entry->intent, now));
      }
      if (Status written = write_chained(batch, true, head); !written.ok()) return written;
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
    sweep_unchained(cutoff);
    sweep_chain(cutoff, now);
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

  // Deletes the expired records written before the chain (no link).
  void sweep_unchained(std::int64_t cutoff) {
    const std::string audit_end = time_seq_key('a', cutoff, 0);
    rocksdb::WriteBatch batch;
    scan_prefix(*db, "a/", [&](std::string_view key, std::string_view value) {
      if (key >= audit_end) return false;
      if (!audit_chain_link(value)) batch.Delete(key);
      return true;
    });
    if (batch.Count() > 0) (void)write(batch, false);
  }

  // Deletes the expired front of the chain, up to the first record that is
  // not expired (or that cannot be read: verify names it), in batches, each
  // written with the signed marker of what was removed. A marker that goes
  // on from the last one replaces it (one key: m/ of its first record), so
  // that a slot keeps one marker while nothing breaks the chain. Nothing
  // goes without a marker key.
  void sweep_chain(std::int64_t cutoff, std::int64_t now) {
    if (marker_key.empty()) return;
    const std::lock_guard<std::mutex> chain_lock(chain_mutex);
    for (;;) {
      std::optional<RetentionMarker> marker = last_marker();
      std::vector<std::string> gone;  // h/ and a/ keys
      scan_prefix(*db, "h/", [&](std::string_view key, std::string_view record_key) {
        if (key.size() != 10) return false;
        const std::uint64_t seq = get_be(key, 2, 8);
        auto stored = get(std::string(record_key));
        auto link = stored ? audit_chain_link(*stored) : std::nullopt;
        auto record = stored ? audit_from_text(*stored) : std::nullopt;
        if (!link || !record || link->seq != seq) return false;
        const std::int64_t time = to_ns(record->time);
        if (time >= cutoff) return false;
        if (!marker || marker->last_seq + 1 != seq || marker->last_hash != link->prev) {
          marker = RetentionMarker{seq, seq, 0, time, time, link->prev, {}, now};
        }
        marker->last_seq = seq;
        marker->removed = seq - marker->first_seq + 1;
        marker->earliest_ns = std::min(marker->earliest_ns, time);
        marker->latest_ns = std::max(marker->latest_ns, time);
        marker->last_hash = audit_chain_hash(*stored);
        marker->written_ns = now;
        gone.emplace_back(key);
        gone.emplace_back(record_key);
        return gone.size() < 2 * kSweepBatch;
      });
      if (gone.empty()) return;
      rocksdb::WriteBatch batch;
      for (const std::string& key : gone) batch.Delete(key);
      batch.Put(seq_key('m', marker->first_seq), signed_marker_text(*marker, marker_key));
      if (!write(batch, true).ok() || gone.size() < 2 * kSweepBatch) return;
    }
  }
};

RocksDbJournalStore::RocksDbJournalStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RocksDbJournalStore::~RocksDbJournalStore() = default;

Result<std::unique_ptr<RocksDbJournalStore>> RocksDbJournalStore::open(
    const JournalStoreOptions& options) {
  auto slot = open_free_slot(options.data_dir / "journal", options.max_slots, journal_db_options(),
                             "the journal");
  if (!slot.ok()) return slot.status();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (!impl->options.now) impl->options.now = std::chrono::system_clock::now;
  impl->folder = slot->folder;
  impl->db = std::move(slot->db);
  impl->claim = std::move(slot->claim);
  // The markers' key, from the state key beside the journal (made when
  // missing, as serve would). Without it the chain's front is kept.
  if (options.data_dir.empty()) {
    // No data directory to hold a key: no signed retention either.
  } else if (auto key = load_or_create_state_key(options.data_dir); key.ok()) {
    impl->marker_key = retention_marker_key(*key);
  } else if (options.logger) {
    options.logger->write(LogLevel::warning, "audit_retention_unsigned",
                          {{"reason", key.message()},
                           {"effect",
                            "audit records are kept past the retention: their removal "
                            "could not be signed"}});
  }
  impl->recover_seq();
  impl->recover_chain();
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
  const std::lock_guard<std::mutex> chain_lock(s.chain_mutex);
  AuditChainLink head = s.append_audit(batch, record);
  return s.write_chained(batch, true, std::move(head));
}

Status RocksDbJournalStore::audit(const AuditRecord& record) {
  Impl& s = *impl_;
  s.maybe_sweep();
  AuditRecord copy = record;
  if (copy.time.time_since_epoch().count() == 0) copy.time = s.options.now();
  rocksdb::WriteBatch batch;
  const std::lock_guard<std::mutex> chain_lock(s.chain_mutex);
  AuditChainLink head = s.append_audit(batch, copy);
  return s.write_chained(batch, false, std::move(head));
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

namespace {

// One slot's chain walked: its records in chain order (h/), after its
// retention markers (m/), each checked against what went before.
class ChainWalk {
 public:
  ChainWalk(const SlotReader& reader, const std::string& marker_key, std::string no_key_reason,
            AuditChainReport& report)
      : reader_(reader),
        marker_key_(marker_key),
        no_key_reason_(std::move(no_key_reason)),
        report_(report) {}

  // False once a problem is in the report (or the slot could not be read:
  // then status() says why).
  bool run() { return count_unchained() && check_markers() && check_records(); }
  const Status& status() const { return status_; }

 private:
  struct Place {
    std::uint64_t seq = 0;
    std::optional<system_clock::time_point> time;
    std::string call_id;
  };

  std::optional<std::string> get(const std::string& key) const {
    std::string value;
    if (!reader_.db->Get(rocksdb::ReadOptions(), key, &value).ok()) return std::nullopt;
    return value;
  }

  bool problem(const Place& at, std::string why) {
    report_.problem =
        AuditChainProblem{reader_.folder.string(), at.seq, at.time, at.call_id, std::move(why)};
    return false;
  }

  bool scanned(bool ok) {
    if (!ok) status_ = Status::io_error("could not read the journal in " + reader_.folder.string());
    return ok;
  }

  bool count_unchained() {
    return scanned(scan_prefix(
        *reader_.db, "a/",
        [this](std::string_view, std::string_view value) {
          if (!audit_chain_link(value)) ++report_.unchained;
          return true;
        },
        false));
  }

  bool check_markers() {
    bool fits = true;
    const bool read = scan_prefix(
        *reader_.db, "m/",
        [&](std::string_view key, std::string_view value) {
          Place at{key.size() == 10 ? get_be(key, 2, 8) : 0, std::nullopt, {}};
          if (marker_key_.empty()) {
            fits =
                problem(at, "marker signature bad: it cannot be checked (" + no_key_reason_ + ")");
            return false;
          }
          auto marker = marker_from_text(value, marker_key_);
          if (!marker.ok()) {
            fits = problem(at, "marker signature bad: the retention marker of records from " +
                                   std::to_string(at.seq) + " on: " + marker.message());
            return false;
          }
          at.time = from_ns(marker->earliest_ns);
          if (marker->first_seq != expected_.seq || marker->prev != expected_.prev) {
            fits = problem(
                at, follows_not(marker->first_seq, "the retention marker of records " +
                                                       std::to_string(marker->first_seq) + " to " +
                                                       std::to_string(marker->last_seq)));
            return false;
          }
          ++report_.markers;
          report_.removed += marker->removed;
          expected_ = {marker->last_seq + 1, marker->last_hash};
          return true;
        },
        false);
    return scanned(read) && fits;
  }

  // Why `what`, at place `seq` of the chain, does not go on from expected_.
  std::string follows_not(std::uint64_t seq, const std::string& what) const {
    if (seq > expected_.seq) {
      return "missing predecessor: " + what + " comes after record " + std::to_string(seq - 1) +
             ", but the chain has nothing from record " + std::to_string(expected_.seq) + " to " +
             std::to_string(seq - 1) + " (deleted, and no retention marker covers it)";
    }
    if (seq < expected_.seq) {
      return "hash mismatch: " + what + " takes place " + std::to_string(seq) +
             " in the chain, which comes before";
    }
    return "hash mismatch: " + what + " does not go on from " +
           (last_
                ? "record " + std::to_string(last_->seq)
                : std::string(report_.markers > 0 ? "the retention marker" : "the chain's start"));
  }

  bool check_records() {
    bool fits = true;
    const bool read = scan_prefix(
        *reader_.db, "h/",
        [&](std::string_view key, std::string_view record_key) {
          Place at{key.size() == 10 ? get_be(key, 2, 8) : 0, std::nullopt, {}};
          if (record_key.size() == 18) {
            at.time = from_ns(time_from_key_value(get_be(record_key, 2, 8)));
          }
          auto stored = get(std::string(record_key));
          auto record = stored ? audit_from_text(*stored) : std::nullopt;
          if (record) {
            at.time = record->time;
            at.call_id = record->call_id;
          }
          if (at.seq != expected_.seq) {
            fits = problem(at, follows_not(at.seq, "record " + std::to_string(at.seq)));
            return false;
          }
          if (!stored) {
            fits = problem(at, "missing record: the chain lists it, but it is gone from the store");
            return false;
          }
          auto link = audit_chain_link(*stored);
          if (!record || !link || link->seq != at.seq) {
            fits = problem(at,
                           "hash mismatch: its stored bytes are not the record written there "
                           "(its link is gone or changed)");
            return false;
          }
          if (link->prev != expected_.prev) {
            if (last_) {
              // The earlier record's bytes changed after this one was
              // linked to them (or this one's link was edited).
              fits = problem(*last_, "hash mismatch: its stored bytes do not hash to what record " +
                                         std::to_string(at.seq) +
                                         " holds for it (edited after it was written)");
            } else {
              fits = problem(at, follows_not(at.seq, "record " + std::to_string(at.seq)));
            }
            return false;
          }
          expected_ = {at.seq + 1, audit_chain_hash(*stored)};
          last_ = at;
          ++report_.records;
          if (!report_.first || record->time < *report_.first) report_.first = record->time;
          if (!report_.last || record->time > *report_.last) report_.last = record->time;
          return true;
        },
        false);
    if (read && fits && (last_ || report_.markers > 0)) ++report_.chains;
    return scanned(read) && fits;
  }

  const SlotReader& reader_;
  const std::string& marker_key_;
  std::string no_key_reason_;
  AuditChainReport& report_;
  AuditChainLink expected_{0, std::string(kAuditChainGenesis)};
  std::optional<Place> last_;  // the last record that fit
  Status status_;
};

}  // namespace

Result<AuditChainReport> verify_audit_chain(const std::filesystem::path& data_dir) {
  auto readers = open_readers(data_dir);
  if (!readers.ok()) return readers.status();
  std::string marker_key;
  std::string no_key_reason;
  if (auto key = load_state_key(data_dir); key.ok()) {
    marker_key = retention_marker_key(*key);
  } else {
    no_key_reason = key.message();
  }
  AuditChainReport report;
  for (const SlotReader& reader : *readers) {
    ChainWalk walk(reader, marker_key, no_key_reason, report);
    if (!walk.run()) {
      if (!walk.status().ok()) return walk.status();
      break;
    }
  }
  return report;
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
