// Three toolmux instances behind HAProxy (examples/haproxy/haproxy.cfg: round
// robin, no stickiness, /health checked every 300 ms), each with its own
// RocksDB store (cluster.mjs starts and stops them):
// - the Host a client sends reaches the instances unchanged: 127.0.0.1 and a
//   name given to every instance with --allow-host pass, another gets 403;
// - the v2 client at 2026-07-28 lists tools and calls read-only ones through
//   the proxy, and every instance answers some of them (HAProxy's header,
//   each instance's log, its instance id in /status.json and HAProxy's
//   counters say which);
// - what one instance stores the others do not see: a modern client's
//   offloaded result, a legacy session (404 elsewhere, so the 1.x client
//   cannot go on with its session across instances);
// - examples/haproxy/legacy-sessions.cfg keeps each legacy session on the
//   instance that opened it, while modern requests go round robin;
// - a question to the client (input_required) whose retry reaches another
//   instance: refused with each instance's own state.key, answered with one
//   key copied into every data directory, a guarded mutation's confirmation
//   too;
// - kill -9 of one instance under 300 modern calls, 8 at a time: only calls
//   in flight on it fail, HAProxy takes it out of rotation within about a
//   second, and the others go on answering;
// - on a shared PostgreSQL store: the same kill under mixed calls (reads,
//   keyed mutations, offloaded results), with every acknowledged mutation's
//   audit record in the store and every acknowledged result read back whole
//   through the survivors; a stdio upstream's list change on one instance
//   told to the listeners of every instance, each listing the new tool (also
//   a lazy upstream not started on the others);
// - examples/haproxy/*.cfg pass `haproxy -c` as written;
// - teardown leaves no process and no folder, also when the test process is
//   killed.
//
// The catalog (tests/data/e2e/cluster/catalog.json): gen_chars; pause, which
// runs 0.3 s as a child process of the instance; approved_echo, confirmed by
// the client's human; note_mutation, journaled. The re-ranking tests use
// tests/data/e2e/rerank/; the list change, upstream_catalog.json there (the
// upstream shared_list_upstream.mjs).

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { Cluster, HAPROXY_LEGACY_SESSIONS, childrenOf, clusterOnPostgres, connectModern } from './cluster.mjs';
import {
  DATA_DIR,
  HttpServer,
  connectHttp,
  genCharsText,
  initializeRequest,
  makeTempDir,
  notFoundPrefix,
  offloadChars,
  parseOffloadNotice,
  readStoredResult,
  runCli,
  rawPost,
  SseReader,
  sessionHeaders,
  short,
  sleep,
  textOf,
  toolNames,
  waitUntil,
} from './helpers.mjs';

const execFileAsync = promisify(execFile);
const CATALOG = path.join(DATA_DIR, 'cluster', 'catalog.json');
const UPSTREAM_CATALOG = path.join(DATA_DIR, 'cluster', 'upstream_catalog.json');
const LAZY_UPSTREAM_CATALOG = path.join(DATA_DIR, 'cluster', 'lazy_upstream_catalog.json');
const FILES = { 'notes.txt': 'three instances, one answer\n', 'docs/': '' };
const TOOLS = ['approved_echo', 'call_tool', 'find_files', 'gen_chars', 'get_file_info', 'list_directory', 'note_mutation', 'pause', 'read_text_file', 'read_tool_result', 'search_file_contents', 'slow_pause', 'tool_search'];
const NAMES = ['toolmux1', 'toolmux2', 'toolmux3'];

/** How many of `served` (server names) each instance answered. */
function countBy(served) {
  const counts = Object.fromEntries(NAMES.map((n) => [n, 0]));
  for (const name of served) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}

/** The tool_call log lines of an instance. */
const toolCalls = (server) => server.logs.filter((l) => l.event === 'tool_call');

/**
 * GET /status.json through the proxy `n` times, one after the other; asserts
 * that each answer names the instance id and store the answering instance
 * logged at start, and that all instances answered.
 */
async function assertStatusFromEveryInstance(cluster, store, n = 3) {
  const ids = new Set();
  for (let i = 0; i < n; i++) {
    const response = await fetch(`${cluster.origin}/status.json`);
    assert.equal(response.status, 200);
    const { server } = await response.json();
    const instance = cluster.instances.find((s) => s.name === response.headers.get('x-toolmux-server'));
    const logged = instance.logs.find((l) => l.event === 'instance');
    assert.equal(server.instance, logged?.instance, `${instance.name}'s /status.json and its log`);
    assert.equal(server.store, store);
    ids.add(server.instance);
  }
  assert.equal(ids.size, cluster.instances.length, `instance ids: ${[...ids]}`);
}

/**
 * A 2026-07-28 subscriptions/listen for tool list changes on each instance
 * (directly, not through the proxy), acknowledged; resolves their SseReaders,
 * closed after the test.
 */
async function listenOnEvery(t, cluster) {
  const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const listeners = [];
  t.after(() => Promise.all(listeners.map((r) => r.close())));
  for (const server of cluster.instances) {
    const { response, reader } = await SseReader.post(
      server.url,
      { jsonrpc: '2.0', id: 'listen', method: 'subscriptions/listen', params: { _meta: META, notifications: { toolsListChanged: true } } },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
    );
    listeners.push(reader);
    assert.equal(response.status, 200, server.name);
    await reader.waitFor((e) => e.message?.method === 'notifications/subscriptions/acknowledged', 5000, `${server.name}'s acknowledgment`);
  }
  return listeners;
}

/** `toolmux audit --json --store postgresql --tool TOOL` on the cluster's database: its records. */
async function sharedAudit(cluster, tool) {
  const run = await runCli(['audit', '--json', '--store', 'postgresql', '--tool', tool], { env: { TOOLMUX_POSTGRES_URL: cluster.startOptions.env.TOOLMUX_POSTGRES_URL } });
  assert.equal(run.code, 0, run.stderr);
  return run.stdout.split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line));
}

/** A raw POST of tools/list at 2026-07-28 to `url` with `Host: host`; resolves { status, server }. */
function postWithHost(url, host) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } });
  return new Promise((resolve, reject) => {
    const request = http.request(url, {
      method: 'POST',
      headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
    }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode, server: response.headers['x-toolmux-server'] }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

describe('three instances with their own RocksDB behind HAProxy', () => {
  let cluster;
  before(async () => {
    cluster = await Cluster.start(null, { catalog: CATALOG, files: FILES, args: ['--allow-host', 'tools.example.internal'] });
  });
  after(() => cluster?.close());

  test("the Host a client sends passes through HAProxy unchanged: 127.0.0.1 and a name given with --allow-host are accepted, another name gets 403", async () => {
    const port = new URL(cluster.url).port;
    for (const [host, status] of [[`127.0.0.1:${port}`, 200], [`tools.example.internal:${port}`, 200], [`elsewhere.example:${port}`, 403]]) {
      const answers = await Promise.all([0, 1, 2].map(() => postWithHost(cluster.url, host)));
      assert.deepEqual(answers.map((a) => a.status), [status, status, status], `${host}: ${JSON.stringify(answers)}`);
      assert.deepEqual(new Set(answers.map((a) => a.server)), new Set(NAMES), `${host}: ${JSON.stringify(answers)}`);
    }
  });

  test('the v2 client at 2026-07-28 lists the tools and calls read-only ones through the proxy, on every instance', async (t) => {
    const modern = await connectModern(t, cluster.url);
    const listedBy = [];
    for (let i = 0; i < 3; i++) {
      const { tools } = await modern.client.listTools({}, { cacheMode: 'bypass' });
      assert.deepEqual(toolNames(tools), TOOLS);
      listedBy.push(modern.last);
    }
    const calledBy = [];
    const callsBefore = cluster.instances.map((s) => toolCalls(s).length);
    for (let i = 0; i < 6; i++) {
      const read = await modern.client.callTool({ name: 'read_text_file', arguments: { path: 'notes.txt' } });
      assert.notEqual(read.isError, true, short(read));
      assert.equal(textOf(read), FILES['notes.txt']);
      calledBy.push(modern.last);
      const chars = await modern.client.callTool({ name: 'gen_chars', arguments: { count: 9 } });
      assert.equal(textOf(chars), genCharsText(9), short(chars));
      calledBy.push(modern.last);
    }
    // Round robin, no stickiness: each instance answered lists and calls.
    assert.deepEqual(new Set(listedBy), new Set(NAMES), `tools/list answered by ${listedBy}`);
    const calls = countBy(calledBy);
    for (const name of NAMES) assert.ok(calls[name] >= 2, `calls answered: ${JSON.stringify(calls)}`);
    // Each instance's own log agrees with the proxy's header.
    await waitUntil(() => cluster.instances.every((s, i) => toolCalls(s).length - callsBefore[i] === calls[s.name]), 5000, 'the tool_call log lines');
    await assertStatusFromEveryInstance(cluster, 'rocksdb');
    const stats = await cluster.stats();
    const answered = countBy([...listedBy, ...calledBy]);
    for (const name of NAMES) assert.ok(stats[name].responses2xx >= answered[name], `HAProxy's counts: ${JSON.stringify(stats)}; answered: ${JSON.stringify(answered)}`);
  });

  test("a modern client's offloaded result is stored by the instance that ran the call: the others do not find it", async (t) => {
    const modern = await connectModern(t, cluster.url);
    const id = await offloadChars(assert, modern.client, 12000);
    const owner = modern.last;
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const page = await modern.client.callTool({ name: 'read_tool_result', arguments: { result_id: id, offset: 0, max_chars: 100 } });
      answers.push({ server: modern.last, found: page.isError !== true, text: textOf(page).slice(0, 300) });
    }
    assert.deepEqual(new Set(answers.map((a) => a.server)), new Set(NAMES));
    for (const a of answers) {
      if (a.server === owner) assert.ok(a.found && a.text.startsWith(genCharsText(100)), JSON.stringify(a));
      else assert.ok(!a.found && a.text.startsWith(notFoundPrefix(id).replace(' for this session', '')), JSON.stringify(a));
    }
  });

  test("a legacy session lives in the instance that opened it: the others answer 404 for it", async () => {
    const init = await rawPost(cluster.url, initializeRequest());
    const body = await init.text();
    assert.equal(init.status, 200, body);
    const sessionId = init.headers.get('mcp-session-id');
    const owner = init.headers.get('x-toolmux-server');
    assert.ok(sessionId && owner);
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const response = await rawPost(cluster.url, { jsonrpc: '2.0', id: i + 2, method: 'tools/list' }, sessionHeaders(sessionId));
      answers.push({ status: response.status, server: response.headers.get('x-toolmux-server') });
      await response.text();
    }
    assert.deepEqual(
      answers.map((a) => (a.server === owner ? 200 : 404)),
      answers.map((a) => a.status),
      `${owner} opened the session; answers: ${JSON.stringify(answers)}`,
    );
    assert.deepEqual(new Set(answers.map((a) => a.server)), new Set(NAMES));
  });
});

describe('legacy sessions kept on their instance (examples/haproxy/legacy-sessions.cfg)', () => {
  let cluster;
  before(async () => {
    cluster = await Cluster.start(null, { catalog: CATALOG, files: FILES, haproxy: HAPROXY_LEGACY_SESSIONS });
  });
  after(() => cluster?.close());

  test('two 1.x clients each go on with their session on the instance that opened it, while modern requests go round robin', async (t) => {
    const legacy = [await connectHttp(t, cluster.url), await connectHttp(t, cluster.url)];
    const before = cluster.requests.length;
    for (let i = 0; i < 6; i++) {
      for (const session of legacy) {
        const result = await session.client.callTool({ name: 'gen_chars', arguments: { count: i + 1 } });
        assert.equal(textOf(result), genCharsText(i + 1), short(result));
      }
    }
    const modern = await connectModern(t, cluster.url);
    for (let i = 0; i < 6; i++) await modern.client.callTool({ name: 'gen_chars', arguments: { count: 2 } });
    // Each session's calls all went to one instance (HAProxy's log); the two
    // sessions were opened on two instances (round robin), the modern calls
    // reached all three.
    await waitUntil(() => cluster.requests.length >= before + 18, 5000, "HAProxy's log lines");
    const calls = cluster.requests.slice(before);
    const servers = new Set(calls.map((r) => r.server));
    assert.deepEqual(servers, new Set(NAMES), JSON.stringify(calls));
    assert.deepEqual(new Set(modern.served.slice(-6)), new Set(NAMES));
    const owners = legacy.map((session) => new Set(calls.filter((r) => r.session === session.transport.sessionId).map((r) => r.server)));
    assert.deepEqual(owners.map((o) => o.size), [1, 1], JSON.stringify(calls));
    assert.notDeepEqual(owners[0], owners[1]);
  });
});

// tool_search with re-ranking by the client's model (tests/data/e2e/rerank/):
// an unsure search asks the client for a sampling, as input_required; the
// client's retry carries the sealed requestState, and goes to the next instance.
const RERANK_CATALOG = path.join(DATA_DIR, 'rerank', 'catalog.json');
const UNSURE = { query: 'weekly report summary overview', limit: 3 };

/** The v2 client with sampling (answered "[3, 1]") and elicitation (approving); `asked` lists the questions. */
async function answeringClient(t, url, headers = {}) {
  const record = await connectModern(t, url, { capabilities: { sampling: {}, elicitation: {} }, headers });
  record.asked = [];
  record.client.setRequestHandler('sampling/createMessage', async (request) => {
    record.asked.push(request.params);
    return { role: 'assistant', model: 'scripted', content: { type: 'text', text: '[3, 1]' } };
  });
  record.client.setRequestHandler('elicitation/create', async (request) => {
    record.asked.push(request.params);
    return { action: 'accept', content: { approve: true, approver: 'Ada Lovelace', rationale: 'a test through the proxy' } };
  });
  return record;
}

describe('a question to the client answered through another instance (2026-07-28 requestState)', () => {
  test("with each instance's own state.key, the retry that reaches another instance is refused", async (t) => {
    const cluster = await Cluster.start(t, { catalog: RERANK_CATALOG, files: FILES });
    const modern = await answeringClient(t, cluster.url);
    const error = await modern.client.callTool({ name: 'tool_search', arguments: UNSURE }).then(
      (result) => assert.fail(`answered: ${short(result)}`),
      (e) => e,
    );
    assert.equal(error.code, -32602, error.message);
    assert.match(error.message, /requestState/i);
    assert.equal(modern.asked.length, 1);
    assert.notEqual(modern.served.at(-2), modern.served.at(-1), JSON.stringify(modern.served));
  });

  test('with one state.key copied into every data directory, another instance opens the retry', async (t) => {
    const cluster = await Cluster.start(t, { catalog: RERANK_CATALOG, files: FILES, stateKey: crypto.randomBytes(32) });
    const modern = await answeringClient(t, cluster.url);
    for (let i = 0; i < 3; i++) {
      const result = await modern.client.callTool({ name: 'tool_search', arguments: UNSURE });
      assert.equal(result.structuredContent?.reranked, true, short(result));
    }
    // One question per search, and each question's retry went to another instance.
    assert.equal(modern.asked.length, 3);
    const served = modern.served.slice(-6);
    for (let i = 0; i < 6; i += 2) assert.notEqual(served[i], served[i + 1], JSON.stringify(served));
  });

  test('with one state.key, a confirmation asked by one instance is answered through another, once', async (t) => {
    // Over HTTP a guarded call needs an authenticated caller, who approves it.
    const token = 'ada-token-0123456789abcdef';
    const cluster = await Cluster.start(t, { catalog: CATALOG, files: FILES, stateKey: crypto.randomBytes(32), env: { TOOLMUX_TOKENS: `ada=${token}` } });
    const modern = await answeringClient(t, cluster.url, { authorization: `Bearer ${token}` });
    const result = await modern.client.callTool({ name: 'approved_echo', arguments: {} });
    assert.equal(textOf(result).trim(), 'approved', short(result));
    assert.equal(modern.asked.length, 1);
  });
});

// Kinds of call for loadAndKill shared by its tests.
const READ_NOTES = { name: 'read_text_file', run: (c) => c.callTool({ name: 'read_text_file', arguments: { path: 'notes.txt' } }), check: (r) => assert.equal(textOf(r), FILES['notes.txt']) };
const PAUSE = { name: 'pause', run: (c) => c.callTool({ name: 'pause', arguments: {} }), check: (r) => assert.equal(textOf(r).trim(), 'done') };

// The calls of the kill test on the shared store: a journaled mutation with
// an idempotency key of its own, and a result large enough to be offloaded
// (10,000 bytes, over the catalog's 8192).
const OFFLOADED_CHARS = 4000;
const NOTE_WITH_KEY = {
  name: 'note_mutation',
  run: (c, call) => {
    call.key = `load-${call.n}`;
    return c.callTool({ name: 'note_mutation', arguments: {}, _meta: { 'io.toolmux/idempotencyKey': call.key } });
  },
  check: (r) => assert.equal(textOf(r).trim(), 'noted', short(r)),
};
const GEN_OFFLOADED = {
  name: 'gen_chars (offloaded)',
  run: (c) => c.callTool({ name: 'gen_chars', arguments: { count: OFFLOADED_CHARS } }),
  check: (r, call) => {
    const notice = parseOffloadNotice(textOf(r));
    assert.ok(notice, short(r));
    assert.equal(notice.preview, genCharsText(2000));
    call.resultId = notice.id;
  },
};

/**
 * Load through the proxy and kill -9 of instance `victim` under it: `total`
 * calls over `workers` v2 clients, one after the other on each, call n of
 * kind kinds[n % kinds.length] ({ name, run(client, call), check(result,
 * call) }: run may note on `call` what check and the caller need, e.g. a key
 * or a result id). The victim is killed once a third of the calls are done
 * and a command (a child of it) runs on it: a call is surely in flight.
 * Asserts that every failed call was in flight on the victim (at most one per
 * client, at least one), each survivor logged exactly the tool calls it
 * answered, the calls before the kill reached every instance and none that
 * started after the victim's exit did reach it, HAProxy had it out within
 * 2 s, and the survivors go on answering, alternately. Resolves { calls,
 * failed, clients, victimName }: each call { n, kind, ok, error, server,
 * record (its client), ... }.
 */
async function loadAndKill(t, cluster, kinds, { total = 300, workers = 8, victim = 1 } = {}) {
  const victimName = cluster.instances[victim].name;
  const clients = await Promise.all(Array.from({ length: workers }, () => connectModern(t, cluster.url)));
  const calls = [];
  const callsBefore = cluster.instances.map((s) => toolCalls(s).length);
  let next = 0;
  // From SIGKILL to the victim's exit being seen here took 30 to 130 ms on a
  // loaded machine: requests HAProxy sent it meanwhile reached a dying
  // process, and count as in flight on it.
  let killedAt = null;
  let exitedAt = null;
  let downMs;
  const worker = async (record) => {
    while (next < total) {
      const n = next++;
      const call = { n, kind: kinds[n % kinds.length], record, start: performance.now() };
      record.last = null;
      record.callId = n;
      try {
        const result = await call.kind.run(record.client, call);
        call.kind.check(result, call);
        call.ok = true;
      } catch (error) {
        call.ok = false;
        call.error = `${error.message}${error.cause ? ` (${error.cause.message ?? error.cause})` : ''}`;
      }
      call.end = performance.now();
      call.server = record.last;
      calls.push(call);
    }
  };
  const killer = (async () => {
    const pid = cluster.instances[victim].child.pid;
    await waitUntil(() => calls.length >= total / 3 && childrenOf(pid).length > 0, 30000, 'a command running on the victim');
    killedAt = performance.now();
    await cluster.kill(victim);
    exitedAt = performance.now();
    await cluster.waitForDown(victim);
    downMs = performance.now() - killedAt;
  })();
  await Promise.all([...clients.map(worker), killer]);

  assert.equal(calls.length, total);
  const failed = calls.filter((c) => !c.ok);
  for (const c of failed) c.proxied = cluster.requests.filter((r) => r.call === String(c.n));
  const summary = failed.map((c) => ({ n: c.n, kind: c.kind.name, server: c.server, proxied: c.proxied, start: Math.round(c.start - killedAt), exited: Math.round(exitedAt - killedAt), error: c.error.slice(0, 160) }));
  // Every failure was in flight at the kill (sent before the victim's exit,
  // answered after the SIGKILL), and went to the victim: either
  // HAProxy answered 502 naming it, or (the request was not the first on
  // its client connection) HAProxy closed the connection without an answer
  // and without a log line, as it does only when the server's connection
  // broke: a keep-alive race the client may retry.
  const atKill = (c) => c.start <= exitedAt && c.end >= killedAt;
  const onVictim = (c) => (c.server === victimName && c.proxied.every((r) => r.server === victimName)) || (c.server === null && c.proxied.length === 0 && /other side closed|socket hang up/.test(c.error));
  assert.ok(failed.every((c) => atKill(c) && onVictim(c)), `failures not in flight on ${victimName}: ${JSON.stringify(summary)}`);
  // At most one per client, and at least the command that was running.
  assert.ok(failed.length >= 1 && failed.length <= workers, JSON.stringify(summary));
  // No failed call ran on a survivor: each survivor logged exactly the tool
  // calls that were answered by it.
  await waitUntil(
    () =>
      cluster.instances.every((s, i) => i === victim || toolCalls(s).length - callsBefore[i] === calls.filter((c) => c.ok && c.server === s.name && c.kind.name !== 'tools/list').length),
    3000,
    "each survivor's tool_call lines to match its answered calls",
  );
  // Calls before the kill were spread over all three; none started after the
  // victim's exit reached it (a connection refused is sent elsewhere).
  assert.deepEqual(new Set(calls.filter((c) => c.end < killedAt).map((c) => c.server)), new Set(NAMES));
  const servedAfter = new Set(calls.filter((c) => c.start > exitedAt).map((c) => c.server));
  assert.ok(!servedAfter.has(victimName), `calls started after the kill were answered by ${[...servedAfter]}`);
  // Out of rotation within about a second (fall 2 at inter 300 ms) of the kill.
  t.diagnostic(`${failed.length} calls failed, in flight on ${victimName} (${summary.map((c) => c.kind).join(', ')}); its exit seen ${Math.round(exitedAt - killedAt)} ms after the kill; HAProxy had it down ${Math.round(downMs)} ms after the kill at the latest`);
  assert.ok(downMs < 2000, `marked down only ${Math.round(downMs)} ms after the kill`);

  // The survivors go on answering, alternately.
  const after = [];
  for (let i = 0; i < 6; i++) {
    const result = await clients[0].client.callTool({ name: 'gen_chars', arguments: { count: 5 } });
    assert.equal(textOf(result), genCharsText(5), short(result));
    after.push(clients[0].last);
  }
  assert.deepEqual(countBy(after), { ...Object.fromEntries(NAMES.map((n) => [n, 3])), [victimName]: 0 });
  return { calls, failed, clients, victimName };
}

describe('kill -9 of one instance under load', () => {
  let cluster;
  before(async () => {
    cluster = await Cluster.start(null, { catalog: CATALOG, files: FILES });
  });
  after(() => cluster?.close());

  test('300 modern calls, 8 at a time: only the calls in flight on the killed instance fail, and the cluster goes on answering', async (t) => {
    await loadAndKill(t, cluster, [
      { name: 'tools/list', run: (c) => c.listTools({}, { cacheMode: 'bypass' }), check: (r) => assert.deepEqual(toolNames(r.tools), TOOLS) },
      READ_NOTES,
      PAUSE,
      { name: 'gen_chars', run: (c) => c.callTool({ name: 'gen_chars', arguments: { count: 40 } }), check: (r) => assert.equal(textOf(r), genCharsText(40)) },
      { name: 'tool_search', run: (c) => c.callTool({ name: 'tool_search', arguments: { query: 'read a text file', limit: 3 } }), check: (r) => assert.notEqual(r.isError, true) },
    ]);
  });
});

// With --store postgresql the instances share one store: one PostgreSQL
// server for this file (tests/support/postgres.sh), a fresh database for
// each cluster.
describe('three instances sharing a PostgreSQL store behind HAProxy', () => {
  let pg;
  let cluster;
  clusterOnPostgres({ catalog: CATALOG, files: FILES }, (p, c) => {
    pg = p;
    cluster = c;
  });

  test('every instance says in /status.json that it runs on the PostgreSQL store, each with its own instance id', async () => {
    await assertStatusFromEveryInstance(cluster, 'postgresql');
  });

  test('a result offloaded through one instance is read back whole through the others', async (t) => {
    const modern = await connectModern(t, cluster.url);
    const count = 30000;
    const id = await offloadChars(assert, modern.client, count);
    const owner = modern.last;
    const start = modern.served.length;
    const read = await readStoredResult(assert, modern.client, id, { maxChars: 5000 });
    assert.equal(read.pages, 6);
    assert.ok(read.text === genCharsText(count), `read back ${read.totalChars} characters, not the ${count} made`);
    // Its pages came from every instance, not only the one that stored it.
    const readers = new Set(modern.served.slice(start));
    assert.deepEqual(readers, new Set(NAMES), `stored by ${owner}, pages from ${[...readers]}`);
  });

  test("a re-ranking question's retry is opened by another instance: the requestState key is in the store", async (t) => {
    const rerank = await Cluster.start(t, { catalog: RERANK_CATALOG, files: FILES, store: 'postgresql', postgres: pg });
    const modern = await answeringClient(t, rerank.url);
    for (let i = 0; i < 3; i++) {
      const result = await modern.client.callTool({ name: 'tool_search', arguments: UNSURE });
      assert.equal(result.structuredContent?.reranked, true, short(result));
    }
    assert.equal(modern.asked.length, 3);
    const served = modern.served.slice(-6);
    for (let i = 0; i < 6; i += 2) assert.notEqual(served[i], served[i + 1], JSON.stringify(served));
  });

  test('the 1.x client goes on with its legacy session across instances', async (t) => {
    const legacy = await connectHttp(t, cluster.url);
    for (let i = 0; i < 6; i++) {
      const result = await legacy.client.callTool({ name: 'gen_chars', arguments: { count: i + 1 } });
      assert.equal(textOf(result), genCharsText(i + 1), short(result));
    }
  });

  test("a mutation's journal entry and audit record are visible from every instance", async (t) => {
    const modern = await connectModern(t, cluster.url);
    const result = await modern.client.callTool({ name: 'note_mutation', arguments: {} });
    assert.equal(textOf(result).trim(), 'noted', short(result));
    const env = { TOOLMUX_POSTGRES_URL: cluster.startOptions.env.TOOLMUX_POSTGRES_URL };
    // `journal` and `audit` read the store serve used: PostgreSQL's, not the data directory's.
    const storeArgs = ['--store', 'postgresql'];
    for (const server of cluster.instances) {
      const journal = await runCli(['journal', '--json', '--data-dir', server.dataDir, ...storeArgs], { env });
      assert.equal(journal.code, 0, journal.stderr);
      assert.match(journal.stdout, /"tool":"note_mutation"/, `${server.name}'s journal: ${journal.stdout}`);
      const audit = await runCli(['audit', '--json', '--tool', 'note_mutation', '--data-dir', server.dataDir, ...storeArgs], { env });
      assert.equal(audit.code, 0, audit.stderr);
      assert.match(audit.stdout, /"tool":"note_mutation"/, `${server.name}'s audit: ${audit.stdout}`);
    }
  });

  test('a catalog reload is seen by the listeners of every instance', async (t) => {
    // A 2026-07-28 subscriptions/listen on each instance (directly), then
    // SIGHUP (reload) to the first instance only.
    const listeners = await listenOnEvery(t, cluster);
    cluster.instances[0].child.kill('SIGHUP');
    for (const [i, reader] of listeners.entries()) {
      await reader.waitFor((e) => e.message?.method === 'notifications/tools/list_changed', 2000, `list_changed on ${cluster.instances[i].name}`);
    }
  });

  test('kill -9 of one instance under mixed calls on the shared store: only the calls in flight on it fail, and no acknowledged mutation or offloaded result is lost', async (t) => {
    const shared = await Cluster.start(t, { catalog: CATALOG, files: FILES, store: 'postgresql', postgres: pg });
    const { calls, failed, victimName } = await loadAndKill(t, shared, [READ_NOTES, PAUSE, NOTE_WITH_KEY, GEN_OFFLOADED], { total: 200 });
    const of = (list, kind) => list.filter((c) => c.kind === kind);

    // Every acknowledged mutation has its audit record, outcome ok; the only
    // other records are of mutations in flight on the victim (finished
    // unanswered, or marked interrupted), one each at most.
    const acknowledged = of(calls, NOTE_WITH_KEY).filter((c) => c.ok);
    const inFlight = new Set(of(failed, NOTE_WITH_KEY).map((c) => c.key));
    const records = await sharedAudit(shared, 'note_mutation');
    const byKey = new Map();
    for (const r of records) byKey.set(r.idempotency_key, [...(byKey.get(r.idempotency_key) ?? []), r]);
    const missing = acknowledged.filter((c) => byKey.get(c.key)?.length !== 1 || byKey.get(c.key)[0].outcome !== 'ok');
    assert.deepEqual(missing.map((c) => ({ key: c.key, server: c.server, records: byKey.get(c.key) })), [], 'acknowledged mutations without their one ok record');
    const others = records.filter((r) => !acknowledged.some((c) => c.key === r.idempotency_key));
    assert.ok(others.every((r) => inFlight.has(r.idempotency_key)) && others.length <= inFlight.size, `records of no acknowledged call: ${short(others)}; in flight on ${victimName}: ${[...inFlight]}`);
    assert.ok(acknowledged.some((c) => c.server === victimName), `no mutation was acknowledged by ${victimName}`);

    // Every acknowledged offloaded result reads back whole through the
    // survivors, those the victim stored too.
    const offloaded = of(calls, GEN_OFFLOADED).filter((c) => c.ok);
    assert.ok(offloaded.some((c) => c.server === victimName), `no result was offloaded by ${victimName}`);
    for (const c of offloaded) {
      const from = c.record.served.length;
      const read = await readStoredResult(assert, c.record.client, c.resultId);
      assert.ok(read.text === genCharsText(OFFLOADED_CHARS), `${c.resultId} (stored by ${c.server}) read back as ${read.totalChars} characters`);
      assert.ok(!c.record.served.slice(from).includes(victimName));
    }
    t.diagnostic(`${acknowledged.length} mutations acknowledged, ${records.length} audit records; ${offloaded.length} offloaded results read back, ${offloaded.filter((c) => c.server === victimName).length} stored by ${victimName}`);
  });

  for (const lazy of [false, true]) {
    const which = lazy ? 'a lazy upstream not started on the others (its tools known from the store)' : 'an upstream running on every instance';
    test(`${which}: its tools/list_changed on one instance reaches the listeners of every instance, and each lists the new tool`, async (t) => {
      // Each instance runs its own copy of the upstream; their tool list is one
      // file, and only the copy that grew it says list_changed.
      const list = path.join(makeTempDir('toolmux-shared-list-'), 'tools.txt');
      const env = { TOOLMUX_E2E_SHARED_LIST: list };
      const catalog = lazy ? LAZY_UPSTREAM_CATALOG : UPSTREAM_CATALOG;
      const database = await pg.createdb();
      if (lazy) {
        // One instance before them lists it into the store: then none of
        // them starts it to learn its tools.
        const first = await HttpServer.start(t, { catalog, args: ['--store', 'postgresql'], env: { ...env, TOOLMUX_POSTGRES_URL: database } });
        await first.waitForLog((l) => l.event === 'upstream_tools_changed' && l.upstream === 'shared', 10000);
        await first.kill();
      }
      const fanned = await Cluster.start(t, { catalog, files: FILES, store: 'postgresql', database, env });
      const started = (server) => server.logs.some((l) => l.event === 'upstream_started' && l.upstream === 'shared');
      const direct = await Promise.all(fanned.instances.map((server) => connectModern(t, server.url)));
      const upstreamTools = async (record) => toolNames((await record.client.listTools({}, { cacheMode: 'bypass' })).tools).filter((name) => name.startsWith('shared_'));
      for (const record of direct) assert.deepEqual(await upstreamTools(record), ['shared_grow']);
      assert.deepEqual(fanned.instances.map(started), [!lazy, !lazy, !lazy]);
      // Listeners on every instance: a 2026-07-28 subscriptions/listen and a
      // 1.x client's session (its GET stream).
      const listeners = await listenOnEvery(t, fanned);
      const legacy = await Promise.all(fanned.instances.map((server) => connectHttp(t, server.url)));
      const told = legacy.map(() => 0);
      legacy.forEach((session, i) => session.client.setNotificationHandler(ToolListChangedNotificationSchema, () => (told[i] += 1)));

      const grew = await direct[0].client.callTool({ name: 'shared_grow', arguments: { name: 'fresh' } });
      assert.equal(textOf(grew), 'grew fresh', short(grew));
      for (const [i, reader] of listeners.entries()) {
        await reader.waitFor((e) => e.message?.method === 'notifications/tools/list_changed', 5000, `list_changed on ${fanned.instances[i].name}'s listen`);
      }
      await waitUntil(() => told.every((n) => n > 0), 5000, `list_changed on every legacy session (told: ${told})`);
      for (const record of direct) assert.deepEqual(await upstreamTools(record), ['shared_fresh', 'shared_grow']);
      // A lazy copy elsewhere took the list from the store, not started.
      assert.deepEqual(fanned.instances.map(started), [true, !lazy, !lazy]);
      for (const [i, record] of direct.entries()) {
        const called = await record.client.callTool({ name: 'shared_fresh', arguments: {} });
        assert.equal(textOf(called), 'fresh here', `${fanned.instances[i].name}: ${short(called)}`);
      }
      // The others took the new list because they were told: their copies said nothing.
      for (const server of fanned.instances.slice(1)) {
        assert.ok(server.logs.some((l) => l.event === 'upstream_tools_changed' && l.upstream === 'shared' && l.tools === 2), `${server.name} did not list the upstream again`);
      }
    });
  }
});

test('the HAProxy configurations of examples/haproxy/ are valid as written (haproxy -c)', async () => {
  const dir = path.dirname(HAPROXY_LEGACY_SESSIONS);
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.cfg'));
  assert.deepEqual(files.sort(), ['haproxy.cfg', 'legacy-sessions.cfg']);
  for (const file of files) {
    const { stdout, stderr } = await execFileAsync('haproxy', ['-c', '-f', path.join(dir, file)]);
    assert.match(`${stdout}${stderr}`, /Configuration file is valid/, file);
    assert.doesNotMatch(`${stdout}${stderr}`, /WARNING/, file);
  }
});

describe('teardown', () => {
  /** Whether a process is gone (or a zombie, which no longer runs). */
  const gone = (pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z');
    } catch {
      return true;
    }
  };

  test('a test process killed with its cluster and PostgreSQL running leaves no process and no folder', async () => {
    // A child node process starts a cluster and a PostgreSQL server, prints
    // what it made, and is killed with SIGKILL: its watchdog cleans up.
    const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'cluster.mjs');
    const code = `
      import { Cluster, Postgres } from ${JSON.stringify(script)};
      const pg = await Postgres.start(null);
      const cluster = await Cluster.start(null, { instances: 2 });
      console.log(JSON.stringify({ dirs: [cluster.dir, pg.parent], pids: [...cluster.pids().instances, ...cluster.pids().haproxy, ...pg.pids()] }));
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    await waitUntil(() => out.includes('\n') || child.exitCode !== null, 60000, 'the child to start its cluster');
    const made = JSON.parse(out);
    assert.ok(made.pids.length >= 4, out);
    assert.ok(made.dirs.every((d) => fs.existsSync(d)), out);
    child.kill('SIGKILL');
    await waitUntil(() => made.pids.every(gone) && made.dirs.every((d) => !fs.existsSync(d)), 20000, `pids ${made.pids} gone and ${made.dirs} removed`);
  });

  test('close() stops every process and removes the folders', async () => {
    const cluster = await Cluster.start(null, { instances: 2 });
    const pids = [...cluster.pids().instances, ...cluster.pids().haproxy];
    await cluster.close();
    assert.ok(pids.every(gone), `still running: ${pids.filter((p) => !gone(p))}`);
    assert.ok(!fs.existsSync(cluster.dir));
    await sleep(0);
  });
});
