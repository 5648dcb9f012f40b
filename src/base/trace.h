// Spans of W3C/OpenTelemetry traces: what a request, a stage, a tool or an
// upstream call took, recorded here and handed to a SpanSink (the OTLP
// exporter, src/telemetry/otlp_exporter.h) when it ends.
//
// Tracing is off until set_span_sink() gives a sink: then Span::start returns
// an inactive span after one load and one branch, allocating nothing, and
// every other call on it does nothing.
//
// The trace context of what runs on a thread (current_trace()) is what a span
// started there is a child of, what an upstream request carries in its _meta
// and `traceparent` header, and what a command tool gets in TRACEPARENT. A
// SpanScope sets it for a block. Each thread has its own; a span started on
// one thread may end on another.
//
// Attributes hold names, ids, outcomes and sizes: never argument values or
// results (docs/traces.md).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace toolmux {

// A W3C trace context (https://www.w3.org/TR/trace-context/): the trace, the
// span that is the parent of whatever continues it, its flags and tracestate.
struct TraceContext {
  std::array<std::uint8_t, 16> trace_id{};
  std::array<std::uint8_t, 8> span_id{};
  std::uint8_t flags = 0;  // bit 0: sampled
  std::string state;       // tracestate as received, or ""
};

// The longest traceparent and tracestate read; longer ones are refused
// (tracestate: 32 members of at most 256 characters, W3C section 3.3.1.1).
inline constexpr std::size_t kMaxTraceparentBytes = 55;
inline constexpr std::size_t kMaxTracestateBytes = 512;

// Reads a `traceparent` value (version 00: "00-<32 hex>-<16 hex>-<2 hex>",
// lower case; a later version's first 55 characters, as the spec says) and
// its `tracestate`. nullopt for anything else: a wrong length or character,
// an all-zero trace or span id, version ff. A tracestate over
// kMaxTracestateBytes or with a control character is dropped, not the parent.
std::optional<TraceContext> parse_traceparent(std::string_view traceparent,
                                              std::string_view tracestate = {});
// "00-<trace id>-<span id>-<flags>", in lower-case hex.
std::string format_traceparent(const TraceContext& context);
// Lower-case hex of `bytes`.
std::string hex_id(const std::uint8_t* bytes, std::size_t size);

// A span's name and each string attribute are cut to this many bytes (at a
// character's start; text that is not UTF-8 is repaired first).
inline constexpr std::size_t kMaxSpanTextBytes = 256;

enum class SpanKind : std::uint8_t { internal = 1, server = 2, client = 3 };

using SpanValue = std::variant<std::string, std::int64_t, bool>;

// An ended span, as a sink receives it. Times are nanoseconds since the Unix epoch.
struct SpanRecord {
  std::string name;
  SpanKind kind = SpanKind::internal;
  std::array<std::uint8_t, 16> trace_id{};
  std::array<std::uint8_t, 8> span_id{};
  std::array<std::uint8_t, 8> parent_span_id{};  // all zero: a root span
  std::string trace_state;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  // Keys are string literals (semantic convention names): never copied.
  std::vector<std::pair<const char*, SpanValue>> attributes;
  bool error = false;  // the span's status: error, else unset
  std::string status_message;
};

// Where ended spans go. finished() is called on the thread that ends a span,
// concurrently from many: it must return at once (never wait on a network).
class SpanSink {
 public:
  virtual ~SpanSink() = default;
  virtual void finished(SpanRecord span) = 0;
};

// Turns tracing on (a sink) or off (null). The sink must outlive every span
// started while it was set: set it before serving and clear it after.
void set_span_sink(SpanSink* sink);
bool tracing_on();

// Nanoseconds since the Unix epoch, now.
std::uint64_t unix_nanos();

// A span being recorded; inactive (every call a no-op) when tracing is off.
// Move-only; ends when destroyed unless ended before.
class Span {
 public:
  Span() = default;
  Span(Span&&) noexcept = default;
  Span& operator=(Span&& other) noexcept;
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  ~Span() { end(); }

  // A span named `name`, a child of `parent` when given, else of this
  // thread's current trace, else the root of a new trace. `start_ns` (0: now)
  // lets a span start when its work began, before it was known to be traced.
  static Span start(std::string_view name, SpanKind kind, const TraceContext* parent = nullptr,
                    std::uint64_t start_ns = 0) {
    if (!tracing_on()) return {};
    return begin(name, kind, parent, start_ns);
  }

  bool active() const { return record_ != nullptr; }
  // `key` is a string literal.
  void set(const char* key, std::string value);
  void set(const char* key, std::int64_t value);
  void set_flag(const char* key, bool value);
  // The span's status is error: `type` is its error.type attribute.
  void set_error(std::string_view type, std::string_view message = {});
  // Hands the span to the sink; later calls do nothing.
  void end();
  // The context a child of this span continues (an inactive span: none).
  const TraceContext* context() const { return record_ ? &context_ : nullptr; }

 private:
  static Span begin(std::string_view name, SpanKind kind, const TraceContext* parent,
                    std::uint64_t start_ns);
  std::unique_ptr<SpanRecord> record_;
  TraceContext context_;
};

// This thread's current trace context: null when none.
const TraceContext* current_trace();

// Makes `context` this thread's current trace until destroyed, then restores
// the one before; null (an inactive span's) changes nothing. A span's:
// SpanScope scope(span.context()).
class SpanScope {
 public:
  explicit SpanScope(const TraceContext* context);
  ~SpanScope();
  SpanScope(const SpanScope&) = delete;
  SpanScope& operator=(const SpanScope&) = delete;

 private:
  const TraceContext* previous_;
};

// The trace context an HTTP request's `traceparent` and `tracestate` headers
// carried, for the request the transport delivers on this thread (its _meta
// says first). Set by the HTTP transport around delivery.
const TraceContext* incoming_header_trace();
class IncomingTraceScope {
 public:
  explicit IncomingTraceScope(std::optional<TraceContext> context);
  ~IncomingTraceScope();
  IncomingTraceScope(const IncomingTraceScope&) = delete;
  IncomingTraceScope& operator=(const IncomingTraceScope&) = delete;

 private:
  std::optional<TraceContext> context_;
  const TraceContext* previous_;
};

// Spans lost because the exporter's queue was full or the collector did not
// take them; kept here so that /metrics shows them beside the rest.
void count_dropped_spans(std::uint64_t n);
std::uint64_t dropped_spans();

}  // namespace toolmux
