// Streamable HTTP (`toolmux serve --http`), seen by the real SDK client
// (StreamableHTTPClientTransport) and by raw fetch: sessions at once, results
// owned by their session, sessions that outlive a restart, DELETE, the front
// door's refusals (Origin, Host, session id, protocol version, body size, the
// session cap), /health and /metrics, and shutdown on SIGTERM.
//
// The catalog (tests/data/e2e/http/catalog.json) has discovery on, with
// gen_chars and two sleepers pinned, and offloads results over 1024 bytes.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';

import {
  HTTP_CATALOG,
  HTTP_PINNED,
  HttpServer,
  LATEST_PROTOCOL_VERSION,
  connectHttp,
  initializeRequest,
  expectResultRefused,
  genCharsText,
  offloadChars,
  pingRequest,
  rawGetStatus,
  rawInitialize,
  rawPost,
  sessionHeaders,
  readStoredResult,
  short,
  sleep,
  textOf,
  toolNames,
  waitUntil,
} from './helpers.mjs';

// Under a sanitizer (scripts/sanitize.sh) stopping takes seconds longer: the
// exit-time bounds below get this much more.
const STOP_SLACK_MS = process.env.TOOLMUX_E2E_SANITIZER ? 10000 : 0;

/**
 * A raw HTTP request with full control of the headers (fetch does not let a
 * test set Host). `chunks`: the body is sent in that many chunks
 * (Transfer-Encoding: chunked, no Content-Length).
 */
function rawRequest(url, { method = 'POST', headers = {}, body, chunks } = {}) {
  return new Promise((resolve, reject) => {
    const all = chunks || body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) };
    const request = http.request(url, { method, headers: all }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, text }));
    });
    request.on('error', reject);
    if (body !== undefined) {
      const size = Math.ceil(body.length / (chunks ?? 1));
      for (let i = 0; i < body.length; i += size) request.write(body.slice(i, i + size));
    }
    request.end();
  });
}

/** The value of a gauge or counter line in Prometheus text. */
function metric(text, name) {
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}

test('initialize, tools/list and tools/call over HTTP; two sessions at once each work', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const [a, b] = await Promise.all([connectHttp(t, server.url), connectHttp(t, server.url)]);
  assert.ok(a.transport.sessionId && b.transport.sessionId, 'both sessions have an id');
  assert.notEqual(a.transport.sessionId, b.transport.sessionId);
  assert.match(a.transport.sessionId, /^[\x21-\x7e]+$/, 'the session id is visible ASCII');
  assert.equal(a.client.getServerVersion().name, 'toolmux');
  const init = a.received.find((m) => m.result?.protocolVersion);
  assert.equal(init.result.protocolVersion, LATEST_PROTOCOL_VERSION);

  const [listA, listB] = await Promise.all([a.client.listTools(), b.client.listTools()]);
  assert.deepEqual(toolNames(listA.tools), HTTP_PINNED);
  assert.deepEqual(toolNames(listB.tools), HTTP_PINNED);

  const [callA, callB] = await Promise.all([
    a.client.callTool({ name: 'gen_chars', arguments: { count: 7 } }),
    b.client.callTool({ name: 'gen_chars', arguments: { count: 9 } }),
  ]);
  assert.equal(textOf(callA), genCharsText(7));
  assert.equal(textOf(callB), genCharsText(9));
  // Built-in tools are reachable too (not listed in discovery mode).
  const info = await b.client.callTool({ name: 'list_directory', arguments: { path: '.' } });
  assert.notEqual(info.isError, true, short(info));
  await a.client.ping();
  await server.stopCleanly(assert);
});

test("one session's offloaded result is refused to another session and read by its owner", async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const [a, b] = await Promise.all([connectHttp(t, server.url), connectHttp(t, server.url)]);
  const id = await offloadChars(assert, a.client, 5000);
  await expectResultRefused(assert, b.client, id);
  const read = await readStoredResult(assert, a.client, id);
  assert.equal(read.text, genCharsText(5000));
  // And the other way round.
  const idB = await offloadChars(assert, b.client, 4000);
  await expectResultRefused(assert, a.client, idB);
  assert.equal((await readStoredResult(assert, b.client, idB)).text, genCharsText(4000));
});

test('DELETE ends the session: its id then gets 404 on POST, GET and DELETE', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const a = await connectHttp(t, server.url);
  const sessionId = a.transport.sessionId;
  await offloadChars(assert, a.client, 5000);
  await a.transport.terminateSession();
  assert.equal(a.transport.sessionId, undefined);

  const headers = sessionHeaders(sessionId);
  const post = await rawPost(server.url, pingRequest(), headers);
  assert.equal(post.status, 404, await post.text());
  assert.equal(await rawGetStatus(server.url, headers), 404);
  const del = await fetch(server.url, { method: 'DELETE', headers });
  assert.equal(del.status, 404);
  await waitUntil(() => server.logs.some((l) => l.event === 'session_ended' && l.why === 'deleted'), 2000, 'session_ended');
});

test('the front door: Origin and Host (403), session id (400, 404), protocol version (400), body size (413)', async (t) => {
  const server = await HttpServer.start(t, {
    catalog: HTTP_CATALOG,
    args: ['--max-message-bytes', '4096', '--allow-origin', 'https://app.example', '--allow-host', 'mcp.example'],
  });
  const init = initializeRequest();

  // DNS rebinding: a page elsewhere must not reach the server.
  const evilOrigin = await rawPost(server.url, init, { origin: 'http://evil.example' });
  assert.equal(evilOrigin.status, 403);
  assert.equal(evilOrigin.headers.get('mcp-session-id'), null);
  assert.match((await evilOrigin.json()).error.message, /Origin/);
  const port = new URL(server.url).port;
  const evilHost = await rawRequest(server.url, {
    headers: { host: `evil.example:${port}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(init),
  });
  assert.equal(evilHost.status, 403, evilHost.text);
  assert.match(JSON.parse(evilHost.text).error.message, /Host/);
  // Loopback origins and the allowed ones pass.
  for (const origin of [`http://localhost:${port}`, 'http://127.0.0.1', 'https://app.example']) {
    const ok = await rawPost(server.url, init, { origin });
    const text = await ok.text();
    assert.equal(ok.status, 200, `${origin}: ${text}`);
  }
  const allowedHost = await rawRequest(server.url, {
    headers: { host: `mcp.example:${port}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(init),
  });
  assert.equal(allowedHost.status, 200, allowedHost.text);

  const sessionId = await rawInitialize(server.url);
  const session = sessionHeaders(sessionId);
  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

  const missing = await rawPost(server.url, list, { 'mcp-protocol-version': LATEST_PROTOCOL_VERSION });
  assert.equal(missing.status, 400);
  assert.match((await missing.json()).error.message, /Mcp-Session-Id/);
  const unknown = await rawPost(server.url, list, { ...session, 'mcp-session-id': 'no-such-session' });
  assert.equal(unknown.status, 404);
  await unknown.text();
  const badVersion = await rawPost(server.url, list, { ...session, 'mcp-protocol-version': '1999-01-01' });
  assert.equal(badVersion.status, 400);
  assert.match((await badVersion.json()).error.message, /MCP-Protocol-Version/);
  const bigPing = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping', params: { pad: 'x'.repeat(10000) } });
  const tooBig = await rawPost(server.url, bigPing, session);
  assert.equal(tooBig.status, 413);
  await tooBig.text();
  // Sent in chunks, without Content-Length, the same body is held to the same limit.
  const jsonHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const chunked = await rawRequest(server.url, { headers: { ...session, ...jsonHeaders }, body: bigPing, chunks: 10 });
  assert.equal(chunked.status, 413, chunked.text);
  // A small chunked request after it is answered (the refused one's connection was closed).
  const small = await rawRequest(server.url, { headers: { ...session, ...jsonHeaders }, body: JSON.stringify(pingRequest(5)), chunks: 3 });
  assert.equal(small.status, 200, small.text);
  // The checks keep their order: a bad Origin is 403 however large the body.
  const bigEvil = await rawPost(server.url, bigPing, { ...session, origin: 'http://evil.example' });
  assert.equal(bigEvil.status, 403);
  await bigEvil.text();
  assert.equal(await rawGetStatus(server.url), 400);

  // The session is undisturbed by all that.
  const ok = await rawPost(server.url, list, session);
  assert.equal(ok.status, 200);
  assert.ok((await ok.json()).result.tools.length > 0);
  // Without the header, 2025-03-26 is assumed, which is supported.
  const noVersion = await rawPost(server.url, pingRequest(4), { 'mcp-session-id': sessionId });
  assert.equal(noVersion.status, 200);
  assert.deepEqual((await noVersion.json()).result, {});
});

/** The peak resident memory of a process, in bytes (Linux: VmHWM). */
function peakMemory(pid) {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match[1]) * 1024;
}

test('a large chunked body is never held in memory, wherever it is sent', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG, args: ['--max-message-bytes', '4096'] });
  const before = peakMemory(server.child.pid);
  const body = 'x'.repeat(48 << 20);
  // Chunked also for DELETE, which node would otherwise send unframed.
  const headers = { 'content-type': 'application/json', 'transfer-encoding': 'chunked' };
  const sent = [
    [`${server.origin}/mcp`, 'POST', 413],
    [`${server.origin}/elsewhere`, 'POST', 404],
    [`${server.origin}/mcp`, 'PUT', 405],
    [`${server.origin}/elsewhere`, 'DELETE', 404],
    [`${server.origin}/mcp`, 'DELETE', 400],
  ];
  for (const [url, method, status] of sent) {
    const response = await rawRequest(url, { method, headers, body, chunks: 48 });
    assert.equal(response.status, status, `${method} ${url}: ${response.text}`);
  }
  const growth = peakMemory(server.child.pid) - before;
  assert.ok(growth < 16 << 20, `the server's peak memory grew by ${growth} bytes for 48 MiB bodies`);
});

test('past --max-sessions a new session gets 503 and the open ones keep working', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG, args: ['--max-sessions', '2'] });
  const a = await connectHttp(t, server.url);
  const b = await connectHttp(t, server.url);
  const refused = await rawPost(server.url, initializeRequest());
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get('mcp-session-id'), null);
  await refused.text();
  await assert.rejects(connectHttp(t, server.url), /503|Service Unavailable/);

  for (const session of [a, b]) {
    assert.deepEqual(toolNames((await session.client.listTools()).tools), HTTP_PINNED);
    assert.equal(textOf(await session.client.callTool({ name: 'gen_chars', arguments: { count: 3 } })), genCharsText(3));
  }
  // Ending one makes room.
  await a.transport.terminateSession();
  const c = await connectHttp(t, server.url);
  await c.client.ping();
  await server.stopCleanly(assert);
});

test('/health answers 200; /metrics counts open sessions', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const health = await fetch(`${server.origin}/health`);
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { status: 'ok' });
  // DNS rebinding must not read /metrics either; /health stays open to probes by any name.
  const port = new URL(server.url).port;
  const rebound = await rawRequest(`${server.origin}/metrics`, { method: 'GET', headers: { host: `evil.example:${port}` } });
  assert.equal(rebound.status, 403, rebound.text);
  assert.match(JSON.parse(rebound.text).error.message, /Host "evil\.example:\d+" is not allowed/);
  const probed = await rawRequest(`${server.origin}/health`, { method: 'GET', headers: { host: `pod-ip.example:${port}` } });
  assert.equal(probed.status, 200, probed.text);

  const before = await (await fetch(`${server.origin}/metrics`)).text();
  assert.equal(metric(before, 'toolmux_http_sessions'), 0, before);
  const a = await connectHttp(t, server.url);
  await connectHttp(t, server.url);
  await a.client.callTool({ name: 'gen_chars', arguments: { count: 2 } });
  const response = await fetch(`${server.origin}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type'), /^text\/plain/);
  const during = await response.text();
  assert.equal(metric(during, 'toolmux_http_sessions'), 2, during);
  assert.match(during, /^# TYPE toolmux_http_sessions gauge$/m);
  assert.ok(metric(during, 'toolmux_http_streams') >= 0, during);
  await a.transport.terminateSession();
  const after = await (await fetch(`${server.origin}/metrics`)).text();
  assert.equal(metric(after, 'toolmux_http_sessions'), 1, after);
});

// A tool's call duration histogram as /metrics renders it: its buckets by
// upper bound (cumulative counts), count and sum.
function durationHistogram(text, tool) {
  const buckets = new Map(); // in the order /metrics lists them
  const prefix = `toolmux_tool_call_duration_seconds_bucket{tool="${tool}",le="`;
  for (const line of text.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const [bound, count] = line.slice(prefix.length).split('"} ');
    buckets.set(bound, Number(count));
  }
  const value = (name) => metric(text, `toolmux_tool_call_duration_seconds_${name}\\{tool="${tool}"\\}`);
  return { buckets, count: value('count'), sum: value('sum') };
}

test('/metrics: each call lands in its tool\'s duration histogram, in the bucket its time falls in', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const a = await connectHttp(t, server.url);
  await a.client.callTool({ name: 'slow_call', arguments: {} }); // sleeps 2 s
  await a.client.callTool({ name: 'gen_chars', arguments: { count: 2 } });
  await a.client.callTool({ name: 'gen_chars', arguments: { count: 3 } });
  const text = await (await fetch(`${server.origin}/metrics`)).text();
  assert.match(text, /^# TYPE toolmux_tool_call_duration_seconds histogram$/m);

  const slow = durationHistogram(text, 'slow_call');
  assert.deepEqual([...slow.buckets.keys()], ['0.001', '0.005', '0.01', '0.05', '0.1', '0.5', '1', '5', '10', '30', '+Inf'], text);
  assert.equal(slow.buckets.get('1'), 0, text); // it took over 2 s...
  assert.equal(slow.buckets.get('5'), 1, text); // ...and under 5
  assert.equal(slow.buckets.get('+Inf'), 1, text);
  assert.equal(slow.count, 1, text);
  assert.ok(slow.sum >= 2 && slow.sum < 5, text);

  const quick = durationHistogram(text, 'gen_chars');
  assert.equal(quick.count, 2, text);
  assert.equal(quick.buckets.get('+Inf'), 2, text);
  const counts = [...quick.buckets.values()];
  assert.ok(counts.every((count, i) => i === 0 || count >= counts[i - 1]), `buckets not cumulative: ${text}`);
  assert.equal(durationHistogram(text, 'sleep_long').count, undefined, 'a tool never called has no series');
});

test('SIGTERM while a call runs: the call finishes, and the server exits 0 within the grace period', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG, args: ['--shutdown-grace', '5'] });
  const a = await connectHttp(t, server.url);
  const b = await connectHttp(t, server.url); // its connection stays open (keep-alive)
  const call = a.client.callTool({ name: 'slow_call', arguments: {} }).then(
    (result) => ({ result }),
    (error) => ({ error }),
  );
  await sleep(300); // the command is running
  const stopped = server.stop(15000);
  await sleep(100);
  // No new work once stopping, not even on a connection opened before.
  await assert.rejects(b.client.callTool({ name: 'gen_chars', arguments: { count: 1 } }));
  const exit = await stopped;
  assert.equal(exit.code, 0, `exit ${JSON.stringify(exit)}; stderr:\n${server.stderr}`);
  assert.ok(!server.logs.some((l) => l.event === 'tool_call' && l.tool === 'gen_chars'), 'a call started while stopping');
  assert.ok(exit.ms < 5000 + 2000 + STOP_SLACK_MS, `exited after ${exit.ms} ms, grace 5 s`);
  const outcome = await call;
  assert.equal(outcome.error, undefined, `the call failed: ${outcome.error}`);
  assert.equal(textOf(outcome.result), 'finished\n');
  assert.ok(server.logs.some((l) => l.event === 'stopped' && l.calls_drained === true), server.stderr);
});

test('SIGTERM while a call runs past the grace period: the call is cancelled and the server exits 0', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG, args: ['--shutdown-grace', '1'] });
  const a = await connectHttp(t, server.url);
  let settled = null;
  const call = a.client.callTool({ name: 'sleep_long', arguments: {} }).then(
    (result) => ({ result }),
    (error) => ({ error }),
  );
  call.then(() => { settled = performance.now(); });
  await sleep(300);
  const exit = await server.stop(15000);
  assert.equal(exit.code, 0, `exit ${JSON.stringify(exit)}; stderr:\n${server.stderr}`);
  assert.ok(exit.ms < 1000 + 3000 + STOP_SLACK_MS, `exited after ${exit.ms} ms, grace 1 s`);
  assert.ok(server.logs.some((l) => l.event === 'stopped' && l.calls_drained === false), server.stderr);
  // The client is told at once, not left waiting for its own request timeout.
  await waitUntil(() => settled !== null, 2000, 'the cancelled call to settle');
  const outcome = await call;
  assert.equal(outcome.error?.code, 503, `the call ended with ${outcome.error ?? short(outcome.result)}`);
  assert.match(outcome.error.message, /the server stopped before the request finished/);
});

test('a second HTTP server on the same --data-dir refuses to start (exit 2), naming the folder', async (t) => {
  const first = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const second = new HttpServer({ args: [], dataDir: first.dataDir });
  t.after(() => second.kill());
  const exit = await second.exited;
  assert.equal(exit.code, 2, second.stderr);
  assert.ok(second.stderr.includes(path.join(first.dataDir, 'sessions')), second.stderr);
  assert.match(second.stderr, /another toolmux serving HTTP/);
  // The first goes on.
  const a = await connectHttp(t, first.url);
  await a.client.ping();
});
