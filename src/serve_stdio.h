// `toolmux serve` over stdio: one session for the life of the process.
#pragma once

#include <memory>

#include "src/base/logger.h"
#include "src/catalog_host.h"
#include "src/cli.h"
#include "src/lazy_result_store.h"
#include "src/tool_catalog.h"

namespace toolmux {

// Serves stdin/stdout until stdin closes or SIGTERM/SIGINT arrives. When stdin
// closes, the calls already read still run and are answered, for
// options.shutdown_grace_seconds at most, after which those still running are
// answered with an error; on a signal they are cancelled. Returns the exit code.
int serve_stdio(CatalogHost& host, const std::shared_ptr<LazyResultStore>& results,
                const ServeOptions& options, Logger& logger);

}  // namespace toolmux
