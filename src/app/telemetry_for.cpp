#include "src/app/telemetry_for.h"

#include <cstdlib>
#include <utility>

namespace toolmux {

Result<std::unique_ptr<OtlpExporter>> telemetry_for(const ServeOptions& options,
                                                    const Metrics& metrics, Logger& logger) {
  auto read =
      otlp_options_from(options.otlp_endpoint, [](const char* name) -> std::optional<std::string> {
        const char* value = std::getenv(name);
        if (value == nullptr) return std::nullopt;
        return std::string(value);
      });
  if (!read.ok()) return read.status();
  std::optional<OtlpOptions> otlp = std::move(read).value();
  if (!otlp) return std::unique_ptr<OtlpExporter>();
  logger.write(LogLevel::info, "exporting_telemetry",
               {{"traces", otlp->traces_url}, {"metrics", otlp->metrics_url}});
  return std::make_unique<OtlpExporter>(std::move(*otlp), &metrics);
}

}  // namespace toolmux
