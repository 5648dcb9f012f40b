// The requestState key `toolmux serve` runs with (src/store/state_key.h).
#pragma once

#include <memory>

#include "src/assembly/serve_options.h"
#include "src/base/logger.h"
#include "src/base/sealed_box.h"
#include "src/store/pg_store.h"

namespace toolmux {

// The key in `shared` (--store postgresql: every instance of the deployment
// has the same one) or else in the data directory (made there when missing).
// When it can be neither read nor made, a warning says why and a key for this
// process only is used: 2026-07-28 requests still ask their clients, but a
// question asked before a restart, or on another instance, must be asked
// again.
std::shared_ptr<const SealingKey> state_key_for(const ServeOptions& options, PgStore* shared,
                                                Logger& logger);

}  // namespace toolmux
