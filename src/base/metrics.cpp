#include "src/base/metrics.h"

#include <sstream>

#include "src/base/trace.h"

namespace toolmux {
namespace {

// Prometheus label values escape backslash, double quote and newline.
std::string label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

void Metrics::record_call(const CallRecord& r) {
  std::lock_guard lock(mutex_);
  ToolStats& stats = totals_.tools[r.tool];
  ++stats.calls_by_outcome[r.outcome];
  ++stats.count;
  stats.seconds_sum += r.seconds;
  stats.bytes_produced += r.bytes_produced;
  stats.bytes_returned += r.bytes_returned;
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (r.seconds <= kBuckets[i]) {
      ++stats.bucket_counts[i];
      break;
    }
  }
  totals_.truncations += r.truncated ? 1 : 0;
  totals_.offloads += r.offloaded ? 1 : 0;
}

void Metrics::set_call_load(std::size_t running, std::size_t queued) {
  std::lock_guard lock(mutex_);
  totals_.calls_running = running;
  totals_.calls_queued = queued;
}

void Metrics::count_refused_call() {
  std::lock_guard lock(mutex_);
  ++totals_.calls_refused;
}

std::uint64_t Metrics::calls(std::string_view tool, std::string_view outcome) const {
  std::lock_guard lock(mutex_);
  auto t = totals_.tools.find(tool);
  if (t == totals_.tools.end()) return 0;
  auto o = t->second.calls_by_outcome.find(outcome);
  return o == t->second.calls_by_outcome.end() ? 0 : o->second;
}

std::uint64_t Metrics::truncations() const {
  std::lock_guard lock(mutex_);
  return totals_.truncations;
}

std::uint64_t Metrics::offloads() const {
  std::lock_guard lock(mutex_);
  return totals_.offloads;
}

std::string Metrics::render_prometheus() const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  out << "# HELP toolmux_tool_calls_total Tool calls by tool and outcome.\n"
      << "# TYPE toolmux_tool_calls_total counter\n";
  for (const auto& [tool, stats] : totals_.tools) {
    for (const auto& [outcome, n] : stats.calls_by_outcome) {
      out << "toolmux_tool_calls_total{tool=\"" << label(tool) << "\",outcome=\"" << label(outcome)
          << "\"} " << n << "\n";
    }
  }
  out << "# HELP toolmux_tool_call_duration_seconds Tool call duration.\n"
      << "# TYPE toolmux_tool_call_duration_seconds histogram\n";
  for (const auto& [tool, stats] : totals_.tools) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += stats.bucket_counts[i];
      out << "toolmux_tool_call_duration_seconds_bucket{tool=\"" << label(tool) << "\",le=\""
          << kBuckets[i] << "\"} " << cumulative << "\n";
    }
    out << "toolmux_tool_call_duration_seconds_bucket{tool=\"" << label(tool) << "\",le=\"+Inf\"} "
        << stats.count << "\n"
        << "toolmux_tool_call_duration_seconds_sum{tool=\"" << label(tool) << "\"} "
        << stats.seconds_sum << "\n"
        << "toolmux_tool_call_duration_seconds_count{tool=\"" << label(tool) << "\"} "
        << stats.count << "\n";
  }
  out << "# HELP toolmux_tool_result_bytes_total Result bytes (text, binary data, "
         "structuredContent) tools produced and toolmux returned.\n"
      << "# TYPE toolmux_tool_result_bytes_total counter\n";
  for (const auto& [tool, stats] : totals_.tools) {
    out << "toolmux_tool_result_bytes_total{tool=\"" << label(tool) << "\",stage=\"produced\"} "
        << stats.bytes_produced << "\n"
        << "toolmux_tool_result_bytes_total{tool=\"" << label(tool) << "\",stage=\"returned\"} "
        << stats.bytes_returned << "\n";
  }
  out << "# HELP toolmux_truncated_results_total Results whose text was truncated.\n"
      << "# TYPE toolmux_truncated_results_total counter\n"
      << "toolmux_truncated_results_total " << totals_.truncations << "\n"
      << "# HELP toolmux_offloaded_results_total Results stored for read_tool_result.\n"
      << "# TYPE toolmux_offloaded_results_total counter\n"
      << "toolmux_offloaded_results_total " << totals_.offloads << "\n"
      << "# HELP toolmux_calls_running Calls running now, handlers still running after their "
         "call was answered included.\n"
      << "# TYPE toolmux_calls_running gauge\n"
      << "toolmux_calls_running " << totals_.calls_running << "\n"
      << "# HELP toolmux_calls_queued Calls waiting for a place to run.\n"
      << "# TYPE toolmux_calls_queued gauge\n"
      << "toolmux_calls_queued " << totals_.calls_queued << "\n"
      << "# HELP toolmux_calls_refused_total Calls refused because toolmux was busy.\n"
      << "# TYPE toolmux_calls_refused_total counter\n"
      << "toolmux_calls_refused_total " << totals_.calls_refused << "\n"
      << "# HELP toolmux_trace_spans_dropped_total Spans not exported: the exporter's queue was "
         "full or the collector did not take them.\n"
      << "# TYPE toolmux_trace_spans_dropped_total counter\n"
      << "toolmux_trace_spans_dropped_total " << dropped_spans() << "\n";
  return out.str();
}

Metrics::Totals Metrics::totals() const {
  std::lock_guard lock(mutex_);
  return totals_;
}

}  // namespace toolmux
