// `toolmux serve` over stdio: one session for the life of the process.
#pragma once

#include <memory>

#include "src/app/catalog_host.h"
#include "src/app/cli.h"
#include "src/app/serve_stores.h"
#include "src/assembly/tool_catalog.h"
#include "src/base/logger.h"

namespace toolmux {

// Serves stdin/stdout until stdin closes or SIGTERM/SIGINT arrives. When stdin
// closes, the calls already read still run and are answered, for
// options.shutdown_grace_seconds at most, after which those still running are
// answered with an error; on a signal they are cancelled. Returns the exit code.
int serve_stdio(CatalogHost& host, const ServeStores& stores, const ServeOptions& options,
                Logger& logger);

}  // namespace toolmux
