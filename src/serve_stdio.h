// `toolmux serve` over stdio: one session for the life of the process.
#pragma once

#include <memory>

#include "catalog/tool_registry.h"
#include "src/cli.h"
#include "src/logger.h"

namespace toolmux {

// Serves stdin/stdout until stdin closes or SIGTERM/SIGINT arrives, then
// cancels the calls in flight, waits briefly for them, and returns the exit code.
int serve_stdio(const std::shared_ptr<const ToolRegistry>& registry, const ServeOptions& options,
                Logger& logger);

}  // namespace toolmux
