// `toolmux serve --http`: Streamable HTTP until SIGTERM or SIGINT, then a
// bounded drain (running calls get the grace period, then are cancelled),
// the stores flushed, exit 0. Sessions outlive the process in the data
// directory; the next start takes them back.
#pragma once

#include <memory>

#include "src/cli.h"
#include "src/lazy_result_store.h"
#include "src/logger.h"
#include "src/tool_catalog.h"

namespace toolmux {

int serve_http(const std::shared_ptr<const Catalog>& catalog,
               const std::shared_ptr<LazyResultStore>& results, const ServeOptions& options,
               Logger& logger);

}  // namespace toolmux
