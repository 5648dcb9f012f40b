// The stores' RocksDB keys: big-endian numbers (so that byte order is number
// order), times as keys (so that byte order is time order), scans over a key
// prefix, and snapshots held for a scope. Internal to src/store.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>

namespace toolmux {

inline void put_be64(std::string& out, std::uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

inline void put_be32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

// The `n`-byte big-endian number at `pos` of `in` (the caller checks the size).
inline std::uint64_t get_be(std::string_view in, std::size_t pos, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(in[pos + i]);
  return v;
}

// Nanoseconds since the epoch with the sign bit flipped: as a big-endian key,
// times before the epoch sort before those after it.
inline std::uint64_t time_key_value(std::int64_t ns) {
  return static_cast<std::uint64_t>(ns) ^ (std::uint64_t{1} << 63);
}

inline std::int64_t time_from_key_value(std::uint64_t v) {
  return static_cast<std::int64_t>(v ^ (std::uint64_t{1} << 63));
}

inline std::int64_t to_ns(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

inline std::chrono::system_clock::time_point from_ns(std::int64_t ns) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(ns)));
}

// The smallest key greater than every key starting with `prefix` ("" when
// there is none: all bytes 0xff).
inline std::string prefix_end(std::string prefix) {
  while (!prefix.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(prefix.back());
    if (last != 0xff) {
      ++last;
      return prefix;
    }
    prefix.pop_back();
  }
  return prefix;
}

// Calls fn(key, value) for every key of `db` starting with `prefix`, in
// order, until it returns false. False when the scan failed.
template <typename Fn>
bool scan_prefix(rocksdb::DB& db, const std::string& prefix, Fn&& fn, bool fill_cache = true,
                 const rocksdb::Snapshot* snapshot = nullptr) {
  std::string end = prefix_end(prefix);
  rocksdb::Slice upper(end);
  rocksdb::ReadOptions ro;
  ro.fill_cache = fill_cache;
  ro.snapshot = snapshot;
  if (!end.empty()) ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(ro));
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    if (key.substr(0, prefix.size()) != prefix) break;
    if (!fn(key, std::string_view(it->value().data(), it->value().size()))) break;
  }
  return it->status().ok();
}

// A snapshot of `db`, released when this goes: reads through get() see the
// database as one moment left it (a batch either whole or not at all).
class SnapshotHold {
 public:
  explicit SnapshotHold(rocksdb::DB& db) : db_(db), snapshot_(db.GetSnapshot()) {}
  ~SnapshotHold() { db_.ReleaseSnapshot(snapshot_); }
  SnapshotHold(const SnapshotHold&) = delete;
  SnapshotHold& operator=(const SnapshotHold&) = delete;

  const rocksdb::Snapshot* get() const { return snapshot_; }

 private:
  rocksdb::DB& db_;
  const rocksdb::Snapshot* snapshot_;
};

}  // namespace toolmux
