// Where tasks (the io.modelcontextprotocol/tasks extension, docs/tasks.md)
// are kept, so that a task outlives the request that made it and the
// process that runs it: an interface with two implementations, one contract.
//
// - RocksDB (open_rocksdb_task_store): data_dir/tasks/slot-N, for one
//   machine. Opening a slot ends every task its last holder left unfinished
//   as failed: the process that ran them is gone.
// - PostgreSQL (open_pg_task_store): shared by every instance of a
//   deployment, so that any of them answers tasks/get for a task another
//   runs.
//
// A task belongs to its owner (the principal that made it): get() gives the
// same not-found answer for an id that does not exist, that expired, and that
// is someone else's. A task expires ttl after it was made.
//
// Thread-safe: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "src/base/status.h"

namespace toolmux {

class PgStore;  // src/store/pg_store.h

// One task as it is kept. Times are milliseconds since the Unix epoch.
struct TaskRecord {
  std::string id;
  std::string owner;           // the principal that made it
  std::string tool;            // the tool called, as the catalog names it
  std::string status;          // working, input_required, completed, failed, cancelled
  std::string status_message;  // "" = none
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;
  std::int64_t ttl_ms = 0;
  nlohmann::json result;          // completed: the tool's CallToolResult; else null
  nlohmann::json error;           // failed: {code, message[, data]}; else null
  nlohmann::json input_requests;  // input_required: {key: {method, params}}; else null

  bool terminal() const {
    return status == "completed" || status == "failed" || status == "cancelled";
  }
  std::string to_text() const;
  // nullopt when `text` is not a record to_text() wrote.
  static std::optional<TaskRecord> from_text(std::string_view text);
};

class TaskStore {
 public:
  virtual ~TaskStore() = default;
  // Writes the record (new or changed). io_error on a storage failure
  // (unavailable when a shared store cannot be reached).
  virtual Status put(const TaskRecord& record) = 0;
  // The task `id` of `owner`; nullopt when there is none, it expired, or it
  // is another owner's. A failed read is a Status.
  virtual Result<std::optional<TaskRecord>> get(std::string_view owner, std::string_view id) = 0;
  // Deletes the tasks whose ttl has passed at `now_ms`; how many.
  virtual std::size_t expire(std::int64_t now_ms) = 0;
  // Where the tasks are, for logs (never a password).
  virtual std::string where() const = 0;
};

// RocksDB in base/slot-N (db_slots.h). `now_ms` is the time the tasks the
// slot's last holder left unfinished are ended at.
Result<std::unique_ptr<TaskStore>> open_rocksdb_task_store(const std::filesystem::path& base,
                                                           std::size_t max_slots,
                                                           std::int64_t now_ms);
// In memory, for an embedding that names no store: its tasks end with the
// process. Past `max_tasks` at once (expired ones swept first), put() of a
// new task fails with resource_exhausted.
std::unique_ptr<TaskStore> memory_task_store(std::size_t max_tasks = 10000);
// PostgreSQL: the table toolmux_tasks of `store` (pg_schema.h).
Result<std::unique_ptr<TaskStore>> open_pg_task_store(std::shared_ptr<PgStore> store);

}  // namespace toolmux
