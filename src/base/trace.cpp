#include "src/base/trace.h"

#include <atomic>
#include <chrono>
#include <random>

#include "src/base/utf8.h"

namespace toolmux {

namespace {

std::atomic<SpanSink*> g_sink{nullptr};
std::atomic<std::uint64_t> g_dropped{0};
thread_local const TraceContext* t_current = nullptr;
thread_local const TraceContext* t_incoming = nullptr;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case is refused too (W3C section 3.2.2.3)
}

// Reads `text` (2 * N lower-case hex digits) into `out`; false on any other character.
template <std::size_t N>
bool read_hex(std::string_view text, std::array<std::uint8_t, N>& out) {
  for (std::size_t i = 0; i < N; ++i) {
    const int high = hex_value(text[2 * i]);
    const int low = hex_value(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  return true;
}

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& bytes) {
  for (auto b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

// Span and trace ids: random, from a generator each thread seeds once from
// the kernel. Ids need to be unique, not secret.
std::mt19937_64& id_generator() {
  thread_local std::mt19937_64 generator{[] {
    std::random_device device;
    return (std::uint64_t{device()} << 32) ^ device();
  }()};
  return generator;
}

template <std::size_t N>
void fill_random(std::array<std::uint8_t, N>& bytes) {
  do {
    for (std::size_t i = 0; i < N; i += 8) {
      std::uint64_t word = id_generator()();
      for (std::size_t j = i; j < i + 8 && j < N; ++j) {
        bytes[j] = static_cast<std::uint8_t>(word);
        word >>= 8;
      }
    }
  } while (all_zero(bytes));
}

// Text cut to kMaxSpanTextBytes at a character's start, repaired first when not UTF-8.
std::string span_text(std::string_view text) {
  return std::string(utf8_prefix(lossy_utf8(text), kMaxSpanTextBytes));
}

}  // namespace

std::optional<TraceContext> parse_traceparent(std::string_view traceparent,
                                              std::string_view tracestate) {
  // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2.
  if (traceparent.size() < kMaxTraceparentBytes) return std::nullopt;
  std::array<std::uint8_t, 1> version{};
  if (!read_hex(traceparent.substr(0, 2), version) || version[0] == 0xff) return std::nullopt;
  // Version 00 is exactly 55 characters; a later one may add "-..." after them.
  if (traceparent.size() > kMaxTraceparentBytes &&
      (version[0] == 0 || traceparent[kMaxTraceparentBytes] != '-' || traceparent.size() > 256)) {
    return std::nullopt;
  }
  if (traceparent[2] != '-' || traceparent[35] != '-' || traceparent[52] != '-') {
    return std::nullopt;
  }
  TraceContext context;
  std::array<std::uint8_t, 1> flags{};
  if (!read_hex(traceparent.substr(3, 32), context.trace_id) ||
      !read_hex(traceparent.substr(36, 16), context.span_id) ||
      !read_hex(traceparent.substr(53, 2), flags)) {
    return std::nullopt;
  }
  if (all_zero(context.trace_id) || all_zero(context.span_id)) return std::nullopt;
  context.flags = flags[0];
  bool state_ok = tracestate.size() <= kMaxTracestateBytes;
  for (char c : tracestate) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
      state_ok = false;
    }
  }
  if (state_ok) context.state = std::string(tracestate);
  return context;
}

std::string hex_id(const std::uint8_t* bytes, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(size * 2, '0');
  for (std::size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

std::string format_traceparent(const TraceContext& context) {
  return "00-" + hex_id(context.trace_id.data(), context.trace_id.size()) + "-" +
         hex_id(context.span_id.data(), context.span_id.size()) + "-" + hex_id(&context.flags, 1);
}

void set_span_sink(SpanSink* sink) { g_sink.store(sink, std::memory_order_release); }

bool tracing_on() { return g_sink.load(std::memory_order_relaxed) != nullptr; }

std::uint64_t unix_nanos() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

Span Span::begin(std::string_view name, SpanKind kind, const TraceContext* parent,
                 std::uint64_t start_ns) {
  Span span;
  span.record_ = std::make_unique<SpanRecord>();
  SpanRecord& r = *span.record_;
  if (name.size() <= kMaxSpanTextBytes && is_valid_utf8(name)) {
    r.name.assign(name);
  } else {
    r.name = span_text(name);
  }
  r.attributes.reserve(8);
  r.kind = kind;
  r.start_ns = start_ns != 0 ? start_ns : unix_nanos();
  if (parent == nullptr) parent = t_current;
  if (parent != nullptr) {
    r.trace_id = parent->trace_id;
    r.parent_span_id = parent->span_id;
    r.trace_state = parent->state;
    span.context_.flags = parent->flags;
  } else {
    fill_random(r.trace_id);
    span.context_.flags = 1;  // sampled: every trace is recorded
  }
  fill_random(r.span_id);
  span.context_.trace_id = r.trace_id;
  span.context_.span_id = r.span_id;
  span.context_.state = r.trace_state;
  return span;
}

Span& Span::operator=(Span&& other) noexcept {
  if (this != &other) {
    end();
    record_ = std::move(other.record_);
    context_ = std::move(other.context_);
  }
  return *this;
}

void Span::set(const char* key, std::string value) {
  if (!record_) return;
  if (value.size() > kMaxSpanTextBytes || !is_valid_utf8(value)) value = span_text(value);
  record_->attributes.emplace_back(key, std::move(value));
}

void Span::set(const char* key, std::int64_t value) {
  if (record_) record_->attributes.emplace_back(key, value);
}

void Span::set_flag(const char* key, bool value) {
  if (record_) record_->attributes.emplace_back(key, value);
}

void Span::set_error(std::string_view type, std::string_view message) {
  if (!record_) return;
  record_->error = true;
  record_->status_message = span_text(message);
  record_->attributes.emplace_back("error.type", span_text(type));
}

void Span::end() {
  if (!record_) return;
  record_->end_ns = unix_nanos();
  SpanSink* sink = g_sink.load(std::memory_order_acquire);
  if (sink != nullptr) sink->finished(std::move(*record_));
  record_.reset();
}

const TraceContext* current_trace() { return t_current; }

SpanScope::SpanScope(const TraceContext* context) : previous_(t_current) {
  if (context != nullptr) t_current = context;
}

SpanScope::~SpanScope() { t_current = previous_; }

const TraceContext* incoming_header_trace() { return t_incoming; }

IncomingTraceScope::IncomingTraceScope(std::optional<TraceContext> context)
    : context_(std::move(context)), previous_(t_incoming) {
  t_incoming = context_ ? &*context_ : nullptr;
}

IncomingTraceScope::~IncomingTraceScope() { t_incoming = previous_; }

void count_dropped_spans(std::uint64_t n) { g_dropped.fetch_add(n, std::memory_order_relaxed); }

std::uint64_t dropped_spans() { return g_dropped.load(std::memory_order_relaxed); }

}  // namespace toolmux
