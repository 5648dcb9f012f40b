// The result store in RocksDB: offloaded tool results in a RocksDB database.
//
// Layout (one column family; every key starts with a one-letter kind and '/'):
//
//   c/<id><chunk index, be32>      the text, in chunks of at most 64 KiB cut on
//                                  character boundaries.
//   m/<id>                         metadata of a result (the commit record):
//                                  version byte 1, created (i64 ns since the
//                                  epoch), seq (u64), byte size (u64), char
//                                  count (u64), chunk count (u32), owner length
//                                  (u32), owner bytes, then each chunk's first
//                                  char offset (u64 per chunk); big-endian.
//                                  Version 2, for a result that is not plain
//                                  text, adds its MIME type (length u8, bytes)
//                                  and a flags byte (1: base64 of binary data).
//   o/<owner length, be32><owner><id>  empty: results by owner, for delete_owner.
//   t/<created, be64><seq, be64><id>  empty: results by age, for expiry and
//                                  eviction (created has its sign bit flipped
//                                  so the byte order is the time order; seq, a
//                                  per-slot counter, orders results created in
//                                  the same nanosecond).
//
// Ids are 43 characters (256 random bits in base64url), so "m/<id>" and
// "c/<id>" prefixes never overlap between ids.
//
// Writing a result is one atomic step either way, so a process killed mid-way
// leaves none of it:
//
// - Up to kIngestBytes (1 MiB) of text: one WriteBatch with the chunks, m/, t/
//   and o/. It costs a copy of the text in the batch and another in the
//   memtable, at most 2 MiB together.
// - Larger: the keys of the result -- chunks, then m/, o/, t/, which is their
//   byte order -- go in that order into a new table file,
//   slot-N/ingest/<id>.sst, written with rocksdb::SstFileWriter one 64 KiB
//   block at a time, and IngestExternalFile moves (hard-links) the finished
//   file into the database: that is the commit. Nothing of the text passes
//   through a batch or a memtable, so the store adds only its write buffers
//   (~1 MiB) to the text the caller holds. A process killed before the
//   ingestion leaves only the file in ingest/, which open() deletes (after
//   the ingestion, what is left there is a second link to a live file).
//   Ingesting a file whose key range overlaps the memtable makes RocksDB flush
//   the memtable first (allow_blocking_flush); the file gets a sequence number
//   above everything already written (allow_global_seqno), so snapshots taken
//   before do not see it.
//
// A page read gets m/<id> and then only the chunks the page covers: the chunk
// holding the first character is found by binary search over the chunks'
// first char offsets kept in the metadata. Reads use a snapshot, so a result
// deleted meanwhile reads as not found rather than half there. Chunks of large
// results are read without filling the block cache: paging through one would
// otherwise fill the whole cache with blocks read once or twice.
#include "src/store/rocksdb_result_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "src/base/random_id.h"
#include "src/base/untrusted_json.h"
#include "src/base/utf8.h"
#include "src/store/db_keys.h"
#include "src/store/db_slots.h"
#include "src/store/result_text.h"

namespace toolmux {

namespace {

namespace fs = std::filesystem;

using result_text::kChunkBytes;
using result_text::kIdBytes;
using result_text::kIdLength;
using result_text::retention_ns;
// Results larger than this are written as a table file and ingested (see the
// top of the file); smaller ones, in one WriteBatch. Below 1 MiB the batch and
// memtable copies cost less than 2 MiB, and a table file would cost a file
// creation, two fsyncs and a MANIFEST update per result, and one more level-0
// file for compaction to merge.
constexpr std::size_t kIngestBytes = std::size_t{1} << 20;
constexpr std::uint8_t kMetaVersion = 1;        // text/plain text
constexpr std::uint8_t kMetaVersionFormat = 2;  // with a StoredFormat
constexpr std::uint8_t kFlagBase64 = 1;

// ---- Encoding ----

struct Meta {
  std::string owner;
  std::int64_t created_ns = 0;
  std::uint64_t seq = 0;
  std::uint64_t bytes = 0;
  std::uint64_t chars = 0;
  std::vector<std::uint64_t> chunk_starts;  // first char offset of each chunk
  StoredFormat format;
};

bool is_plain_text(const StoredFormat& format) {
  return format.mime_type == "text/plain" && !format.base64;
}

std::string encode_meta(const Meta& m) {
  std::string out;
  const bool plain = is_plain_text(m.format);
  out.reserve(1 + 8 * 4 + 4 + 4 + m.owner.size() + 8 * m.chunk_starts.size() +
              (plain ? 0 : 2 + m.format.mime_type.size()));
  out.push_back(static_cast<char>(plain ? kMetaVersion : kMetaVersionFormat));
  put_be64(out, static_cast<std::uint64_t>(m.created_ns));
  put_be64(out, m.seq);
  put_be64(out, m.bytes);
  put_be64(out, m.chars);
  put_be32(out, static_cast<std::uint32_t>(m.chunk_starts.size()));
  put_be32(out, static_cast<std::uint32_t>(m.owner.size()));
  out.append(m.owner);
  for (std::uint64_t start : m.chunk_starts) put_be64(out, start);
  if (!plain) {
    out.push_back(static_cast<char>(m.format.mime_type.size()));
    out.append(m.format.mime_type);
    out.push_back(static_cast<char>(m.format.base64 ? kFlagBase64 : 0));
  }
  return out;
}

std::optional<Meta> decode_meta(std::string_view in) {
  constexpr std::size_t kFixed = 1 + 8 * 4 + 4 + 4;
  if (in.size() < kFixed) return std::nullopt;
  const auto version = static_cast<std::uint8_t>(in[0]);
  if (version != kMetaVersion && version != kMetaVersionFormat) return std::nullopt;
  Meta m;
  m.created_ns = static_cast<std::int64_t>(get_be(in, 1, 8));
  m.seq = get_be(in, 9, 8);
  m.bytes = get_be(in, 17, 8);
  m.chars = get_be(in, 25, 8);
  std::size_t chunks = get_be(in, 33, 4);
  std::size_t owner_size = get_be(in, 37, 4);
  const std::size_t format_at = kFixed + owner_size + 8 * chunks;
  if (version == kMetaVersion ? in.size() != format_at : in.size() < format_at + 2) {
    return std::nullopt;
  }
  m.owner.assign(in.substr(kFixed, owner_size));
  m.chunk_starts.reserve(chunks);
  for (std::size_t i = 0; i < chunks; ++i) {
    m.chunk_starts.push_back(get_be(in, kFixed + owner_size + 8 * i, 8));
  }
  if (version == kMetaVersionFormat) {
    const std::size_t mime_size = get_be(in, format_at, 1);
    if (in.size() != format_at + 1 + mime_size + 1) return std::nullopt;
    m.format.mime_type.assign(in.substr(format_at + 1, mime_size));
    m.format.base64 = (get_be(in, format_at + 1 + mime_size, 1) & kFlagBase64) != 0;
  }
  return m;
}

std::string meta_key(std::string_view id) {
  std::string k = "m/";
  k.append(id);
  return k;
}

std::string chunk_prefix(std::string_view id) {
  std::string k = "c/";
  k.append(id);
  return k;
}

std::string chunk_key(std::string_view id, std::size_t index) {
  std::string k = chunk_prefix(id);
  put_be32(k, static_cast<std::uint32_t>(index));
  return k;
}

std::string time_key(const Meta& m, std::string_view id) {
  std::string k = "t/";
  put_be64(k, time_key_value(m.created_ns));
  put_be64(k, m.seq);
  k.append(id);
  return k;
}

std::string owner_prefix(std::string_view owner) {
  std::string k = "o/";
  put_be32(k, static_cast<std::uint32_t>(owner.size()));
  k.append(owner);
  return k;
}

std::string owner_key(std::string_view owner, std::string_view id) {
  std::string k = owner_prefix(owner);
  k.append(id);
  return k;
}

// ---- UTF-8 ----

// Cuts `text` into chunks of at most kChunkBytes on character boundaries,
// records each chunk's first char offset in m.chunk_starts and calls
// add(key, chunk) for each, in key order, until one fails.
template <typename Add>
rocksdb::Status add_chunks(std::string_view id, std::string_view text, Meta& m, Add&& add) {
  rocksdb::Status status;
  result_text::for_each_chunk(text, [&](std::string_view chunk, std::uint64_t first_char) {
    m.chunk_starts.push_back(first_char);
    status =
        add(chunk_key(id, m.chunk_starts.size() - 1), rocksdb::Slice(chunk.data(), chunk.size()));
    return status.ok();
  });
  return status;
}

// ---- RocksDB configuration ----

// Small on purpose: the server's memory while offloading a result should stay
// near the result's own size.
rocksdb::Options db_options() {
  rocksdb::Options options = small_db_options();
  options.write_buffer_size = 2 << 20;
  options.max_background_jobs = 2;
  options.max_open_files = 64;
  options.max_total_wal_size = 16 << 20;
  // The write buffer of every file RocksDB writes (log, tables, the table
  // files of large results): 1 MiB by default, most of what a large put adds.
  options.writable_file_max_buffer_size = 256 << 10;
  auto supported = rocksdb::GetSupportedCompressions();
  if (std::find(supported.begin(), supported.end(), rocksdb::kLZ4Compression) != supported.end()) {
    options.compression = rocksdb::kLZ4Compression;
  }
  rocksdb::BlockBasedTableOptions table;
  // Index blocks and the chunks of small results (large results are read
  // past it); lives as long as the process, so it counts against every put.
  table.block_cache = rocksdb::NewLRUCache(2 << 20);
  table.cache_index_and_filter_blocks = true;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

}  // namespace

struct RocksDbResultStore::Impl {
  ResultStoreOptions options;
  fs::path folder;
  fs::path ingest_folder;       // folder/ingest: table files being written
  rocksdb::Options db_options;  // what db was opened with, for SstFileWriter
  std::unique_ptr<rocksdb::DB> db;
  SlotClaim claim;         // given up after ~Impl has closed db
  bool read_only = false;  // open_slot(..., Access::read_only): nothing is written

  mutable std::mutex mutex;  // guards the counters; held by every write
  std::uint64_t bytes = 0;
  std::size_t count = 0;
  std::uint64_t next_seq = 0;
  // When put() last swept out expired results (reads hide them at once; the
  // sweep frees their space), in the options' clock, nanoseconds.
  std::atomic<std::int64_t> last_sweep_ns{0};

  ~Impl() {
    if (db) {
      db->Close().PermitUncheckedError();
      db.reset();
    }
  }

  template <typename Fn>
  bool scan(const std::string& prefix, Fn&& fn, bool fill_cache = true) const {
    return scan_prefix(*db, prefix, std::forward<Fn>(fn), fill_cache);
  }

  std::optional<Meta> get_meta(std::string_view id,
                               const rocksdb::Snapshot* snapshot = nullptr) const {
    rocksdb::ReadOptions ro;
    ro.snapshot = snapshot;
    rocksdb::PinnableSlice value;
    if (!db->Get(ro, db->DefaultColumnFamily(), meta_key(id), &value).ok()) return std::nullopt;
    return decode_meta(std::string_view(value.data(), value.size()));
  }

  // Whether created + retention <= now.
  bool expired(const Meta& m, std::int64_t now_ns) const {
    return m.created_ns <= now_ns - retention_ns(options.retention);
  }

  // Deletes one result; the mutex is held.
  bool remove(std::string_view id, const Meta& m) {
    rocksdb::WriteBatch batch;
    batch.Delete(meta_key(id));
    batch.Delete(time_key(m, id));
    batch.Delete(owner_key(m.owner, id));
    for (std::size_t i = 0; i < m.chunk_starts.size(); ++i) batch.Delete(chunk_key(id, i));
    if (!db->Write(rocksdb::WriteOptions(), &batch).ok()) return false;
    bytes -= std::min(bytes, m.bytes);
    if (count > 0) --count;
    return true;
  }

  // Deletes the results among `ids` (collected from an index); the mutex is
  // held. Returns how many were deleted.
  std::size_t remove_ids(const std::vector<std::string>& ids) {
    std::size_t deleted = 0;
    for (const auto& id : ids) {
      auto m = get_meta(id);
      if (m && remove(id, *m)) ++deleted;
    }
    return deleted;
  }

  // The oldest result's id, if any.
  std::optional<std::string> oldest() const {
    std::optional<std::string> id;
    scan("t/", [&](std::string_view key, std::string_view) {
      if (key.size() == 2 + 16 + kIdLength) id = std::string(key.substr(2 + 16));
      return !id;
    });
    return id;
  }

  // Writes a result (its keys in byte order: chunks, m/, o/, t/) into a table
  // file and ingests it, the commit; the mutex is held. The file is gone
  // afterwards, whether or not it worked.
  rocksdb::Status write_ingested(std::string_view id, std::string_view text, Meta& m) {
    std::error_code ec;
    fs::create_directories(ingest_folder, ec);
    if (ec) return rocksdb::Status::IOError(ingest_folder.string(), ec.message());
    std::string path = (ingest_folder / (std::string(id) + ".sst")).string();
    rocksdb::Status status;
    {
      // Keeping the file in the page cache makes reading it back right away
      // cheap; the page cache is not the process's memory.
      rocksdb::SstFileWriter writer(rocksdb::EnvOptions(db_options), db_options,
                                    db->DefaultColumnFamily(), /*invalidate_page_cache=*/false);
      status = writer.Open(path);
      if (status.ok()) {
        status = add_chunks(id, text, m, [&](const std::string& key, const rocksdb::Slice& chunk) {
          return writer.Put(key, chunk);
        });
      }
      if (status.ok()) status = writer.Put(meta_key(id), encode_meta(m));
      if (status.ok()) status = writer.Put(owner_key(m.owner, id), rocksdb::Slice());
      if (status.ok()) status = writer.Put(time_key(m, id), rocksdb::Slice());
      if (status.ok()) status = writer.Finish();  // syncs the file
    }
    if (status.ok()) {
      rocksdb::IngestExternalFileOptions ingest;
      ingest.move_files = true;            // a hard link, no copy
      ingest.snapshot_consistency = true;  // invisible to older snapshots
      ingest.allow_global_seqno = true;    // keys written before may overlap its range
      ingest.allow_blocking_flush = true;  // so may the memtable's: flush it first
      ingest.write_global_seqno = false;   // kept in the MANIFEST, not written into the file
      status = db->IngestExternalFile({path}, ingest);
    }
    // After a move RocksDB has removed it; after a failure (or a fallback to
    // copying) it is still here.
    fs::remove(path, ec);
    return status;
  }

  // Writes a small result in one batch, the commit; the mutex is held.
  rocksdb::Status write_batch(std::string_view id, std::string_view text, Meta& m) {
    // Room for all of it up front: growing the batch would copy it.
    std::size_t most_chunks = text.size() / (kChunkBytes - 3) + 1;  // chunks lose <= 3 bytes
    rocksdb::WriteBatch batch(text.size() + 2 * m.owner.size() + 80 * most_chunks + 256);
    rocksdb::Status status = add_chunks(
        id, text, m,
        [&](const std::string& key, const rocksdb::Slice& chunk) { return batch.Put(key, chunk); });
    if (status.ok()) status = batch.Put(meta_key(id), encode_meta(m));
    if (status.ok()) status = batch.Put(time_key(m, id), rocksdb::Slice());
    if (status.ok()) status = batch.Put(owner_key(m.owner, id), rocksdb::Slice());
    if (status.ok()) status = db->Write(rocksdb::WriteOptions(), &batch);
    return status;
  }

  Status refuse_write() const {
    return Status::io_error("the result store in " + folder.string() + " is open read-only");
  }

  // At open: drops unfinished writes (unless read-only) and recomputes the
  // counters.
  Status recover() {
    // Table files of puts that did not reach their ingestion. This process
    // holds the slot, so no put of another process is writing them.
    std::error_code ec;
    if (!read_only) fs::remove_all(ingest_folder, ec);
    if (ec)
      return Status::io_error("could not clear " + ingest_folder.string() + ": " + ec.message());
    bool ok = scan(
        "m/",
        [&](std::string_view, std::string_view value) {
          if (auto m = decode_meta(value)) {
            bytes += m->bytes;
            ++count;
            next_seq = std::max(next_seq, m->seq + 1);
          }
          return true;
        },
        false);
    if (!ok) return Status::io_error("could not read the result store in " + folder.string());
    return Status::ok_status();
  }
};

RocksDbResultStore::RocksDbResultStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RocksDbResultStore::~RocksDbResultStore() = default;

Result<std::unique_ptr<RocksDbResultStore>> RocksDbResultStore::open(
    const ResultStoreOptions& options) {
  rocksdb::Options db_opts = db_options();
  auto slot =
      open_free_slot(options.data_dir / "results", options.max_slots, db_opts, "the result store");
  if (!slot.ok()) return slot.status();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (!impl->options.now) impl->options.now = std::chrono::system_clock::now;
  impl->folder = slot->folder;
  impl->ingest_folder = slot->folder / "ingest";
  impl->db_options = db_opts;
  impl->db = std::move(slot->db);
  impl->claim = std::move(slot->claim);
  if (Status recovered = impl->recover(); !recovered.ok()) return recovered;
  std::unique_ptr<RocksDbResultStore> store(new RocksDbResultStore(std::move(impl)));
  store->expire_old();
  return store;
}

Result<std::unique_ptr<RocksDbResultStore>> RocksDbResultStore::open_slot(
    const ResultStoreOptions& options, const std::filesystem::path& folder, Access access) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (!impl->options.now) impl->options.now = std::chrono::system_clock::now;
  impl->folder = folder;
  impl->ingest_folder = folder / "ingest";
  impl->db_options = db_options();
  impl->read_only = access == Access::read_only;
  if (impl->read_only) {
    auto db = open_slot_read_only(folder, "the result store");
    if (!db.ok()) return db.status();
    impl->db = std::move(*db);
  } else {
    rocksdb::Options write_options = impl->db_options;
    write_options.create_if_missing = false;
    rocksdb::DB* raw = nullptr;
    rocksdb::Status status = rocksdb::DB::Open(write_options, folder.string(), &raw);
    if (!status.ok()) {
      return Status::io_error("could not open the result store in " + folder.string() + ": " +
                              status.ToString());
    }
    impl->db.reset(raw);
    impl->claim = SlotClaim(folder);
  }
  if (Status recovered = impl->recover(); !recovered.ok()) return recovered;
  std::unique_ptr<RocksDbResultStore> store(new RocksDbResultStore(std::move(impl)));
  if (access == Access::write) store->expire_old();
  return store;
}

Result<std::string> RocksDbResultStore::put(std::string_view owner, std::string_view text,
                                            const StoredFormat& format) {
  Impl& s = *impl_;
  if (s.read_only) return s.refuse_write();
  if (Status refused = result_text::check_put(text, format, s.options.max_bytes); !refused.ok()) {
    return refused;
  }
  constexpr std::int64_t kSweepEveryNs = 60'000'000'000;  // a minute
  const std::int64_t now_ns = to_ns(s.options.now());
  std::int64_t last = s.last_sweep_ns.load();
  if (now_ns - last >= kSweepEveryNs && s.last_sweep_ns.compare_exchange_strong(last, now_ns)) {
    expire_old();
  }
  const std::uint64_t total_chars = utf8_length(text);

  std::lock_guard<std::mutex> lock(s.mutex);
  while (s.count > 0 && s.bytes + text.size() > s.options.max_bytes) {
    auto id = s.oldest();
    auto m = id ? s.get_meta(*id) : std::nullopt;
    if (!m || !s.remove(*id, *m)) {
      return Status::io_error("could not evict old results from " + s.folder.string());
    }
  }

  std::string id;
  try {
    id = random_id(kIdBytes);
  } catch (const std::system_error& e) {
    return Status::io_error(std::string("could not generate a result id: ") + e.what());
  }

  Meta m;
  m.owner.assign(owner);
  m.created_ns = to_ns(s.options.now());
  m.seq = s.next_seq++;
  m.bytes = text.size();
  m.chars = total_chars;
  m.format = format;

  rocksdb::Status status =
      text.size() > kIngestBytes ? s.write_ingested(id, text, m) : s.write_batch(id, text, m);
  if (!status.ok()) {
    return Status::io_error("could not store the result in " + s.folder.string() + ": " +
                            status.ToString());
  }
  s.bytes += m.bytes;
  ++s.count;
  return id;
}

Result<ResultPage> RocksDbResultStore::read(std::string_view owner, std::string_view id,
                                            std::uint64_t offset_chars,
                                            std::size_t max_chars) const {
  using result_text::not_found;
  const Impl& s = *impl_;
  if (id.size() != kIdLength) return not_found();

  const SnapshotHold hold(*s.db);
  const rocksdb::Snapshot* snapshot = hold.get();

  auto m = s.get_meta(id, snapshot);
  if (!m || m->owner != owner || s.expired(*m, to_ns(s.options.now()))) return not_found();
  if (offset_chars > m->chars) return result_text::past_the_end(offset_chars, m->chars);

  ResultPage page;
  page.offset = offset_chars;
  page.total_chars = m->chars;
  std::uint64_t want = std::min<std::uint64_t>(max_chars, m->chars - offset_chars);
  if (want > 0) {
    // The chunk holding the character at offset_chars.
    auto it = std::upper_bound(m->chunk_starts.begin(), m->chunk_starts.end(), offset_chars);
    std::size_t index = static_cast<std::size_t>(it - m->chunk_starts.begin()) - 1;
    result_text::PageText text(offset_chars - m->chunk_starts[index], want);
    text.text().reserve(static_cast<std::size_t>(std::min<std::uint64_t>(want * 4, m->bytes)));
    rocksdb::ReadOptions ro;
    ro.snapshot = snapshot;
    ro.fill_cache = m->bytes <= kIngestBytes;
    rocksdb::PinnableSlice value;
    while (!text.complete() && index < m->chunk_starts.size()) {
      value.Reset();
      if (!s.db->Get(ro, s.db->DefaultColumnFamily(), chunk_key(id, index), &value).ok()) {
        return not_found();  // deleted meanwhile, or damaged
      }
      text.add(std::string_view(value.data(), value.size()));
      ++index;
    }
    if (!text.complete()) return not_found();  // chunks shorter than the metadata says
    page.text = std::move(text.text());
  }
  std::uint64_t next = offset_chars + want;
  if (next < m->chars) page.next_offset = next;
  return page;
}

std::vector<StoredResult> RocksDbResultStore::list(std::string_view owner) const {
  const Impl& s = *impl_;
  const std::string prefix = owner_prefix(owner);
  const std::int64_t now = to_ns(s.options.now());
  std::vector<std::pair<Meta, std::string>> found;
  s.scan(prefix, [&](std::string_view key, std::string_view) {
    std::string id(key.substr(prefix.size()));
    auto m = s.get_meta(id);
    if (m && m->owner == owner && !s.expired(*m, now))
      found.emplace_back(std::move(*m), std::move(id));
    return true;
  });
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.created_ns, a.first.seq) < std::tie(b.first.created_ns, b.first.seq);
  });
  std::vector<StoredResult> out;
  out.reserve(found.size());
  for (auto& [m, id] : found) {
    out.push_back({std::move(id), std::move(m.owner), m.bytes, m.chars, from_ns(m.created_ns),
                   std::move(m.format)});
  }
  return out;
}

Result<std::vector<StoredResult>> RocksDbResultStore::list_all() const {
  const Impl& s = *impl_;
  std::vector<StoredResult> out;
  // The age index is in time order already (then seq, the order of puts).
  const bool read = s.scan("t/", [&](std::string_view key, std::string_view) {
    if (key.size() != 2 + 16 + kIdLength) return true;
    std::string id(key.substr(2 + 16));
    auto m = s.get_meta(id);
    if (!m) return true;  // deleted since the scan began
    out.push_back({std::move(id), std::move(m->owner), m->bytes, m->chars, from_ns(m->created_ns),
                   std::move(m->format)});
    return true;
  });
  if (!read) return Status::io_error("could not read the result store in " + s.folder.string());
  return out;
}

Status RocksDbResultStore::remove(std::string_view id) {
  Impl& s = *impl_;
  if (s.read_only) return s.refuse_write();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto m = id.size() == kIdLength ? s.get_meta(id) : std::nullopt;
  if (!m) return result_text::no_such_result(id);
  if (!s.remove(id, *m)) {
    return Status::io_error("could not delete result " + std::string(id) + " from " +
                            s.folder.string());
  }
  return Status::ok_status();
}

void RocksDbResultStore::delete_owner(std::string_view owner) {
  Impl& s = *impl_;
  if (s.read_only) return;
  std::lock_guard<std::mutex> lock(s.mutex);
  std::string prefix = owner_prefix(owner);
  std::vector<std::string> ids;
  s.scan(prefix, [&](std::string_view key, std::string_view) {
    ids.emplace_back(key.substr(prefix.size()));
    return true;
  });
  s.remove_ids(ids);
}

std::size_t RocksDbResultStore::expire_old() {
  Impl& s = *impl_;
  if (s.read_only) return 0;
  std::lock_guard<std::mutex> lock(s.mutex);
  std::int64_t cutoff = to_ns(s.options.now()) - retention_ns(s.options.retention);
  std::vector<std::string> ids;
  s.scan("t/", [&](std::string_view key, std::string_view) {
    if (key.size() != 2 + 16 + kIdLength) return true;
    auto created = time_from_key_value(get_be(key, 2, 8));
    if (created > cutoff) return false;  // the rest are newer
    ids.emplace_back(key.substr(2 + 16));
    return true;
  });
  return s.remove_ids(ids);
}

std::uint64_t RocksDbResultStore::stored_bytes() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->bytes;
}

std::size_t RocksDbResultStore::stored_count() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->count;
}

const std::filesystem::path& RocksDbResultStore::folder() const { return impl_->folder; }

}  // namespace toolmux
