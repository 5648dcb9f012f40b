// Export of spans and metrics over OTLP/HTTP with protobuf bodies
// (https://opentelemetry.io/docs/specs/otlp/#otlphttp): POST <endpoint>/v1/traces
// and /v1/metrics. The only folder that includes protobuf's and the generated
// headers (src/telemetry/otlp.proto).
//
// The exporter is the SpanSink (src/base/trace.h): finished() puts a span in
// a bounded queue and returns; one thread of the exporter's own sends the
// queue in batches, and the metrics every metrics_interval. A span that
// finds the queue full, and a batch the collector refuses, times out on or
// cannot be reached for, is dropped and counted (dropped_spans(), shown in
// /metrics): a call never waits for the collector.
//
// Thread-safe. The destructor clears the span sink, sends what is queued
// (one try, within `timeout`) and the metrics once more, and joins the thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "src/base/metrics.h"
#include "src/base/status.h"
#include "src/base/trace.h"

namespace toolmux {

struct OtlpOptions {
  std::string traces_url;                      // the full URL spans are posted to
  std::string metrics_url;                     // the full URL metrics are posted to; "" = none
  std::map<std::string, std::string> headers;  // sent with every export
  std::string service_name = "toolmux";
  std::size_t max_queue = 4096;  // spans waiting; one more is dropped
  std::size_t max_batch = 512;   // spans in one request
  std::chrono::milliseconds flush_interval{1000};
  std::chrono::milliseconds timeout{5000};  // connect, send and answer, each
  std::chrono::milliseconds metrics_interval{10000};
};

// The export's settings from --otlp-endpoint (`flag`, "" = not given) and the
// standard variables: OTEL_EXPORTER_OTLP_ENDPOINT (a base URL; /v1/traces and
// /v1/metrics are added), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT (full URLs), OTEL_EXPORTER_OTLP_HEADERS
// ("k=v,k=v"), OTEL_SERVICE_NAME, OTEL_METRIC_EXPORT_INTERVAL (ms). The flag
// wins over the variables. nullopt when none names an endpoint (tracing
// stays off); an error naming the setting when a URL is not http(s)://host[:port][/path].
// `variable` reads one environment variable (nullopt: unset).
Result<std::optional<OtlpOptions>> otlp_options_from(
    std::string_view flag, const std::function<std::optional<std::string>(const char*)>& variable);

class OtlpExporter : public SpanSink {
 public:
  // Starts the thread and sets itself as the span sink. `metrics` (may be
  // null) must outlive the exporter.
  OtlpExporter(OtlpOptions options, const Metrics* metrics);
  ~OtlpExporter() override;
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  void finished(SpanRecord span) override;

  // Spans and metric exports the collector took, so far.
  std::uint64_t exported_spans() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace toolmux
