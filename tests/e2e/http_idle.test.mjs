// Idle sessions over Streamable HTTP (--session-idle): a session nobody uses
// ends (its id then gets 404); one whose client keeps its GET stream open,
// waiting quietly for notifications, does not. The sweep runs every 5 s, so
// this file takes that long.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { HTTP_CATALOG, HttpServer, connectHttp, pingRequest, rawInitialize, rawPost, sessionHeaders, waitUntil } from './helpers.mjs';

test('--session-idle ends an unused session; an open GET stream keeps its session', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG, args: ['--session-idle', '1'] });
  const listening = await connectHttp(t, server.url); // the SDK opens its GET stream after initialize
  const quiet = await rawInitialize(server.url); // no stream
  await waitUntil(() => server.logs.some((l) => l.event === 'session_ended' && l.why === 'idle'), 8000, 'an idle session to end');
  await new Promise((resolve) => setTimeout(resolve, 200));

  const response = await rawPost(server.url, pingRequest(), sessionHeaders(quiet));
  assert.equal(response.status, 404);
  await response.text();
  assert.equal(server.logs.filter((l) => l.event === 'session_ended').length, 1, server.stderr);
  await listening.client.ping();
  assert.deepEqual(listening.errors, []);
});
