#include "src/telemetry/otlp_exporter.h"

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "src/telemetry/otlp.pb.h"

namespace toolmux {

namespace {

// An endpoint as cpp-httplib takes it: "scheme://host[:port]" and the path.
struct Endpoint {
  std::string origin;
  std::string path;
};

std::optional<Endpoint> split_url(std::string_view url) {
  const bool http = url.substr(0, 7) == "http://";
  const bool https = url.substr(0, 8) == "https://";
  if (!http && !https) return std::nullopt;
  const std::size_t host_start = http ? 7 : 8;
  const std::size_t slash = url.find('/', host_start);
  Endpoint e;
  e.origin = std::string(url.substr(0, slash));
  e.path = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  const std::string_view host = url.substr(host_start, slash - host_start);
  if (host.empty() || host.find_first_of("@?# ") != std::string_view::npos) return std::nullopt;
  return e;
}

std::string joined(std::string_view base, std::string_view path) {
  std::string out(base);
  while (!out.empty() && out.back() == '/') out.pop_back();
  return out + std::string(path);
}

void set_value(otlp::AnyValue& out, const SpanValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) {
    out.set_string_value(*s);
  } else if (const auto* i = std::get_if<std::int64_t>(&value)) {
    out.set_int_value(*i);
  } else {
    out.set_bool_value(std::get<bool>(value));
  }
}

void add_string(google::protobuf::RepeatedPtrField<otlp::KeyValue>& to, std::string key,
                std::string value) {
  otlp::KeyValue* kv = to.Add();
  kv->set_key(std::move(key));
  kv->mutable_value()->set_string_value(std::move(value));
}

void fill_resource(otlp::Resource& resource, const OtlpOptions& options) {
  add_string(*resource.mutable_attributes(), "service.name", options.service_name);
  add_string(*resource.mutable_attributes(), "service.version", TOOLMUX_VERSION);
  add_string(*resource.mutable_attributes(), "telemetry.sdk.name", "toolmux");
  add_string(*resource.mutable_attributes(), "telemetry.sdk.language", "cpp");
}

void fill_scope(otlp::InstrumentationScope& scope) {
  scope.set_name("toolmux");
  scope.set_version(TOOLMUX_VERSION);
}

// One batch's export request, built on an arena: its messages and strings
// are one bump allocation each, freed at once with the arena.
std::string trace_body(std::vector<SpanRecord>& batch, const OtlpOptions& options) {
  google::protobuf::Arena arena;
  auto& request = *google::protobuf::Arena::CreateMessage<otlp::ExportTraceServiceRequest>(&arena);
  otlp::ResourceSpans* resource_spans = request.add_resource_spans();
  fill_resource(*resource_spans->mutable_resource(), options);
  otlp::ScopeSpans* scope_spans = resource_spans->add_scope_spans();
  fill_scope(*scope_spans->mutable_scope());
  scope_spans->mutable_spans()->Reserve(static_cast<int>(batch.size()));
  for (SpanRecord& r : batch) {
    otlp::Span* span = scope_spans->add_spans();
    span->set_trace_id(r.trace_id.data(), r.trace_id.size());
    span->set_span_id(r.span_id.data(), r.span_id.size());
    const bool root = std::all_of(r.parent_span_id.begin(), r.parent_span_id.end(),
                                  [](std::uint8_t b) { return b == 0; });
    if (!root) span->set_parent_span_id(r.parent_span_id.data(), r.parent_span_id.size());
    span->set_trace_state(std::move(r.trace_state));
    span->set_name(std::move(r.name));
    span->set_kind(static_cast<otlp::Span::SpanKind>(r.kind));
    span->set_start_time_unix_nano(r.start_ns);
    span->set_end_time_unix_nano(r.end_ns);
    for (auto& [key, value] : r.attributes) {
      otlp::KeyValue* kv = span->add_attributes();
      kv->set_key(key);
      set_value(*kv->mutable_value(), value);
    }
    if (r.error) {
      span->mutable_status()->set_code(otlp::Status::STATUS_CODE_ERROR);
      span->mutable_status()->set_message(std::move(r.status_message));
    }
  }
  return request.SerializeAsString();
}

otlp::NumberDataPoint* point(otlp::Metric& metric, bool sum, std::uint64_t start_ns,
                             std::uint64_t now_ns) {
  otlp::NumberDataPoint* p = nullptr;
  if (sum) {
    otlp::Sum* s = metric.mutable_sum();
    s->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_CUMULATIVE);
    s->set_is_monotonic(true);
    p = s->add_data_points();
    p->set_start_time_unix_nano(start_ns);
  } else {
    p = metric.mutable_gauge()->add_data_points();
  }
  p->set_time_unix_nano(now_ns);
  return p;
}

otlp::Metric* metric(otlp::ScopeMetrics& scope, std::string name, std::string description,
                     std::string unit) {
  otlp::Metric* m = scope.add_metrics();
  m->set_name(std::move(name));
  m->set_description(std::move(description));
  m->set_unit(std::move(unit));
  return m;
}

// The same series as Metrics::render_prometheus, under the same names
// (without Prometheus' _total suffix, which a collector's Prometheus exporter adds back).
std::string metrics_body(const Metrics::Totals& totals, std::uint64_t dropped,
                         const OtlpOptions& options, std::uint64_t start_ns) {
  const std::uint64_t now_ns = unix_nanos();
  otlp::ExportMetricsServiceRequest request;
  otlp::ResourceMetrics* resource_metrics = request.add_resource_metrics();
  fill_resource(*resource_metrics->mutable_resource(), options);
  otlp::ScopeMetrics& scope = *resource_metrics->add_scope_metrics();
  fill_scope(*scope.mutable_scope());

  otlp::Metric* calls =
      metric(scope, "toolmux_tool_calls", "Tool calls by tool and outcome.", "{call}");
  otlp::Metric* bytes = metric(scope, "toolmux_tool_result_bytes",
                               "Result bytes (text, binary data, structuredContent) tools "
                               "produced and toolmux returned.",
                               "By");
  otlp::Metric* duration =
      metric(scope, "toolmux_tool_call_duration_seconds", "Tool call duration.", "s");
  otlp::Histogram* histogram = duration->mutable_histogram();
  histogram->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_CUMULATIVE);
  for (const auto& [tool, stats] : totals.tools) {
    for (const auto& [outcome, n] : stats.calls_by_outcome) {
      otlp::NumberDataPoint* p = point(*calls, true, start_ns, now_ns);
      p->set_as_int(static_cast<std::int64_t>(n));
      add_string(*p->mutable_attributes(), "tool", tool);
      add_string(*p->mutable_attributes(), "outcome", outcome);
    }
    for (const auto& [stage, n] : {std::pair{"produced", stats.bytes_produced},
                                   std::pair{"returned", stats.bytes_returned}}) {
      otlp::NumberDataPoint* p = point(*bytes, true, start_ns, now_ns);
      p->set_as_int(static_cast<std::int64_t>(n));
      add_string(*p->mutable_attributes(), "tool", tool);
      add_string(*p->mutable_attributes(), "stage", stage);
    }
    otlp::HistogramDataPoint* h = histogram->add_data_points();
    h->set_start_time_unix_nano(start_ns);
    h->set_time_unix_nano(now_ns);
    h->set_count(stats.count);
    h->set_sum(stats.seconds_sum);
    std::uint64_t counted = 0;
    for (std::size_t i = 0; i < Metrics::kBuckets.size(); ++i) {
      h->add_explicit_bounds(Metrics::kBuckets[i]);
      h->add_bucket_counts(stats.bucket_counts[i]);
      counted += stats.bucket_counts[i];
    }
    h->add_bucket_counts(stats.count - counted);  // over the last bound
    add_string(*h->mutable_attributes(), "tool", tool);
  }
  const struct {
    const char* name;
    const char* description;
    bool sum;
    std::uint64_t value;
  } plain[] = {
      {"toolmux_truncated_results", "Results whose text was truncated.", true, totals.truncations},
      {"toolmux_offloaded_results", "Results stored for read_tool_result.", true, totals.offloads},
      {"toolmux_calls_running", "Calls running now.", false, totals.calls_running},
      {"toolmux_calls_queued", "Calls waiting for a place to run.", false, totals.calls_queued},
      {"toolmux_calls_refused", "Calls refused because toolmux was busy.", true,
       totals.calls_refused},
      {"toolmux_trace_spans_dropped", "Spans not exported.", true, dropped},
  };
  for (const auto& m : plain) {
    otlp::Metric* one = metric(scope, m.name, m.description, "1");
    point(*one, m.sum, start_ns, now_ns)->set_as_int(static_cast<std::int64_t>(m.value));
  }
  return request.SerializeAsString();
}

}  // namespace

Result<std::optional<OtlpOptions>> otlp_options_from(
    std::string_view flag, const std::function<std::optional<std::string>(const char*)>& variable) {
  OtlpOptions options;
  std::string base;
  std::string base_from;
  if (!flag.empty()) {
    base = std::string(flag);
    base_from = "--otlp-endpoint";
  } else if (auto v = variable("OTEL_EXPORTER_OTLP_ENDPOINT"); v && !v->empty()) {
    base = *v;
    base_from = "OTEL_EXPORTER_OTLP_ENDPOINT";
  }
  auto traces = flag.empty() ? variable("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") : std::nullopt;
  auto metrics = flag.empty() ? variable("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") : std::nullopt;
  if (traces && !traces->empty()) {
    options.traces_url = *traces;
  } else if (!base.empty()) {
    options.traces_url = joined(base, "/v1/traces");
  }
  if (metrics && !metrics->empty()) {
    options.metrics_url = *metrics;
  } else if (!base.empty()) {
    options.metrics_url = joined(base, "/v1/metrics");
  }
  if (options.traces_url.empty() && options.metrics_url.empty())
    return std::optional<OtlpOptions>();
  for (const auto& [url, from] :
       {std::pair{options.traces_url, traces && !traces->empty()
                                          ? std::string("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                                          : base_from},
        std::pair{options.metrics_url, metrics && !metrics->empty()
                                           ? std::string("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
                                           : base_from}}) {
    if (!url.empty() && !split_url(url)) {
      return Status::invalid_argument(from + " \"" + url +
                                      "\" is not an http:// or https:// URL with a host");
    }
  }
  if (auto headers = variable("OTEL_EXPORTER_OTLP_HEADERS"); headers && !headers->empty()) {
    std::string_view rest = *headers;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string_view pair = rest.substr(0, comma);
      const std::size_t eq = pair.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        return Status::invalid_argument(
            "OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs separated by commas");
      }
      options.headers[std::string(pair.substr(0, eq))] = std::string(pair.substr(eq + 1));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  if (auto name = variable("OTEL_SERVICE_NAME"); name && !name->empty()) {
    options.service_name = *name;
  }
  if (auto interval = variable("OTEL_METRIC_EXPORT_INTERVAL"); interval && !interval->empty()) {
    char* end = nullptr;
    const long ms = std::strtol(interval->c_str(), &end, 10);
    if (*end != '\0' || ms < 100 || ms > 3'600'000) {
      return Status::invalid_argument(
          "OTEL_METRIC_EXPORT_INTERVAL must be milliseconds from 100 to 3600000");
    }
    options.metrics_interval = std::chrono::milliseconds(ms);
  }
  return std::optional<OtlpOptions>(std::move(options));
}

struct OtlpExporter::State {
  OtlpOptions options;
  const Metrics* metrics = nullptr;
  std::uint64_t start_ns = unix_nanos();
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<SpanRecord> queue;  // at most options.max_queue
  bool stopping = false;
  std::atomic<std::uint64_t> exported{0};
  std::unique_ptr<httplib::Client> traces_client;
  std::string traces_path;
  std::unique_ptr<httplib::Client> metrics_client;
  std::string metrics_path;
  std::thread thread;

  std::unique_ptr<httplib::Client> client_for(const std::string& url, std::string& path) const {
    if (url.empty()) return nullptr;
    const Endpoint e = *split_url(url);
    path = e.path;
    auto client = std::make_unique<httplib::Client>(e.origin);
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(options.timeout);
    const auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(options.timeout - seconds);
    client->set_connection_timeout(seconds.count(), micros.count());
    client->set_read_timeout(seconds.count(), micros.count());
    client->set_write_timeout(seconds.count(), micros.count());
    client->set_keep_alive(true);
    httplib::Headers headers;
    for (const auto& [k, v] : options.headers) headers.emplace(k, v);
    client->set_default_headers(std::move(headers));
    return client;
  }

  bool post(httplib::Client& client, const std::string& path, const std::string& body) {
    auto res = client.Post(path, body, "application/x-protobuf");
    return res && res->status >= 200 && res->status < 300;
  }

  void send_spans(std::vector<SpanRecord>& batch) {
    if (batch.empty()) return;
    const std::size_t n = batch.size();
    // OTLP/HTTP allows retries; toolmux drops instead, to stay bounded.
    const bool sent =
        traces_client && post(*traces_client, traces_path, trace_body(batch, options));
    if (sent) {
      exported.fetch_add(n, std::memory_order_relaxed);
    } else {
      count_dropped_spans(n);
    }
    batch.clear();
  }

  void send_metrics() {
    if (!metrics_client || metrics == nullptr) return;
    (void)post(*metrics_client, metrics_path,
               metrics_body(metrics->totals(), dropped_spans(), options, start_ns));
  }

  void run() {
    auto next_metrics = std::chrono::steady_clock::now() + options.metrics_interval;
    std::vector<SpanRecord> batch;
    batch.reserve(options.max_batch);
    std::unique_lock lock(mutex);
    while (true) {
      const auto flush_by = std::chrono::steady_clock::now() + options.flush_interval;
      wake.wait_until(lock, std::min(flush_by, next_metrics),
                      [&] { return stopping || queue.size() >= options.max_batch; });
      const bool last = stopping;
      // Everything queued now, in batches of at most max_batch.
      while (!queue.empty()) {
        while (!queue.empty() && batch.size() < options.max_batch) {
          batch.push_back(std::move(queue.front()));
          queue.pop_front();
        }
        lock.unlock();
        send_spans(batch);
        lock.lock();
        if (last) break;  // one try at what was queued when stopping
      }
      if (last || std::chrono::steady_clock::now() >= next_metrics) {
        lock.unlock();
        send_metrics();
        lock.lock();
        next_metrics = std::chrono::steady_clock::now() + options.metrics_interval;
      }
      if (last) {
        count_dropped_spans(queue.size());
        queue.clear();
        return;
      }
    }
  }
};

OtlpExporter::OtlpExporter(OtlpOptions options, const Metrics* metrics)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = std::move(options);
  s.metrics = metrics;
  s.traces_client = s.client_for(s.options.traces_url, s.traces_path);
  s.metrics_client = s.client_for(s.options.metrics_url, s.metrics_path);
  s.thread = std::thread([&s] { s.run(); });
  if (s.traces_client) set_span_sink(this);
}

OtlpExporter::~OtlpExporter() {
  set_span_sink(nullptr);
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_one();
  state_->thread.join();
}

void OtlpExporter::finished(SpanRecord span) {
  State& s = *state_;
  bool wake = false;
  {
    std::lock_guard lock(s.mutex);
    if (s.queue.size() >= s.options.max_queue || s.stopping) {
      count_dropped_spans(1);
      return;
    }
    s.queue.push_back(std::move(span));
    wake = s.queue.size() == s.options.max_batch;
  }
  if (wake) s.wake.notify_one();
}

std::uint64_t OtlpExporter::exported_spans() const {
  return state_->exported.load(std::memory_order_relaxed);
}

}  // namespace toolmux
