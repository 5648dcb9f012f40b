// Counters and histograms the server keeps about its tool calls, rendered in
// the Prometheus text format (served at /metrics by the HTTP transport).
// Thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace toolmux {

struct CallRecord {
  std::string tool;
  std::string outcome;
  double seconds = 0;
  std::uint64_t bytes_produced = 0;
  std::uint64_t bytes_returned = 0;
  bool truncated = false;
  bool offloaded = false;
};

class Metrics {
 public:
  void record_call(const CallRecord& record);

  // Calls holding a place among the running calls, and calls waiting for
  // one, now (src/session/call_admission.h).
  void set_call_load(std::size_t running, std::size_t queued);
  // A call refused because the queue was full.
  void count_refused_call();

  std::uint64_t calls(std::string_view tool, std::string_view outcome) const;
  std::uint64_t truncations() const;
  std::uint64_t offloads() const;

  std::string render_prometheus() const;

  // Upper bounds (seconds) of the call duration histogram's buckets.
  static constexpr std::array<double, 10> kBuckets = {0.001, 0.005, 0.01, 0.05, 0.1,
                                                      0.5,   1,     5,    10,   30};

  struct ToolStats {
    std::map<std::string, std::uint64_t, std::less<>> calls_by_outcome;
    std::array<std::uint64_t, kBuckets.size()> bucket_counts{};  // not cumulative
    std::uint64_t count = 0;
    double seconds_sum = 0;
    std::uint64_t bytes_produced = 0;
    std::uint64_t bytes_returned = 0;
  };
  // Everything counted, as it is now: what the OTLP exporter sends
  // (src/telemetry/otlp_exporter.h), the same as render_prometheus shows.
  struct Totals {
    std::map<std::string, ToolStats, std::less<>> tools;
    std::uint64_t truncations = 0;
    std::uint64_t offloads = 0;
    std::size_t calls_running = 0;
    std::size_t calls_queued = 0;
    std::uint64_t calls_refused = 0;
  };
  Totals totals() const;

 private:
  mutable std::mutex mutex_;
  Totals totals_;
};

}  // namespace toolmux
