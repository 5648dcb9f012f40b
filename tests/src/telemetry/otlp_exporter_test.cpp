#include "src/telemetry/otlp_exporter.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <string>
#include <thread>

using namespace toolmux;

namespace {

auto variables(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST_CASE("OTLP settings: none given leaves tracing off") {
  auto read = otlp_options_from("", variables({}));
  REQUIRE(read.ok());
  CHECK_FALSE(read.value());
}

TEST_CASE("OTLP settings: the flag wins, and /v1/traces and /v1/metrics are added") {
  auto read = otlp_options_from("http://collector:4318/",
                                variables({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://other:1"},
                                           {"OTEL_SERVICE_NAME", "front"}}));
  REQUIRE(read.ok());
  REQUIRE(read.value());
  CHECK(read.value()->traces_url == "http://collector:4318/v1/traces");
  CHECK(read.value()->metrics_url == "http://collector:4318/v1/metrics");
  CHECK(read.value()->service_name == "front");
}

TEST_CASE("OTLP settings: the standard variables, per signal and headers") {
  auto read =
      otlp_options_from("", variables({{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector:4318"},
                                       {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:9/in"},
                                       {"OTEL_EXPORTER_OTLP_HEADERS", "api-key=secret,x=y"},
                                       {"OTEL_METRIC_EXPORT_INTERVAL", "1500"}}));
  REQUIRE(read.ok());
  REQUIRE(read.value());
  CHECK(read.value()->traces_url == "http://traces:9/in");
  CHECK(read.value()->metrics_url == "https://collector:4318/v1/metrics");
  CHECK(read.value()->headers.at("api-key") == "secret");
  CHECK(read.value()->headers.at("x") == "y");
  CHECK(read.value()->metrics_interval == std::chrono::milliseconds(1500));
}

TEST_CASE("OTLP settings: a bad value is refused, naming where it came from") {
  auto bad_url = otlp_options_from("collector:4318", variables({}));
  REQUIRE_FALSE(bad_url.ok());
  CHECK(bad_url.status().message() ==
        "--otlp-endpoint \"collector:4318/v1/traces\" is not an http:// or https:// URL with a "
        "host");
  auto bad_env =
      otlp_options_from("", variables({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://x"}}));
  REQUIRE_FALSE(bad_env.ok());
  CHECK(bad_env.status().message().find("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == 0);
  auto bad_headers =
      otlp_options_from("http://c:1", variables({{"OTEL_EXPORTER_OTLP_HEADERS", "novalue"}}));
  REQUIRE_FALSE(bad_headers.ok());
  auto bad_interval =
      otlp_options_from("http://c:1", variables({{"OTEL_METRIC_EXPORT_INTERVAL", "soon"}}));
  REQUIRE_FALSE(bad_interval.ok());
}

TEST_CASE("OTLP export: past its queue's bound, spans are dropped and counted, never waited for") {
  OtlpOptions options;
  options.traces_url = "http://127.0.0.1:9/v1/traces";  // nothing listens
  options.max_queue = 4;
  options.max_batch = 100;
  options.flush_interval = std::chrono::milliseconds(60000);
  const std::uint64_t before = dropped_spans();
  {
    OtlpExporter exporter(options, nullptr);
    REQUIRE(tracing_on());
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i) Span::start("s", SpanKind::internal).end();
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(100));
    CHECK(dropped_spans() - before == 6);  // the queue holds 4
  }
  // On close the 4 queued were tried once, and the collector was not there.
  CHECK(dropped_spans() - before == 10);
  CHECK_FALSE(tracing_on());
}
