// kill -9 of an HTTP call with its SSE stream open, then a restart on the
// same --data-dir: the session works, and the stream ends cleanly when
// resumed.

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
