// Sessions outlive a restart of the server on the same --data-dir (the
// session store): the SDK client goes on with its session id, its discovered
// tools and offloaded results; a client that lost its streams gets the events
// it missed with Last-Event-ID, from the store.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  HTTP_CATALOG,
  HTTP_PINNED,
  HttpServer,
  SseReader,
  connectHttp,
  expectResultRefused,
  genCharsText,
  makeRoot,
  pingRequest,
  offloadChars,
  rawInitialize,
  rawPost,
  readStoredResult,
  searchRequest,
  sessionHeaders,
  sleep,
  toolNames,
  waitUntil,
  textOf,
} from './helpers.mjs';


test('a session survives a restart on the same --data-dir: its results and discovered tools', async (t) => {
  const root = makeRoot({ 'notes.txt': 'one\n' });
  const first = await HttpServer.start(t, { catalog: HTTP_CATALOG, root });
  const a = await connectHttp(t, first.url);
  const sessionId = a.transport.sessionId;
  const search = await a.client.callTool({ name: 'tool_search', arguments: { query: 'read the lines of a text file', limit: 2 } });
  const found = search.structuredContent.tools.map((tool) => tool.name);
  assert.ok(found.includes('read_text_file'), found.join(', '));
  await waitUntil(() => a.received.some((m) => m.method === 'notifications/tools/list_changed'), 3000, 'list_changed');
  const listedBefore = toolNames((await a.client.listTools()).tools);
  const id = await offloadChars(assert, a.client, 6000);
  await a.close(); // the client goes away without ending its session

  await first.stopCleanly(assert);
  const second = await HttpServer.start(t, { catalog: HTTP_CATALOG, root, dataDir: first.dataDir });
  assert.ok(second.logs.some((l) => l.event === 'sessions_restored' && l.sessions === 1), second.stderr);
  const again = await connectHttp(t, second.url, { sessionId });
  assert.deepEqual(toolNames((await again.client.listTools()).tools), listedBefore);
  for (const name of found) assert.ok(listedBefore.includes(name), `${name} missing from ${listedBefore}`);
  assert.equal((await readStoredResult(assert, again.client, id)).text, genCharsText(6000));
  const call = await again.client.callTool({ name: 'read_text_file', arguments: { path: 'notes.txt' } });
  assert.equal(textOf(call), 'one\n');

  // A new session on the restarted server has its own list and cannot read the old result.
  const fresh = await connectHttp(t, second.url);
  assert.deepEqual(toolNames((await fresh.client.listTools()).tools), HTTP_PINNED);
  await expectResultRefused(assert, fresh.client, id);
  await second.stopCleanly(assert);
});

test('missed events outlive a restart: Last-Event-ID replays them from the session store', async (t) => {
  const first = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const id = await rawInitialize(first.url);
  const headers = sessionHeaders(id);
  const primed = await SseReader.get(first.url, headers);
  const priming = await primed.reader.waitFor((e) => e.id !== undefined);
  await primed.reader.close();
  // A list_changed while no stream is open, and a call whose stream drops after its first progress.
  const answer = await rawPost(first.url, searchRequest(1, 'read the lines of a text file'), headers);
  await answer.json();
  const call = await SseReader.post(
    first.url,
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow_call', arguments: {}, _meta: { progressToken: 'p' } } },
    headers,
  );
  const progress = await call.reader.waitFor((e) => e.message?.method === 'notifications/progress', 5000);
  await call.reader.close();
  await sleep(2500); // the call finishes while its client is away
  await first.stopCleanly(assert);

  const second = await HttpServer.start(t, { catalog: HTTP_CATALOG, dataDir: first.dataDir });
  const zero = await SseReader.get(second.url, { ...headers, 'last-event-id': priming.id });
  assert.equal(zero.response.status, 200);
  await zero.reader.waitFor((e) => e.message?.method === 'notifications/tools/list_changed');
  await sleep(200);
  assert.deepEqual(zero.reader.messages().map((m) => m.method), ['notifications/tools/list_changed']);
  await zero.reader.close();

  const rest = await SseReader.get(second.url, { ...headers, 'last-event-id': progress.id });
  assert.equal(rest.response.status, 200);
  await rest.reader.ended; // the stored stream ends with its response
  const messages = rest.reader.messages();
  assert.equal(messages.at(-1).id, 2, JSON.stringify(messages));
  assert.equal(messages.at(-1).result.content[0].text, 'finished\n');
  await second.stopCleanly(assert);
});

test('a session restored after a restart is told when the catalog is reloaded', async (t) => {
  const dir = makeRoot({});
  const catalog = path.join(dir, 'catalog.json');
  const document = JSON.parse(fs.readFileSync(HTTP_CATALOG, 'utf8'));
  fs.writeFileSync(catalog, JSON.stringify(document));
  const first = await HttpServer.start(t, { catalog, root: dir });
  const a = await connectHttp(t, first.url);
  const sessionId = a.transport.sessionId;
  await a.close();
  await first.stopCleanly(assert);

  const second = await HttpServer.start(t, { catalog, root: dir, dataDir: first.dataDir });
  // Its first request here, then its own stream.
  const ping = await rawPost(second.url, pingRequest(), sessionHeaders(sessionId));
  assert.equal(ping.status, 200);
  const { reader } = await SseReader.get(second.url, sessionHeaders(sessionId));
  assert.ok(reader, 'the GET stream opens');
  t.after(() => reader.close());
  fs.writeFileSync(catalog, JSON.stringify({ ...document, $comment: 'edited while serving' }));
  await reader.waitFor((event) => event.data?.includes('notifications/tools/list_changed'), 10000, 'list_changed after the reload');
  assert.ok(second.logs.some((l) => l.event === 'catalog_reloaded'), second.stderr);
  reader.close();
  await second.stopCleanly(assert);
});
