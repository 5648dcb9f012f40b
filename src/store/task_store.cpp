#include "src/store/task_store.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "src/store/db_slots.h"
#include "src/store/pg_connection.h"
#include "src/store/pg_store.h"

namespace toolmux {

using nlohmann::json;

std::string TaskRecord::to_text() const {
  json j{{"id", id},         {"owner", owner},        {"tool", tool},
         {"status", status}, {"created", created_ms}, {"updated", updated_ms},
         {"ttl", ttl_ms}};
  if (!status_message.empty()) j["message"] = status_message;
  if (!result.is_null()) j["result"] = result;
  if (!error.is_null()) j["error"] = error;
  if (!input_requests.is_null()) j["input"] = input_requests;
  return j.dump();
}

std::optional<TaskRecord> TaskRecord::from_text(std::string_view text) {
  // The store's own text: parsed without a depth bound would be wrong for a
  // client's text, but a record holds a result that passed the boundary's.
  json j = json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string()) return std::nullopt;
  TaskRecord r;
  r.id = j.value("id", "");
  r.owner = j.value("owner", "");
  r.tool = j.value("tool", "");
  r.status = j.value("status", "");
  r.status_message = j.value("message", "");
  r.created_ms = j.value("created", std::int64_t{0});
  r.updated_ms = j.value("updated", std::int64_t{0});
  r.ttl_ms = j.value("ttl", std::int64_t{0});
  if (auto it = j.find("result"); it != j.end()) r.result = std::move(*it);
  if (auto it = j.find("error"); it != j.end()) r.error = std::move(*it);
  if (auto it = j.find("input"); it != j.end()) r.input_requests = std::move(*it);
  return r;
}

namespace {

bool expired(const TaskRecord& r, std::int64_t now_ms) { return r.created_ms + r.ttl_ms <= now_ms; }

// Keys: "t/<id>" -> the record's text.
std::string task_key(std::string_view id) { return "t/" + std::string(id); }

class RocksDbTaskStore final : public TaskStore {
 public:
  explicit RocksDbTaskStore(OpenedSlot slot) : slot_(std::move(slot)) {}
  ~RocksDbTaskStore() override { slot_.db.reset(); }

  Status put(const TaskRecord& record) override {
    rocksdb::WriteOptions wo;
    wo.sync = false;  // the WAL is written; a machine crash may lose the last change
    auto s = slot_.db->Put(wo, task_key(record.id), record.to_text());
    if (!s.ok()) return Status::io_error("the task store could not write: " + s.ToString());
    return Status::ok_status();
  }

  Result<std::optional<TaskRecord>> get(std::string_view owner, std::string_view id) override {
    std::string text;
    auto s = slot_.db->Get(rocksdb::ReadOptions(), task_key(id), &text);
    if (s.IsNotFound()) return std::optional<TaskRecord>();
    if (!s.ok()) return Status::io_error("the task store could not read: " + s.ToString());
    auto record = TaskRecord::from_text(text);
    if (!record || record->owner != owner) return std::optional<TaskRecord>();
    return record;
  }

  std::size_t expire(std::int64_t now_ms) override {
    rocksdb::WriteBatch batch;
    std::size_t n = 0;
    std::unique_ptr<rocksdb::Iterator> it(slot_.db->NewIterator(rocksdb::ReadOptions()));
    for (it->Seek("t/"); it->Valid() && it->key().starts_with("t/"); it->Next()) {
      auto record = TaskRecord::from_text(it->value().ToStringView());
      if (!record || expired(*record, now_ms)) {
        batch.Delete(it->key());
        ++n;
      }
    }
    if (n > 0 && !slot_.db->Write(rocksdb::WriteOptions(), &batch).ok()) return 0;
    return n;
  }

  // Ends what the slot's last holder left running: its process is gone.
  void end_orphans(std::int64_t now_ms) {
    std::unique_ptr<rocksdb::Iterator> it(slot_.db->NewIterator(rocksdb::ReadOptions()));
    rocksdb::WriteBatch batch;
    for (it->Seek("t/"); it->Valid() && it->key().starts_with("t/"); it->Next()) {
      auto record = TaskRecord::from_text(it->value().ToStringView());
      if (!record || record->terminal()) continue;
      record->status = "failed";
      record->status_message = "toolmux stopped while the task ran";
      record->error = {{"code", -32603},
                       {"message",
                        "toolmux stopped while the task ran; the tool may or may not "
                        "have finished its work, and it was not run again"}};
      record->input_requests = nullptr;
      record->updated_ms = now_ms;
      batch.Put(it->key(), record->to_text());
    }
    (void)slot_.db->Write(rocksdb::WriteOptions(), &batch);
  }

  std::string where() const override { return slot_.folder.string(); }

 private:
  OpenedSlot slot_;
};

class PgTaskStore final : public TaskStore {
 public:
  explicit PgTaskStore(std::shared_ptr<PgStore> store) : store_(std::move(store)) {}

  Status put(const TaskRecord& record) override {
    auto lease = store_->pool().acquire();
    if (!lease.ok()) return lease.status();
    auto done = (**lease).exec(
        "INSERT INTO toolmux_tasks (id, owner, expires_ms, record) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT (id) DO UPDATE SET record = EXCLUDED.record",
        {PgParam::text(record.id), PgParam::text(record.owner),
         PgParam::integer(record.created_ms + record.ttl_ms), PgParam::text(record.to_text())});
    if (!done.ok()) return done.status();
    return Status::ok_status();
  }

  Result<std::optional<TaskRecord>> get(std::string_view owner, std::string_view id) override {
    auto lease = store_->pool().acquire();
    if (!lease.ok()) return lease.status();
    auto rows = (**lease).exec("SELECT record FROM toolmux_tasks WHERE id = $1 AND owner = $2",
                               {PgParam::text(id), PgParam::text(owner)});
    if (!rows.ok()) return rows.status();
    if (rows->rows() == 0) return std::optional<TaskRecord>();
    return TaskRecord::from_text(rows->text(0, 0));
  }

  std::size_t expire(std::int64_t now_ms) override {
    auto lease = store_->pool().acquire();
    if (!lease.ok()) return 0;
    auto done = (**lease).exec("DELETE FROM toolmux_tasks WHERE expires_ms <= $1",
                               {PgParam::integer(now_ms)});
    return done.ok() ? static_cast<std::size_t>(done->affected()) : 0;
  }

  std::string where() const override { return "PostgreSQL at " + store_->target(); }

 private:
  std::shared_ptr<PgStore> store_;
};

class MemoryTaskStore final : public TaskStore {
 public:
  explicit MemoryTaskStore(std::size_t max_tasks) : max_tasks_(max_tasks) {}

  Status put(const TaskRecord& record) override {
    std::lock_guard lock(mutex_);
    if (!tasks_.count(record.id) && tasks_.size() >= max_tasks_) {
      std::erase_if(tasks_, [&](const auto& kv) { return expired(kv.second, record.created_ms); });
      if (tasks_.size() >= max_tasks_) {
        return Status::resource_exhausted("the task store holds " + std::to_string(max_tasks_) +
                                          " tasks, its limit");
      }
    }
    tasks_[record.id] = record;
    return Status::ok_status();
  }

  Result<std::optional<TaskRecord>> get(std::string_view owner, std::string_view id) override {
    std::lock_guard lock(mutex_);
    auto it = tasks_.find(std::string(id));
    if (it == tasks_.end() || it->second.owner != owner) return std::optional<TaskRecord>();
    return std::optional<TaskRecord>(it->second);
  }

  std::size_t expire(std::int64_t now_ms) override {
    std::lock_guard lock(mutex_);
    return std::erase_if(tasks_, [&](const auto& kv) { return expired(kv.second, now_ms); });
  }

  std::string where() const override { return "memory"; }

 private:
  const std::size_t max_tasks_;
  std::mutex mutex_;
  std::map<std::string, TaskRecord> tasks_;
};

}  // namespace

std::unique_ptr<TaskStore> memory_task_store(std::size_t max_tasks) {
  return std::make_unique<MemoryTaskStore>(max_tasks);
}

Result<std::unique_ptr<TaskStore>> open_rocksdb_task_store(const std::filesystem::path& base,
                                                           std::size_t max_slots,
                                                           std::int64_t now_ms) {
  auto slot = open_free_slot(base, max_slots, small_db_options(), "the task store");
  if (!slot.ok()) return slot.status();
  auto store = std::make_unique<RocksDbTaskStore>(std::move(*slot));
  store->end_orphans(now_ms);
  store->expire(now_ms);
  return std::unique_ptr<TaskStore>(std::move(store));
}

Result<std::unique_ptr<TaskStore>> open_pg_task_store(std::shared_ptr<PgStore> store) {
  if (!store) return Status::invalid_argument("the PostgreSQL task store needs a PostgreSQL store");
  return std::unique_ptr<TaskStore>(std::make_unique<PgTaskStore>(std::move(store)));
}

}  // namespace toolmux
