// Instances that share one PostgreSQL store tell each other what changed
// (LISTEN/NOTIFY, src/store/cluster_bus.h): the write freeze switched with
// `toolmux freeze --store postgresql`, and a legacy session deleted through
// another instance. Each instance is reached directly here (no proxy), so
// that the test says which one saw what. A reload seen on every instance is
// in cluster.test.mjs.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';

import { clusterOnPostgres, connectModern } from './cluster.mjs';
import { DATA_DIR, SseReader, rawInitialize, rawPost, runCli, sessionHeaders, short, textOf, toolNames, waitUntil } from './helpers.mjs';

const CATALOG = path.join(DATA_DIR, 'cluster', 'catalog.json');
const FILES = { 'notes.txt': 'shared news\n' };
/**
 * The tools an instance lists now: a raw 2026-07-28 tools/list (the v2
 * client keeps a listing for its ttl, which would hide the change).
 */
async function listedNow(url) {
  const response = await rawPost(
    url,
    { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } },
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
  );
  assert.equal(response.status, 200);
  return toolNames((await response.json()).result.tools);
}

describe('news between instances on one PostgreSQL store', () => {
  let cluster;
  let env;
  clusterOnPostgres({ catalog: CATALOG, files: FILES }, (_pg, c) => {
    cluster = c;
    env = { TOOLMUX_POSTGRES_URL: c.startOptions.env.TOOLMUX_POSTGRES_URL };
  });

  test('toolmux freeze --store postgresql reaches every instance, and so does its end', async (t) => {
    const clients = [];
    for (const server of cluster.instances) clients.push(await connectModern(t, server.url));
    for (const server of cluster.instances) assert.ok((await listedNow(server.url)).includes('note_mutation'));

    const on = await runCli(['freeze', 'on', '--store', 'postgresql', '--reason', 'store migration'], { env });
    assert.equal(on.code, 0, on.stderr);
    assert.match(on.stdout, /^Write freeze on in the store at host \S+ port 5432 database \w+: every instance on it refuses every tool but read_only ones\.\n$/);
    // The connection string (a secret) is never printed.
    assert.ok(!on.stdout.includes(env.TOOLMUX_POSTGRES_URL) && !on.stderr.includes('user=toolmux'));

    for (const server of cluster.instances) {
      await waitUntil(async () => !(await listedNow(server.url)).includes('note_mutation'), 3000, `${server.name} to leave note_mutation out`);
    }
    const refused = await clients[1].client.callTool({ name: 'note_mutation', arguments: {} });
    assert.equal(refused.isError, true, short(refused));
    assert.match(textOf(refused), /store migration/);
    const reads = await clients[2].client.callTool({ name: 'gen_chars', arguments: { count: 3 } });
    assert.notEqual(reads.isError, true, short(reads));

    const status = await runCli(['freeze', 'status', '--store', 'postgresql'], { env });
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^Write freeze on in the store at .* since \d{4}-\d\d-\d\dT[\d:.]+Z: store migration\.\n$/);

    const off = await runCli(['freeze', 'off', '--store', 'postgresql'], { env });
    assert.equal(off.code, 0, off.stderr);
    for (const server of cluster.instances) {
      await waitUntil(async () => (await listedNow(server.url)).includes('note_mutation'), 3000, `${server.name} to list note_mutation again`);
    }
    const thawed = await runCli(['freeze', 'status', '--store', 'postgresql'], { env });
    assert.match(thawed.stdout, /^Write freeze off in the store at /);
  });

  test('freeze --store postgresql without a connection string says where to put one', async () => {
    const missing = await runCli(['freeze', 'status', '--store', 'postgresql'], { env: { TOOLMUX_POSTGRES_URL: '' } });
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /TOOLMUX_POSTGRES_URL/);
  });

  test('a legacy session deleted through one instance ends its stream on another at once', async (t) => {
    const [first, second] = cluster.instances;
    const id = await rawInitialize(first.url);
    // The session's own stream (GET), held open by the first instance.
    const { response, reader } = await SseReader.get(first.url, sessionHeaders(id));
    assert.equal(response.status, 200);
    t.after(() => reader.close());

    // The second instance finds the session in the store, and deletes it.
    const deleted = await fetch(second.url, { method: 'DELETE', headers: sessionHeaders(id) });
    assert.ok(deleted.status === 200 || deleted.status === 204, `DELETE answered ${deleted.status}`);

    // The first instance is told, and ends the stream without waiting for a request.
    await waitUntil(() => reader.done, 2000, "the first instance's stream of the deleted session to end");
    const later = await rawPost(first.url, { jsonrpc: '2.0', id: 5, method: 'tools/list' }, sessionHeaders(id));
    assert.equal(later.status, 404);
  });

  test("a call's stream resumed on another instance gets the answer as soon as it is stored, not at the next look", async (t) => {
    const [first, second] = cluster.instances;
    const id = await rawInitialize(first.url);
    const headers = sessionHeaders(id);
    // slow_pause reports progress after 1 s and answers at 1.5 s; a stream
    // resumed elsewhere that only looked every 2 s would see the answer
    // about 2 s after it opened.
    for (let round = 1; round <= 2; round++) {
      const call = await SseReader.post(first.url, { jsonrpc: '2.0', id: round, method: 'tools/call', params: { name: 'slow_pause', arguments: {}, _meta: { progressToken: `p${round}` } } }, headers);
      assert.equal(call.response.headers.get('content-type'), 'text/event-stream');
      const progress = await call.reader.waitFor((e) => e.message?.method === 'notifications/progress', 5000, 'progress');
      // The client loses its connection, and resumes through another instance.
      await call.reader.close();
      const opened = performance.now();
      const resumed = await SseReader.get(second.url, { ...headers, 'last-event-id': progress.id });
      assert.equal(resumed.response.status, 200);
      t.after(() => resumed.reader.close());
      const answer = await resumed.reader.waitFor((e) => e.message?.id === round, 5000, 'the answer on the resumed stream');
      const waited = performance.now() - opened;
      assert.equal(textOf(JSON.parse(answer.data).result).trim(), 'done');
      assert.ok(waited < 1200, `the answer came ${Math.round(waited)} ms after the stream was resumed on another instance`);
      await resumed.reader.ended; // the stream ends with its answer
    }
  });
});
