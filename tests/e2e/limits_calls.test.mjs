// Bounded calls (--max-calls, --max-session-calls, --max-queued-calls): many
// more slow calls than the limits over a raw stdio pipe, the server's thread
// count read from /proc while they run; over stdio a burst past the queue
// slowed down (held, the pipe pushing back) rather than refused, a
// confirmation's answer read past the held calls; over HTTP the busy error
// past the queue; the gauges and the refusal counter on /metrics.
//
// The catalog (tests/data/e2e/calls/catalog.json) has two command tools:
// nap {seconds}, with a 60 s timeout, and sweep {}, destructive (confirmed).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { DATA_DIR, HttpServer, RawServer, connectHttp, expectMcpError, makeRoot, short, sleep, textOf, waitUntil } from './helpers.mjs';

const CALLS_CATALOG = path.join(DATA_DIR, 'calls', 'catalog.json');

function start(t, extra = []) {
  const server = new RawServer(['serve', '--root', makeRoot({}), '--catalog', CALLS_CATALOG, ...extra]);
  t.after(() => server.kill());
  return server;
}

/** The process's thread count, from /proc/PID/status. */
function threadsOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^Threads:\s+(\d+)$/m.exec(status)[1]);
}

/**
 * Sends `count` nap calls at once (ids 1..count) and waits for every answer,
 * sampling the server's thread count meanwhile. Returns { answers, mostThreads }.
 */
async function flood(server, count, seconds, timeoutMs) {
  const from = server.messages.length;
  for (let id = 1; id <= count; id++) {
    server.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'nap', arguments: { seconds } } });
  }
  let mostThreads = 0;
  const answers = new Map();
  const started = Date.now();
  while (answers.size < count) {
    if (server.exit) throw new Error(`toolmux exited (${JSON.stringify(server.exit)}); stderr: ${server.stderr}`);
    if (Date.now() - started > timeoutMs) throw new Error(`${answers.size} of ${count} calls answered after ${timeoutMs} ms`);
    mostThreads = Math.max(mostThreads, threadsOf(server.child.pid));
    for (const m of server.messages.slice(from)) {
      if (typeof m.id === 'number' && ('result' in m || 'error' in m)) answers.set(m.id, m);
    }
    await sleep(20);
  }
  return { answers, mostThreads };
}

// What an idle server runs besides call threads (reader, catalog host,
// signal taker, queue watch, ...), generously: the bound is about calls.
const BASE_THREADS = 24;

test('150 slow calls under the default limits: all complete, and the threads stay bounded', async (t) => {
  const server = start(t);
  await server.initialize();
  // The one stdio session runs 16 at once (--max-session-calls), two threads
  // each at most; the rest wait in the queue (256).
  const { answers, mostThreads } = await flood(server, 150, '0.5', 45000);
  for (const [id, answer] of answers) {
    assert.equal(textOf(answer.result), 'rested 0.5\n', `call ${id}: ${short(answer)}`);
  }
  assert.ok(mostThreads <= 2 * 16 + BASE_THREADS, `the server ran ${mostThreads} threads for 150 calls`);
  const pong = await server.request('after', 'ping');
  assert.deepEqual(pong.result, {});
});

test('over stdio a burst past every limit is slowed down, not refused: 3,000 calls at once all answered', async (t) => {
  const root = makeRoot({ 'a.txt': 'alpha\n' });
  const server = new RawServer(['serve', '--root', root, '--max-calls', '2', '--max-session-calls', '2', '--max-queued-calls', '8']);
  t.after(() => server.kill());
  await server.initialize();
  const count = 3000;
  const from = server.messages.length;
  // One write: toolmux holds what its queue cannot take and reads on as it empties.
  server.child.stdin.write(
    Array.from({ length: count }, (_, i) => `${JSON.stringify({
      jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'read_text_file', arguments: { path: 'a.txt' } },
    })}\n`).join(''),
  );
  const answered = () => server.messages.slice(from).filter((m) => typeof m.id === 'number');
  await waitUntil(() => server.exit || answered().length >= count, 20000, `${count} answers`);
  const answers = answered();
  assert.equal(server.exit, null, server.stderr);
  const refused = answers.filter((m) => m.error);
  assert.deepEqual(refused.slice(0, 3), [], `${refused.length} calls refused`);
  assert.equal(new Set(answers.map((m) => m.id)).size, count);
  for (const m of answers) assert.equal(textOf(m.result), 'alpha\n', short(m));
  const pong = await server.request('after', 'ping');
  assert.deepEqual(pong.result, {});
});

test('over stdio a call waiting for its confirmation gets the answer that comes behind held calls', async (t) => {
  // The confirmation's answer is written after 200 calls that wait for a place:
  // toolmux reads it at once instead of after them.
  const root = makeRoot({ 'a.txt': 'alpha\n' });
  const server = new RawServer(['serve', '--root', root, '--catalog', CALLS_CATALOG, '--max-calls', '1', '--max-queued-calls', '0']);
  t.after(() => server.kill());
  const init = await server.request('init', 'initialize', {
    protocolVersion: '2025-11-25', capabilities: { elicitation: {} }, clientInfo: { name: 'toolmux-e2e-raw', version: '0' },
  });
  assert.ok(init.result, short(init));
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  server.send({ jsonrpc: '2.0', id: 'sweep', method: 'tools/call', params: { name: 'sweep', arguments: {} } });
  const asked = await server.waitFor((m) => m.method === 'elicitation/create', { what: 'the confirmation question' });
  const from = server.messages.length;
  for (let id = 1; id <= 200; id++) {
    server.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_text_file', arguments: { path: 'a.txt' } } });
  }
  server.send({
    jsonrpc: '2.0', id: asked.id, result: { action: 'accept', content: { approve: true, approver: 'Ada', rationale: 'a test' } },
  });
  const swept = await server.waitFor((m) => m.id === 'sweep' && 'result' in m, { timeoutMs: 5000, what: 'the confirmed call' });
  assert.equal(textOf(swept.result), 'swept\n', short(swept));
  await waitUntil(() => server.messages.slice(from).filter((m) => typeof m.id === 'number').length >= 200, 15000, '200 answers');
  for (const m of server.messages.slice(from).filter((m) => typeof m.id === 'number')) {
    assert.equal(textOf(m.result), 'alpha\n', short(m));
  }
});

test('over HTTP past --max-calls and --max-queued-calls, a call gets the busy error at once', async (t) => {
  const server = await HttpServer.start(t, { catalog: CALLS_CATALOG, args: ['--max-calls', '1', '--max-queued-calls', '1', '--max-session-queued-calls', '1'] });
  const { client } = await connectHttp(t, server.url);
  const first = client.callTool({ name: 'nap', arguments: { seconds: '1' } });
  const second = client.callTool({ name: 'nap', arguments: { seconds: '0' } });
  const read = async () => (await fetch(`${server.origin}/metrics`)).text();
  await waitUntil(async () => metric(await read(), 'toolmux_calls_queued') === 1, 10000, 'one call queued');
  await expectMcpError(
    assert,
    client.callTool({ name: 'nap', arguments: { seconds: '0' } }),
    -32000,
    /^MCP error -32000: toolmux is busy: 1 calls running \(--max-calls 1\) and 1 calls queued \(--max-queued-calls 1\); try again later$/,
  );
  assert.equal(textOf(await first), 'rested 1\n');
  assert.equal(textOf(await second), 'rested 0\n');
  await server.stopCleanly(assert);
});

test('a bad --max-calls is a usage error naming the range', async (t) => {
  const server = start(t, ['--max-calls', '0']);
  const exit = await server.exited;
  assert.equal(exit.code, 2, server.stderr);
  assert.match(server.stderr, /--max-calls needs a whole number from 1 to 1024/);
});

function metric(text, name) {
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return match ? Number(match[1]) : null;
}

test('/metrics shows the calls running and queued, and counts the calls refused', async (t) => {
  const server = await HttpServer.start(t, { catalog: CALLS_CATALOG, args: ['--max-calls', '1', '--max-queued-calls', '1'] });
  const read = async () => (await fetch(`${server.origin}/metrics`)).text();
  const idle = await read();
  assert.match(idle, /^# TYPE toolmux_calls_running gauge$/m);
  assert.match(idle, /^# TYPE toolmux_calls_queued gauge$/m);
  assert.match(idle, /^# TYPE toolmux_calls_refused_total counter$/m);
  assert.equal(metric(idle, 'toolmux_calls_refused_total'), 0, idle);

  const { client } = await connectHttp(t, server.url);
  const first = client.callTool({ name: 'nap', arguments: { seconds: '1.5' } });
  const second = client.callTool({ name: 'nap', arguments: { seconds: '0' } });
  const during = await waitUntil(async () => {
    const text = await read();
    return metric(text, 'toolmux_calls_running') === 1 && metric(text, 'toolmux_calls_queued') === 1 ? text : null;
  }, 10000, 'one call running and one queued on /metrics');
  assert.equal(metric(during, 'toolmux_calls_refused_total'), 0, during);
  await expectMcpError(assert, client.callTool({ name: 'nap', arguments: { seconds: '0' } }), -32000, /toolmux is busy/);
  assert.equal(metric(await read(), 'toolmux_calls_refused_total'), 1);
  assert.equal(textOf(await first), 'rested 1.5\n');
  assert.equal(textOf(await second), 'rested 0\n');
  const after = await waitUntil(async () => {
    const text = await read();
    return metric(text, 'toolmux_calls_running') === 0 ? text : null;
  }, 5000, 'no call running on /metrics');
  assert.equal(metric(after, 'toolmux_calls_queued'), 0, after);
  await server.stopCleanly(assert);
});

test('over HTTP one session past --max-session-queued-calls is refused while another session still queues', async (t) => {
  const server = await HttpServer.start(t, {
    catalog: CALLS_CATALOG,
    args: ['--max-calls', '1', '--max-queued-calls', '8', '--max-session-queued-calls', '1'],
  });
  const { client: greedy } = await connectHttp(t, server.url);
  const { client: other } = await connectHttp(t, server.url);
  const running = greedy.callTool({ name: 'nap', arguments: { seconds: '1.5' } });
  await sleep(300);
  const queued = greedy.callTool({ name: 'nap', arguments: { seconds: '0' } });
  await sleep(300);
  await expectMcpError(
    assert,
    greedy.callTool({ name: 'nap', arguments: { seconds: '0' } }),
    -32000,
    /^MCP error -32000: toolmux is busy: 1 calls running \(--max-calls 1\) and this session has 1 calls queued \(--max-session-queued-calls 1\); try again later$/,
  );
  // The other session's call waits its turn and runs.
  assert.equal(textOf(await other.callTool({ name: 'nap', arguments: { seconds: '0.1' } })), 'rested 0.1\n');
  assert.equal(textOf(await running), 'rested 1.5\n');
  assert.equal(textOf(await queued), 'rested 0\n');
  await server.stopCleanly(assert);
});
