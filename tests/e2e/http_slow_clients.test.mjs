// The HTTP front door under clients that are slow on purpose (issue 11): with
// its default limits, toolmux keeps serving a real SDK client while 1,100
// connections from another loopback address send their request heads a byte
// at a time. Connections past the per-client limit (256) are refused at once
// with 503; the rest wait in the gate, holding no thread, and get 408 once the
// header timeout (10 s) has passed. Refusals are counted in /metrics.
//
// This file takes about 15 s (the default header timeout).

import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';

import { HTTP_CATALOG, HttpServer, connectHttp, genCharsText, textOf, waitUntil } from './helpers.mjs';

const SLOW_CONNECTIONS = 1100;
const PER_CLIENT_LIMIT = 256;
const HEADER_TIMEOUT_MS = 10000;

/** The value of a counter line (with its labels) in Prometheus text. */
function metric(text, line) {
  const escaped = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}

/**
 * A connection from `localAddress` that sends the start of a request head
 * and then one more header byte every `dripMs`, never finishing the head.
 * `received` is what the server sent; `closed` resolves when it closed.
 */
function slowClient(port, localAddress, dripMs) {
  const socket = net.connect({ host: '127.0.0.1', port, localAddress });
  const client = { socket, received: '', closedAt: null };
  client.closed = new Promise((resolve) => {
    socket.on('close', () => {
      client.closedAt = performance.now();
      resolve();
    });
  });
  socket.on('error', () => {}); // a reset after a refusal is expected
  socket.on('data', (chunk) => (client.received += chunk.toString()));
  socket.on('connect', () => {
    socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    client.timer = setInterval(() => socket.writable && socket.write('a'), dripMs);
  });
  socket.on('close', () => clearInterval(client.timer));
  return client;
}

/** Rejects after `ms` with `what`, unless `promise` settles first. */
function within(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

test('1,100 slow-header connections from one address do not starve a real client', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const port = Number(new URL(server.url).port);
  const slow = [];
  t.after(() => slow.forEach((c) => c.socket.destroy()));
  const openedAt = performance.now();
  for (let i = 0; i < SLOW_CONNECTIONS; ++i) slow.push(slowClient(port, '127.0.0.2', 1000));
  // Every one connected (and the ones over the limit already refused).
  await waitUntil(() => slow.every((c) => c.socket.readyState !== 'opening'), 20000, 'the slow connections to connect');

  // A real client, from 127.0.0.1: initializes and calls a tool promptly.
  const started = performance.now();
  const a = await within(connectHttp(t, server.url), 20000, 'initialize');
  const result = await within(a.client.callTool({ name: 'gen_chars', arguments: { count: 5 } }), 20000, 'tools/call');
  assert.equal(textOf(result), genCharsText(5));
  assert.ok(performance.now() - started < 20000);

  // Past the per-client limit: refused at once with 503 and Retry-After.
  await waitUntil(
    () => slow.filter((c) => c.closedAt !== null).length >= SLOW_CONNECTIONS - PER_CLIENT_LIMIT,
    10000,
    'the connections over the per-client limit to be refused',
  );
  const refused = slow.filter((c) => c.received.startsWith('HTTP/1.1 503 '));
  assert.equal(refused.length, SLOW_CONNECTIONS - PER_CLIENT_LIMIT);
  assert.match(refused[0].received, /\r\nRetry-After: 1\r\n/);
  assert.match(refused[0].received, /256 connections from 127\.0\.0\.2 are open \(the limit per client\)/);

  const during = await (await fetch(`${server.origin}/metrics`)).text();
  assert.equal(metric(during, 'toolmux_http_refused_total{reason="client_connections"}'), SLOW_CONNECTIONS - PER_CLIENT_LIMIT, during);
  assert.ok(metric(during, 'toolmux_http_connections_waiting') >= PER_CLIENT_LIMIT, during);

  // The rest are closed with 408 once the header timeout has passed (and not long before).
  const held = slow.filter((c) => !c.received.startsWith('HTTP/1.1 503 '));
  assert.equal(held.length, PER_CLIENT_LIMIT);
  await within(Promise.all(held.map((c) => c.closed)), HEADER_TIMEOUT_MS + 15000, 'closing the slow connections');
  for (const c of held) {
    assert.match(c.received, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.ok(c.closedAt - openedAt >= HEADER_TIMEOUT_MS - 500, `closed after ${c.closedAt - openedAt} ms`);
  }
  const after = await (await fetch(`${server.origin}/metrics`)).text();
  assert.equal(metric(after, 'toolmux_http_refused_total{reason="header_timeout"}'), PER_CLIENT_LIMIT, after);

  // The real client never noticed.
  await a.client.ping();
  assert.deepEqual(a.errors, []);
});

test('a Content-Length over the limit gets 413 at once, before any of the body is read', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const port = Number(new URL(server.url).port);
  const socket = net.connect({ host: '127.0.0.1', port });
  t.after(() => socket.destroy());
  socket.on('error', () => {});
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString()));
  await new Promise((resolve) => socket.on('connect', resolve));
  socket.write(
    'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      'Accept: application/json, text/event-stream\r\nContent-Length: 99999999999\r\n\r\n',
  );
  // The body trickles in: a server waiting for all of it would never answer.
  const drip = setInterval(() => socket.writable && socket.write('x'), 200);
  t.after(() => clearInterval(drip));
  await waitUntil(() => received.includes('"jsonrpc":"2.0"}'), 10000, 'the 413');
  assert.match(received, /^HTTP\/1\.1 413 Payload Too Large\r\n/);
  assert.match(received, /\r\nConnection: close\r\n/);
  assert.match(received, /the request body is 99999999999 bytes, over the limit of 16777216/);
});
