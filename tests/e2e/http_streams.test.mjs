// Streamable HTTP streams: list_changed on the session's own GET stream and
// only there (discovery in one session leaves the others alone), requests
// answered promptly with many GET streams open, and resumption with
// Last-Event-ID, which replays the missed events of that one stream.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  HTTP_CATALOG,
  HttpServer,
  SseReader,
  connectHttp,
  rawGetStatus,
  rawInitialize,
  rawPost,
  searchRequest,
  sessionHeaders,
  sleep,
  toolNames,
  waitUntil,
} from './helpers.mjs';


test("discovery over HTTP: a search in session A changes A's list (list_changed on A's stream), not B's", async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const [a, b] = await Promise.all([connectHttp(t, server.url), connectHttp(t, server.url)]);
  const changes = { a: 0, b: 0 };
  a.client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changes.a += 1; });
  b.client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changes.b += 1; });
  const before = toolNames((await b.client.listTools()).tools);
  assert.deepEqual(toolNames((await a.client.listTools()).tools), before);

  const result = await a.client.callTool({ name: 'tool_search', arguments: { query: 'read the lines of a text file', limit: 2 } });
  const found = result.structuredContent.tools.map((tool) => tool.name);
  assert.ok(found.includes('read_text_file'), found.join(', '));
  await waitUntil(() => changes.a > 0, 3000, "list_changed in A's session");
  const listedA = toolNames((await a.client.listTools()).tools);
  for (const name of found) assert.ok(listedA.includes(name), `${name} missing from A's list ${listedA}`);
  assert.equal(changes.a, 1, 'one notification for the burst');

  await sleep(300);
  assert.equal(changes.b, 0, 'B got a list_changed');
  assert.ok(!b.received.some((m) => m.method === 'notifications/tools/list_changed'));
  assert.deepEqual(toolNames((await b.client.listTools()).tools), before);
});

test('with 200 GET streams open, a POST is answered in under a second', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const ids = [];
  for (let i = 0; i < 200; i += 20) {
    ids.push(...(await Promise.all(Array.from({ length: 20 }, () => rawInitialize(server.url)))));
  }
  const streams = await Promise.all(ids.map((id) => SseReader.get(server.url, sessionHeaders(id))));
  t.after(() => Promise.all(streams.map((s) => s.reader?.close())));
  for (const { response } of streams) assert.equal(response.status, 200);
  // Every stream is primed (its first event carries an id to resume from).
  await waitUntil(() => streams.every((s) => s.reader.events.length > 0), 5000, 'every stream primed');
  const metrics = await (await fetch(`${server.origin}/metrics`)).text();
  assert.match(metrics, /^toolmux_http_streams 200$/m);

  for (const id of [ids[0], ids[199]]) {
    const start = performance.now();
    const response = await rawPost(server.url, { jsonrpc: '2.0', id: 'p', method: 'ping' }, sessionHeaders(id));
    const body = await response.json();
    const ms = performance.now() - start;
    assert.equal(response.status, 200);
    assert.deepEqual(body.result, {});
    assert.ok(ms < 1000, `ping took ${ms} ms with 200 streams open`);
  }
  // A second GET on a session whose stream is open is refused.
  assert.equal(await rawGetStatus(server.url, sessionHeaders(ids[5])), 409);
});

test('Last-Event-ID on the GET stream replays the events missed on that stream only', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const id = await rawInitialize(server.url);
  const headers = sessionHeaders(id);

  const first = await SseReader.get(server.url, headers);
  assert.equal(first.response.status, 200);
  const primed = await first.reader.waitFor((e) => e.id !== undefined);
  assert.equal(primed.data, '');
  assert.match(primed.id, /^0-\d+$/);
  assert.ok(primed.retry > 0, 'the priming event says when to reconnect');
  const answer = await rawPost(server.url, searchRequest(1, 'read the lines of a text file'), headers);
  assert.equal(answer.status, 200);
  await answer.json();
  const change1 = await first.reader.waitFor((e) => e.message?.method === 'notifications/tools/list_changed');
  await first.reader.close();

  // While no stream is open: a call whose progress goes on its own stream, and another change.
  const call = await SseReader.post(
    server.url,
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow_call', arguments: {}, _meta: { progressToken: 'tok' } } },
    headers,
  );
  assert.match(call.response.headers.get('content-type'), /^text\/event-stream/);
  await call.reader.ended;
  const callMessages = call.reader.messages();
  assert.ok(callMessages.some((m) => m.method === 'notifications/progress'), JSON.stringify(callMessages));
  assert.equal(callMessages.at(-1).id, 2);
  const another = await rawPost(server.url, searchRequest(3, 'get file size and modification time'), headers);
  const found = (await another.json()).result.structuredContent.tools.map((tool) => tool.name);
  assert.ok(found.length > 0);
  await sleep(300); // the list_changed of the burst is sent after 50 ms

  const resumed = await SseReader.get(server.url, { ...headers, 'last-event-id': change1.id });
  assert.equal(resumed.response.status, 200);
  await resumed.reader.waitFor((e) => e.message?.method === 'notifications/tools/list_changed');
  await sleep(300);
  const replayed = resumed.reader.messages();
  assert.deepEqual(replayed.map((m) => m.method), ['notifications/tools/list_changed'], JSON.stringify(replayed));
  const [, seq1] = change1.id.split('-').map(Number);
  for (const e of resumed.reader.events.filter((x) => x.data)) {
    const [stream, seq] = e.id.split('-').map(Number);
    assert.equal(stream, 0, `an event of stream ${stream} on the GET stream`);
    assert.ok(seq > seq1, `event ${e.id} was not missed (last seen ${change1.id})`);
  }
  await resumed.reader.close();

  // From the priming id: both changes.
  const fromStart = await SseReader.get(server.url, { ...headers, 'last-event-id': primed.id });
  await waitUntil(() => fromStart.reader.messages().length >= 2, 3000, 'two list_changed');
  await sleep(200);
  assert.deepEqual(fromStart.reader.messages().map((m) => m.method), [
    'notifications/tools/list_changed',
    'notifications/tools/list_changed',
  ]);
  await fromStart.reader.close();

  // An id that names no stream of this session.
  assert.equal(await rawGetStatus(server.url, { ...headers, 'last-event-id': '999999-999999' }), 400);
});

test("Last-Event-ID on a call's stream replays what was missed there, up to the response", async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const id = await rawInitialize(server.url);
  const headers = sessionHeaders(id);
  const call = await SseReader.post(
    server.url,
    { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow_call', arguments: {}, _meta: { progressToken: 'p' } } },
    headers,
  );
  assert.equal(call.response.status, 200);
  assert.match(call.response.headers.get('content-type'), /^text\/event-stream/);
  const progress = await call.reader.waitFor((e) => e.message?.method === 'notifications/progress', 5000);
  await call.reader.close(); // the connection drops mid-call

  // A list_changed on the session's own stream meanwhile must not show up on the call's.
  const changed = await rawPost(server.url, searchRequest(8, 'read the lines of a text file'), headers);
  await changed.json();

  const resumed = await SseReader.get(server.url, { ...headers, 'last-event-id': progress.id });
  assert.equal(resumed.response.status, 200);
  await resumed.reader.ended; // the stream ends with the response
  const messages = resumed.reader.messages();
  assert.equal(messages.at(-1).id, 7, JSON.stringify(messages));
  assert.equal(messages.at(-1).result.content[0].text, 'finished\n');
  for (const m of messages.slice(0, -1)) assert.equal(m.method, 'notifications/progress', JSON.stringify(m));
  const [stream, seq] = progress.id.split('-').map(Number);
  for (const e of resumed.reader.events.filter((x) => x.data)) {
    const [s, n] = e.id.split('-').map(Number);
    assert.equal(s, stream);
    assert.ok(n > seq);
  }
});
