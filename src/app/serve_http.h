// `toolmux serve --http`: Streamable HTTP until SIGTERM or SIGINT, then a
// bounded drain (running calls get the grace period, then are cancelled),
// the stores flushed, exit 0. Sessions outlive the process in the data
// directory; the next start takes them back.
#pragma once

#include <csignal>
#include <memory>

#include "src/app/catalog_host.h"
#include "src/app/cli.h"
#include "src/app/serve_stores.h"
#include "src/assembly/tool_catalog.h"
#include "src/base/logger.h"

namespace toolmux {

// Blocks SIGTERM and SIGINT in the calling thread, and so in every thread it
// starts from then on (serve_http takes them with sigwait); SIGPIPE is
// ignored. Called before anything starts a thread (upstreams, stores):
// a thread without the mask would die of the signal instead.
sigset_t block_stop_signals();

int serve_http(CatalogHost& host, const ServeStores& stores, const ServeOptions& options,
               Logger& logger);

}  // namespace toolmux
