// Restarts on the same --data-dir (SIGTERM and kill -9): a restored session
// still sees its offloaded results as resources, and a call killed with its
// SSE stream open leaves a session that works and a stream that ends cleanly
// when resumed.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  HttpServer,
  SseReader,
  connectHttp,
  makeRoot,
  parseOffloadNotice,
  rawInitialize,
  rawPost,
  sessionHeaders,
  short,
  sleep,
  textOf,
} from './helpers.mjs';
import { CATALOG, assertSameText, blockText, kill9, readResource } from './crash_helpers.mjs';

test('after a restart, a restored session lists and reads its results as resources before anything else opens the store', async (t) => {
  for (const how of ['SIGTERM', 'SIGKILL']) {
    const root = makeRoot({});
    const first = await HttpServer.start(t, { catalog: CATALOG, root });
    const a = await connectHttp(t, first.url);
    const result = await a.client.callTool({ name: 'gen_block', arguments: { count: 5000 } });
    const id = parseOffloadNotice(textOf(result)).id;
    await a.close();
    if (how === 'SIGKILL') await kill9(first);
    else await first.stopCleanly(assert);

    const second = await HttpServer.start(t, { catalog: CATALOG, root, dataDir: first.dataDir });
    const again = await connectHttp(t, second.url, { sessionId: a.transport.sessionId });
    const listed = (await again.client.listResources()).resources.map((r) => r.uri);
    assert.deepEqual(listed, [`toolmux://results/${id}`], `after ${how}`);
    assertSameText(await readResource(again.client, id), blockText(5000), `after ${how}`);
    await second.stopCleanly(assert);
  }
});


test('kill -9 during an HTTP call with its SSE stream open: the session works after the restart, and the stream ends cleanly when resumed', async (t) => {
  const root = makeRoot({});
  const server = await HttpServer.start(t, { catalog: CATALOG, root });
  const id = await rawInitialize(server.url);
  const headers = sessionHeaders(id);
  // One offloaded result acknowledged before the kill.
  const stored = await rawPost(server.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'gen_block', arguments: { count: 5000 } } }, headers);
  const storedId = parseOffloadNotice((await stored.json()).result.content[0].text).id;
  const call = await SseReader.post(
    server.url,
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow_call', arguments: {}, _meta: { progressToken: 'p' } } },
    headers,
  );
  assert.equal(call.response.headers.get('content-type'), 'text/event-stream');
  const progress = await call.reader.waitFor((e) => e.message?.method === 'notifications/progress', 5000, 'progress');
  await kill9(server);
  await call.reader.ended; // the connection drops with the process
  for (const event of call.reader.events) if (event.data) JSON.parse(event.data); // no event cut in half

  const again = await HttpServer.start(t, { catalog: CATALOG, root, dataDir: server.dataDir });
  // The stream resumed after its last event: it ends, without a response
  // (the call died with the process) and without hanging.
  const resumed = await SseReader.get(again.url, { ...headers, 'last-event-id': progress.id });
  assert.equal(resumed.response.status, 200);
  const ended = await Promise.race([resumed.reader.ended.then(() => true), sleep(10000).then(() => false)]);
  assert.ok(ended, `the resumed stream of a call that died with the server stays open: ${short(resumed.reader.events)}`);
  for (const message of resumed.reader.messages()) assert.notEqual(message.id, 2, `a response to the killed call: ${short(message)}`);

  // The session goes on: its result, a new call of the same tool.
  const client = (await connectHttp(t, again.url, { sessionId: id })).client;
  assertSameText(await readResource(client, storedId), blockText(5000), 'the result stored before the kill');
  const retry = await client.callTool({ name: 'slow_call', arguments: {} });
  assert.equal(textOf(retry), 'finished\n');
  await again.stopCleanly(assert);
});
