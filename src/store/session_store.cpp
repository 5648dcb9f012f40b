#include "src/store/session_store.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <cinttypes>
#include <cstdio>

#include "src/store/db_slots.h"
#include "src/store/rocksdb_write.h"

namespace toolmux {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string session_key(std::string_view id) { return "s/" + std::string(id); }

std::string events_prefix(std::string_view session) { return "e/" + std::string(session) + "/"; }

std::string event_key(std::string_view session, std::uint64_t seq) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016" PRIx64, seq);
  return events_prefix(session) + hex;
}

std::uint64_t seq_of_key(std::string_view key) {
  return std::strtoull(std::string(key.substr(key.size() - 16)).c_str(), nullptr, 16);
}

class RocksDbSessionStore final : public SessionStore {
 public:
  RocksDbSessionStore(std::unique_ptr<rocksdb::DB> db, fs::path folder)
      : db_(std::move(db)), folder_(std::move(folder)) {}

  Status put_session(std::string_view id, const json& record) override;
  void delete_session(std::string_view id) override;
  std::vector<std::pair<std::string, json>> load_sessions() const override;
  Result<std::optional<json>> load_session(std::string_view id) const override;
  void append_event(std::string_view session, const StoredEvent& event) override;
  std::vector<StoredEvent> events_after(std::string_view session,
                                        std::uint64_t after_seq) const override;
  std::uint64_t last_seq(std::string_view session) const override;
  void trim_events(std::string_view session, std::uint64_t below_seq) override;
  void flush() override;
  std::string where() const override { return folder_.string(); }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  fs::path folder_;
};

}  // namespace

Result<std::unique_ptr<SessionStore>> SessionStore::open(const fs::path& data_dir) {
  const fs::path folder = data_dir / "sessions";
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) return Status::io_error("cannot create " + folder.string() + ": " + ec.message());
  const rocksdb::Options options = small_db_options();
  rocksdb::DB* raw = nullptr;
  rocksdb::Status status = rocksdb::DB::Open(options, folder.string(), &raw);
  if (!status.ok()) {
    return Status::io_error(
        "cannot open the session store in " + folder.string() +
        " (is another toolmux serving HTTP on this data directory?): " + status.ToString());
  }
  return std::unique_ptr<SessionStore>(
      new RocksDbSessionStore(std::unique_ptr<rocksdb::DB>(raw), folder));
}

Status RocksDbSessionStore::put_session(std::string_view id, const json& record) {
  const std::string key = session_key(id);
  const std::string value = record.dump();
  const RocksDbWrite unchecked;
  const rocksdb::Status put = db_->Put(rocksdb::WriteOptions(), key, value);
  if (!put.ok()) return Status::io_error("cannot store the session: " + put.ToString());
  return Status::ok_status();
}

void RocksDbSessionStore::delete_session(std::string_view id) {
  rocksdb::WriteBatch batch;
  batch.Delete(session_key(id));
  const std::string prefix = events_prefix(id);
  std::string end = prefix;
  end.back() = static_cast<char>('/' + 1);
  batch.DeleteRange(prefix, end);
  const RocksDbWrite unchecked;
  db_->Write(rocksdb::WriteOptions(), &batch);
}

std::vector<std::pair<std::string, json>> RocksDbSessionStore::load_sessions() const {
  std::vector<std::pair<std::string, json>> sessions;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek("s/"); it->Valid() && it->key().starts_with("s/"); it->Next()) {
    json record = json::parse(it->value().ToString(), nullptr, false);
    if (record.is_discarded()) continue;
    sessions.emplace_back(it->key().ToString().substr(2), std::move(record));
  }
  return sessions;
}

Result<std::optional<json>> RocksDbSessionStore::load_session(std::string_view id) const {
  std::string value;
  const rocksdb::Status got = db_->Get(rocksdb::ReadOptions(), session_key(id), &value);
  if (got.IsNotFound()) return std::optional<json>();
  if (!got.ok()) return Status::io_error("cannot read " + folder_.string() + ": " + got.ToString());
  json record = json::parse(value, nullptr, false);
  if (record.is_discarded()) return std::optional<json>();
  return std::optional<json>(std::move(record));
}

void RocksDbSessionStore::append_event(std::string_view session, const StoredEvent& event) {
  const std::string key = event_key(session, event.seq);
  const std::string value =
      json{{"stream", event.stream}, {"data", event.data}, {"final", event.final}}.dump();
  const RocksDbWrite unchecked;
  db_->Put(rocksdb::WriteOptions(), key, value);
}

std::vector<StoredEvent> RocksDbSessionStore::events_after(std::string_view session,
                                                           std::uint64_t after_seq) const {
  std::vector<StoredEvent> events;
  const std::string prefix = events_prefix(session);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(event_key(session, after_seq + 1)); it->Valid() && it->key().starts_with(prefix);
       it->Next()) {
    json value = json::parse(it->value().ToString(), nullptr, false);
    if (!value.is_object()) continue;
    events.push_back({seq_of_key(it->key().ToStringView()), value.value("stream", std::uint64_t{0}),
                      value.value("data", std::string()), value.value("final", false)});
  }
  return events;
}

std::uint64_t RocksDbSessionStore::last_seq(std::string_view session) const {
  const std::string prefix = events_prefix(session);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  it->SeekForPrev(event_key(session, UINT64_MAX));
  if (it->Valid() && it->key().starts_with(prefix)) return seq_of_key(it->key().ToStringView());
  return 0;
}

void RocksDbSessionStore::trim_events(std::string_view session, std::uint64_t below_seq) {
  const std::string from = event_key(session, 0);
  const std::string to = event_key(session, below_seq);
  const RocksDbWrite unchecked;
  db_->DeleteRange(rocksdb::WriteOptions(), db_->DefaultColumnFamily(), from, to);
}

void RocksDbSessionStore::flush() {
  const RocksDbWrite unchecked;
  db_->FlushWAL(true);
  db_->Flush(rocksdb::FlushOptions());
}

}  // namespace toolmux
