#include "src/base/trace.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace toolmux;

namespace {

const std::string kParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

struct Collected : SpanSink {
  std::vector<SpanRecord> spans;
  void finished(SpanRecord span) override { spans.push_back(std::move(span)); }
};

struct SinkScope {
  explicit SinkScope(SpanSink* sink) { set_span_sink(sink); }
  ~SinkScope() { set_span_sink(nullptr); }
};

}  // namespace

TEST_CASE("traceparent: a valid version 00 value is read and written back the same") {
  auto context = parse_traceparent(kParent, "vendor=value");
  REQUIRE(context);
  CHECK(hex_id(context->trace_id.data(), 16) == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(hex_id(context->span_id.data(), 8) == "00f067aa0ba902b7");
  CHECK(context->flags == 1);
  CHECK(context->state == "vendor=value");
  CHECK(format_traceparent(*context) == kParent);
}

TEST_CASE("traceparent: malformed values are refused") {
  const std::vector<std::string> refused = {
      "",
      "00",
      kParent.substr(0, 54),                                       // one short
      kParent + "-",                                               // version 00 has nothing more
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",   // upper case
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",   // zero trace id
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",   // zero span id
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   // version ff
      "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   // wrong separator
      "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",   // not hex
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",  // later version, no dash
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-" + std::string(300, 'a'),
  };
  for (const auto& value : refused) {
    INFO(value);
    CHECK_FALSE(parse_traceparent(value));
  }
}

TEST_CASE(
    "traceparent: a later version's first fields are read and a bad tracestate is dropped alone") {
  CHECK(parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"));
  auto long_state = parse_traceparent(kParent, std::string(kMaxTracestateBytes + 1, 'a'));
  REQUIRE(long_state);
  CHECK(long_state->state.empty());
  auto control = parse_traceparent(kParent, "a=b\nc=d");
  REQUIRE(control);
  CHECK(control->state.empty());
}

TEST_CASE("spans: with tracing off a span is inactive and changes nothing") {
  REQUIRE_FALSE(tracing_on());
  Span span = Span::start("anything", SpanKind::server);
  CHECK_FALSE(span.active());
  CHECK(span.context() == nullptr);
  SpanScope scope(span.context());
  CHECK(current_trace() == nullptr);
}

TEST_CASE("spans: a child continues its parent's trace, and the current one on its thread") {
  Collected sink;
  SinkScope on(&sink);
  auto parent = parse_traceparent(kParent, "k=v");
  REQUIRE(parent);
  {
    Span request = Span::start("tools/call x", SpanKind::server, &*parent);
    request.set("gen_ai.tool.name", std::string(1000, 'n'));
    request.set("bytes", std::int64_t{5});
    SpanScope scope(request.context());
    REQUIRE(current_trace() == request.context());
    Span child = Span::start("stages around", SpanKind::internal);
    child.set_error("timed_out");
  }
  CHECK(current_trace() == nullptr);
  REQUIRE(sink.spans.size() == 2);
  const SpanRecord& child = sink.spans[0];
  const SpanRecord& request = sink.spans[1];
  CHECK(request.trace_id == parent->trace_id);
  CHECK(request.parent_span_id == parent->span_id);
  CHECK(request.trace_state == "k=v");
  CHECK(child.trace_id == parent->trace_id);
  CHECK(child.parent_span_id == request.span_id);
  CHECK(child.error);
  CHECK(request.end_ns >= request.start_ns);
  // Attribute text is bounded.
  CHECK(std::get<std::string>(request.attributes[0].second).size() == kMaxSpanTextBytes);
  // A span with no parent and no current trace starts a new one.
  Span root = Span::start("initialize", SpanKind::server);
  REQUIRE(root.context());
  CHECK(root.context()->trace_id != parent->trace_id);
}
