// The stdio transport over a raw child_process pipe, no SDK: malformed and
// invalid messages, ordering rules, duplicate keys, version negotiation and
// exit on end of input.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  CATALOG,
  LATEST_PROTOCOL_VERSION,
  PROTOCOL_VERSIONS,
  RawServer,
  makeRoot,
  makeTempDir,
  short,
  sleep,
  textOf,
} from './helpers.mjs';

function start(t, extra = []) {
  const root = makeRoot({ 'a.txt': 'alpha\n', 'b.txt': 'beta\n' });
  const server = new RawServer(['serve', '--root', root, ...extra]);
  t.after(() => server.kill());
  return server;
}

function assertError(message, code, id) {
  assert.ok(message.error, `expected an error response, got ${short(message)}`);
  assert.equal(message.jsonrpc, '2.0');
  assert.equal(message.error.code, code, short(message));
  assert.equal(typeof message.error.message, 'string');
  assert.ok(message.error.message.length > 0, 'empty error message');
  if (id !== undefined) assert.deepEqual(message.id, id, JSON.stringify(message));
  assert.ok(!('result' in message), 'a response holds both result and error');
}

test('a line that is not JSON gets -32700 with id null, and the server keeps serving', async (t) => {
  const server = start(t);
  server.writeLine('this is not json');
  const parseError = await server.waitFor((m) => m.error, { what: 'the parse error' });
  assertError(parseError, -32700, null);

  server.writeLine('{"jsonrpc":"2.0","id":7,"method":"ping"');
  const second = await server.waitFor((m) => m.error, { from: server.messages.indexOf(parseError) + 1, what: 'the 2nd parse error' });
  assertError(second, -32700, null);

  const init = await server.initialize();
  assert.ok(init.result, JSON.stringify(init));
  assert.equal(init.result.serverInfo.name, 'toolmux');
  assert.equal(init.result.protocolVersion, LATEST_PROTOCOL_VERSION);
  const list = await server.request(2, 'tools/list', {});
  assert.ok(Array.isArray(list.result?.tools), JSON.stringify(list));
  assert.deepEqual(server.unparsable, [], 'stdout must carry only JSON-RPC lines');
});

test('an invalid request gets -32600', async (t) => {
  const server = start(t);
  await server.initialize();
  let from = server.messages.length;
  server.send({ jsonrpc: '2.0', id: 1 });
  assertError(await server.waitFor((m) => m.error, { from, what: '-32600 for a request with no method' }), -32600);

  from = server.messages.length;
  server.send({ jsonrpc: '2.0', id: 2, method: 42 });
  assertError(await server.waitFor((m) => m.error, { from, what: '-32600 for a non-string method' }), -32600);

  from = server.messages.length;
  server.send({ jsonrpc: '1.0', id: 3, method: 'ping' });
  assertError(await server.waitFor((m) => m.error, { from, what: '-32600 for jsonrpc 1.0' }), -32600);

  from = server.messages.length;
  server.writeLine('42');
  assertError(await server.waitFor((m) => m.error, { from, what: '-32600 for a bare number' }), -32600);

  const pong = await server.request(4, 'ping');
  assert.deepEqual(pong.result, {});
});

test('an unknown method gets -32601 with the request id', async (t) => {
  const server = start(t);
  await server.initialize();
  const response = await server.request(11, 'no/such/method', {});
  assertError(response, -32601, 11);
  const stringId = await server.request('abc', 'tools/frobnicate');
  assertError(stringId, -32601, 'abc');
});

test('before initialize: ping works, other requests get a clear error', async (t) => {
  const server = start(t);
  const pong = await server.request(1, 'ping');
  assert.deepEqual(pong.result, {}, JSON.stringify(pong));

  const early = await server.request(2, 'tools/list', {});
  assert.ok(early.error, `tools/list before initialize must be an error: ${JSON.stringify(early)}`);
  assert.equal(early.id, 2);
  assert.match(early.error.message, /initiali[sz]/i, `the message should say the session is not initialized: ${early.error.message}`);

  const earlyCall = await server.request(3, 'tools/call', { name: 'read_text_file', arguments: { path: 'a.txt' } });
  assert.ok(earlyCall.error, JSON.stringify(earlyCall));

  const init = await server.initialize();
  assert.ok(init.result, JSON.stringify(init));
  const list = await server.request(4, 'tools/list', {});
  assert.ok(list.result, JSON.stringify(list));
});

test('notifications get no response', async (t) => {
  const server = start(t);
  await server.initialize();
  const from = server.messages.length;
  server.send({ jsonrpc: '2.0', method: 'notifications/no_such_notification', params: {} });
  server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 999 } });
  const pong = await server.request('after', 'ping');
  assert.deepEqual(pong.result, {});
  const between = server.messages.slice(from).filter((m) => m !== pong && 'id' in m);
  assert.deepEqual(between, [], `responses to notifications: ${JSON.stringify(between)}`);
});

test('tools/call arguments with a repeated key get an isError result naming the key', async (t) => {
  const server = start(t);
  await server.initialize();
  const from = server.messages.length;
  server.writeLine('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"a.txt","path":"b.txt"}}}');
  const response = await server.waitFor((m) => m.id === 5, { from, what: 'the response to the repeated-key call' });
  assert.ok(response.result, `expected a result, got ${JSON.stringify(response)}`);
  assert.equal(response.result.isError, true, JSON.stringify(response));
  const text = textOf(response.result);
  assert.match(text, /path/, `the text should name the repeated key "path": ${JSON.stringify(text)}`);
  assert.ok(!text.includes('alpha') && !text.includes('beta'), 'the tool ran on one of the two values');

  // The same call without the repeat works.
  const ok = await server.request(6, 'tools/call', { name: 'read_text_file', arguments: { path: 'a.txt' } });
  assert.notEqual(ok.result?.isError, true, JSON.stringify(ok));
  assert.match(textOf(ok.result), /alpha/);
});

test('protocol version negotiation: each supported version is echoed, an unknown one gets the latest', async (t) => {
  for (const version of [...PROTOCOL_VERSIONS, '1999-01-01']) {
    const server = start(t);
    const init = await server.initialize(version);
    const expected = PROTOCOL_VERSIONS.includes(version) ? version : LATEST_PROTOCOL_VERSION;
    assert.equal(init.result?.protocolVersion, expected, `offered ${version}: ${JSON.stringify(init)}`);
    assert.equal(init.result.serverInfo.name, 'toolmux');
    assert.deepEqual(init.result.capabilities.tools, { listChanged: true });
    assert.deepEqual(init.result.capabilities.logging, {});
    server.closeStdin();
    await server.exited;
  }
});

test('the process exits within 1 s after stdin is closed', async (t) => {
  const server = start(t, ['--catalog', CATALOG]);
  await server.initialize();
  const list = await server.request(2, 'tools/list', {});
  assert.ok(list.result);
  const closedAt = performance.now();
  server.closeStdin();
  const exit = await Promise.race([server.exited, new Promise((resolve) => setTimeout(() => resolve(null), 3000))]);
  assert.ok(exit, `toolmux still running 3 s after stdin closed; stderr: ${server.stderr}`);
  const ms = exit.at - closedAt;
  assert.ok(ms < 1000, `toolmux took ${Math.round(ms)} ms to exit after stdin closed`);
  assert.equal(exit.code, 0, `exit ${JSON.stringify(exit)}; stderr: ${server.stderr}`);
});

test('stdin closed before initialize: the process exits promptly too', async (t) => {
  const server = start(t);
  const closedAt = performance.now();
  server.closeStdin();
  const exit = await Promise.race([server.exited, new Promise((resolve) => setTimeout(() => resolve(null), 3000))]);
  assert.ok(exit, 'toolmux still running 3 s after stdin closed');
  assert.ok(exit.at - closedAt < 1000, `took ${Math.round(exit.at - closedAt)} ms`);
});

test('logging/setLevel: notifications/message are sent at or above the level only', async (t) => {
  const server = start(t, ['--log-level', 'debug']);
  await server.initialize();
  const set = await server.request(3, 'logging/setLevel', { level: 'debug' });
  assert.deepEqual(set.result, {}, JSON.stringify(set));
  await server.request(4, 'tools/call', { name: 'read_text_file', arguments: { path: 'a.txt' } });
  await server.request(5, 'tools/call', { name: 'read_text_file', arguments: { path: '../outside' } });
  const levels = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
  const atDebug = server.messages.filter((x) => x.method === 'notifications/message');
  assert.ok(atDebug.length >= 1, 'at level debug, two tool calls produced no notifications/message');
  for (const m of atDebug) {
    assert.ok(levels.includes(m.params?.level), JSON.stringify(m));
    assert.ok('data' in m.params, JSON.stringify(m));
  }

  const high = await server.request(6, 'logging/setLevel', { level: 'emergency' });
  assert.deepEqual(high.result, {});
  const from = server.messages.length;
  await server.request(7, 'tools/call', { name: 'read_text_file', arguments: { path: 'a.txt' } });
  await server.request(8, 'tools/call', { name: 'read_text_file', arguments: { path: '../outside' } });
  await server.request(9, 'ping');
  const below = server.messages.slice(from).filter((m) => m.method === 'notifications/message' && m.params?.level !== 'emergency');
  assert.deepEqual(below, [], `notifications/message below "emergency": ${JSON.stringify(below)}`);
});

test('a line over --max-message-bytes gets -32700 and the server keeps serving', async (t) => {
  const server = start(t, ['--max-message-bytes', '1024']);
  await server.initialize();
  const from = server.messages.length;
  server.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_text_file', arguments: { path: 'x'.repeat(4096) } } });
  const error = await server.waitFor((m) => m.error || m.result, { from, what: 'the answer to an oversized line' });
  assertError(error, -32700, null);
  const pong = await server.request(2, 'ping');
  assert.deepEqual(pong.result, {});
});

test('stdin closed while a command runs past --shutdown-grace: answered as stopped, its process group killed', async (t) => {
  const server = start(t, ['--catalog', CATALOG, '--shutdown-grace', '1']);
  await server.initialize();
  const markers = makeTempDir('toolmux-markers-');
  const marker = path.join(markers, 'orphan');
  server.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'sleep_then_mark', arguments: { marker } } });
  const closedAt = performance.now();
  server.closeStdin();
  const exit = await Promise.race([server.exited, sleep(4000).then(() => null)]);
  assert.ok(exit, 'toolmux still running 4 s after stdin closed');
  // The call already read may run for the grace (1 s), not longer.
  assert.ok(exit.at - closedAt < 2500, `took ${Math.round(exit.at - closedAt)} ms to exit`);
  assert.equal(exit.code, 0, `exit ${JSON.stringify(exit)}; stderr: ${server.stderr}`);
  const answer = server.messages.find((m) => m.id === 2);
  assert.equal(answer?.result?.isError, true, JSON.stringify(server.messages));
  assert.match(textOf(answer.result), /was stopped before it finished: toolmux is exiting/);
  // The command's background child would write the marker 1.5 s after it started.
  await sleep(Math.max(0, closedAt + 1800 - performance.now()));
  assert.ok(!fs.existsSync(marker), 'the in-flight command kept running after toolmux exited (its process group was not killed) and wrote the marker');
});
