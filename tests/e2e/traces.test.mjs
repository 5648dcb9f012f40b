// Traces over OTLP/HTTP (docs/traces.md): a client's call goes through one
// toolmux to another toolmux it aggregates over HTTP, whose command tool runs
// it. Both export to a receiver here that decodes what they send with the
// OpenTelemetry project's own protobuf definitions (generated from
// opentelemetry-proto, shipped in @opentelemetry/otlp-transformer), and the
// test asserts the span tree: the client's trace kept throughout, the upstream's
// spans children of the front's upstream call, the command given the trace.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { test } from 'node:test';

import { DATA_DIR, HttpServer, connectHttp, makeTempDir, textOf, waitUntil } from './helpers.mjs';

const require = createRequire(import.meta.url);
const otlp = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const TraceRequest = otlp.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const MetricsRequest = otlp.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
const SpanKind = otlp.opentelemetry.proto.trace.v1.Span.SpanKind;

const UPSTREAM_CATALOG = path.join(DATA_DIR, 'traces', 'upstream_catalog.json');

const hex = (bytes) => Buffer.from(bytes).toString('hex');

/** An OTLP/HTTP receiver on a free port: every span and metric it was sent, decoded. */
async function startReceiver(t) {
  const received = { spans: [], metrics: [], contentTypes: new Set() };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.contentTypes.add(req.headers['content-type']);
      if (req.url === '/v1/traces') {
        const decoded = TraceRequest.decode(body);
        for (const rs of decoded.resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
          for (const ss of rs.scopeSpans) {
            for (const s of ss.spans) {
              const attributes = Object.fromEntries(
                s.attributes.map((a) => [a.key, a.value.stringValue ?? a.value.intValue ?? a.value.boolValue]),
              );
              received.spans.push({
                service,
                name: s.name,
                kind: s.kind,
                traceId: hex(s.traceId),
                spanId: hex(s.spanId),
                parentSpanId: s.parentSpanId?.length ? hex(s.parentSpanId) : '',
                start: BigInt(s.startTimeUnixNano.toString()),
                end: BigInt(s.endTimeUnixNano.toString()),
                status: s.status?.code ?? 0,
                attributes,
              });
            }
          }
        }
      } else if (req.url === '/v1/metrics') {
        const decoded = MetricsRequest.decode(body);
        for (const rm of decoded.resourceMetrics) {
          for (const sm of rm.scopeMetrics) received.metrics.push(...sm.metrics);
        }
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  // The servers' exporters may hold a connection open: closed here, or
  // close() would wait for them (after hooks run before the servers stop).
  t.after(() => new Promise((resolve) => {
    server.close(resolve);
    server.closeAllConnections();
  }));
  return { url: `http://127.0.0.1:${server.address().port}`, received };
}

test('a call through toolmux to an upstream toolmux is one trace: the upstream span a child of the front one', async (t) => {
  const receiver = await startReceiver(t);
  const otel = { OTEL_METRIC_EXPORT_INTERVAL: '200' };
  const upstream = await HttpServer.start(t, {
    catalog: UPSTREAM_CATALOG,
    args: ['--no-journal'],
    env: { ...otel, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'upstream' },
  });
  const dir = makeTempDir('toolmux-traces-');
  const catalog = path.join(dir, 'catalog.json');
  fs.writeFileSync(catalog, JSON.stringify({ tools: [], upstreams: { inner: { url: upstream.url, prefix: 'inner_' } } }));
  const front = await HttpServer.start(t, { catalog, args: ['--no-journal', '--otlp-endpoint', receiver.url], env: otel });

  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const clientSpan = '00f067aa0ba902b7';
  const { client } = await connectHttp(t, front.url);
  const result = await client.callTool({ name: 'inner_show_trace', arguments: {}, _meta: { traceparent: `00-${traceId}-${clientSpan}-01` } });
  assert.ok(!result.isError, textOf(result));

  const spans = () => receiver.received.spans.filter((s) => s.traceId === traceId);
  const find = (service, name) => spans().find((s) => s.service === service && s.name === name);
  await waitUntil(() => find('upstream', 'execute_tool show_trace') && find('toolmux', 'tools/call inner_show_trace'), 10000, 'both servers export their spans');

  // The front: its request span continues the client's, its stages and tool inside it.
  const request = find('toolmux', 'tools/call inner_show_trace');
  assert.equal(request.kind, SpanKind.SPAN_KIND_SERVER);
  assert.equal(request.parentSpanId, clientSpan);
  assert.equal(request.attributes['mcp.method.name'], 'tools/call');
  assert.equal(request.attributes['gen_ai.tool.name'], 'inner_show_trace');
  assert.equal(request.attributes['toolmux.outcome'], 'ok');
  const byId = new Map(spans().map((s) => [s.spanId, s]));
  const chainOf = (span) => {
    const names = [];
    for (let s = span; s; s = byId.get(s.parentSpanId)) names.unshift(`${s.service}:${s.name}`);
    return names;
  };
  const upstreamTool = find('upstream', 'execute_tool show_trace');
  assert.deepEqual(chainOf(upstreamTool), [
    'toolmux:tools/call inner_show_trace',
    'toolmux:stages around',
    'toolmux:stages request',
    'toolmux:stages result',
    'toolmux:stages handler',
    'toolmux:execute_tool inner_show_trace',
    'toolmux:tools/call show_trace',
    'upstream:tools/call show_trace',
    'upstream:stages around',
    'upstream:stages request',
    'upstream:stages result',
    'upstream:stages handler',
    'upstream:execute_tool show_trace',
  ]);
  const upstreamCall = find('toolmux', 'tools/call show_trace');
  assert.equal(upstreamCall.kind, SpanKind.SPAN_KIND_CLIENT);
  assert.equal(upstreamCall.attributes['toolmux.upstream'], 'inner');
  const upstreamServer = find('upstream', 'tools/call show_trace');
  assert.equal(upstreamServer.kind, SpanKind.SPAN_KIND_SERVER);
  assert.equal(upstreamServer.parentSpanId, upstreamCall.spanId);
  // Children end within their parents.
  for (const s of spans()) {
    const parent = byId.get(s.parentSpanId);
    if (parent && parent.service === s.service) assert.ok(s.start >= parent.start && s.end <= parent.end, `${s.name} within ${parent.name}`);
  }
  // The command tool was given the trace, its parent the upstream's tool span.
  assert.equal(textOf(result), `00-${traceId}-${upstreamTool.spanId}-01`);
  // Argument values and results are never attributes.
  assert.ok(!JSON.stringify(spans().map((s) => s.attributes)).includes(upstreamTool.spanId));
  assert.deepEqual([...receiver.received.contentTypes], ['application/x-protobuf']);

  // The same metrics as /metrics, over OTLP too.
  await waitUntil(
    () => receiver.received.metrics.some((m) => m.name === 'toolmux_tool_calls' && m.sum?.dataPoints.some((p) => p.attributes.some((a) => a.value.stringValue === 'inner_show_trace'))),
    10000,
    'the call counted in the exported metrics',
  );
  const dropped = await (await fetch(`${front.origin}/metrics`)).text();
  assert.match(dropped, /^toolmux_trace_spans_dropped_total 0$/m);
});

test('a traceparent header is continued, a malformed one starts a new trace, and a dead collector drops spans without holding calls', async (t) => {
  const receiver = await startReceiver(t);
  const front = await HttpServer.start(t, { catalog: UPSTREAM_CATALOG, args: ['--no-journal', '--otlp-endpoint', receiver.url] });
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const { client } = await connectHttp(t, front.url, { headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } });
  const result = await client.callTool({ name: 'show_trace', arguments: {} });
  assert.match(textOf(result), new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  const bad = await client.callTool({ name: 'show_trace', arguments: {}, _meta: { traceparent: `00-${traceId.toUpperCase()}-b7ad6b7169203331-01` } });
  assert.match(textOf(bad), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  assert.ok(!textOf(bad).includes(traceId), 'a malformed traceparent is not continued');
  await waitUntil(() => receiver.received.spans.some((s) => s.traceId === traceId && s.name === 'tools/call show_trace'), 10000, 'the header trace exported');

  // A collector that is not there: calls answer as fast as ever, spans are counted as dropped.
  const dead = await HttpServer.start(t, { catalog: UPSTREAM_CATALOG, args: ['--no-journal', '--otlp-endpoint', 'http://127.0.0.1:9'] });
  const { client: deadClient } = await connectHttp(t, dead.url);
  const started = performance.now();
  for (let i = 0; i < 5; i++) await deadClient.callTool({ name: 'show_trace', arguments: {} });
  assert.ok(performance.now() - started < 5000, 'calls did not wait for the collector');
  await waitUntil(async () => /^toolmux_trace_spans_dropped_total [1-9]/m.test(await (await fetch(`${dead.origin}/metrics`)).text()), 10000, 'dropped spans counted');
});
