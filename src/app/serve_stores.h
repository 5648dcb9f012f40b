// What `toolmux serve` keeps its state in, opened by run() before it serves
// and handed to serve_stdio or serve_http. Plain data.
#pragma once

#include <memory>
#include <string>

#include "src/app/cluster_link.h"
#include "src/pipeline/tasks.h"
#include "src/store/lazy_result_store.h"
#include "src/store/pg_store.h"

namespace toolmux {

struct ServeStores {
  // Offloaded results: in the data directory, or in `shared`.
  std::shared_ptr<LazyResultStore> results;
  // --store postgresql: the deployment's database; null with --store rocksdb.
  std::shared_ptr<PgStore> shared;
  // This process's id, random at start: in its logs and /status.json, so that
  // an operator tells the instances of a deployment apart.
  std::string instance_id;
  // --store postgresql: this instance's link to the others (news both ways);
  // null with --store rocksdb.
  ClusterLink* cluster = nullptr;
  // Tasks: in the data directory (data_dir/tasks), or in `shared`; opened at
  // the first task.
  TaskOptions tasks;
};

}  // namespace toolmux
