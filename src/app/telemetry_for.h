// The OTLP export serve runs with (docs/traces.md): from --otlp-endpoint or
// the OTEL_EXPORTER_OTLP_* variables, exporting `metrics` too. Null when no
// endpoint is set (tracing stays off); an error naming a bad setting.
#pragma once

#include <memory>

#include "src/assembly/serve_options.h"
#include "src/base/logger.h"
#include "src/base/metrics.h"
#include "src/base/status.h"
#include "src/telemetry/otlp_exporter.h"

namespace toolmux {

Result<std::unique_ptr<OtlpExporter>> telemetry_for(const ServeOptions& options,
                                                    const Metrics& metrics, Logger& logger);

}  // namespace toolmux
