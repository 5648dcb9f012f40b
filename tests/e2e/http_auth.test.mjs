// Bearer tokens over Streamable HTTP: tokens from a file (--tokens-file) or
// the environment (TOOLMUX_TOKENS), each naming a principal; no token or a
// wrong one is 401 with WWW-Authenticate; a session belongs to the principal
// that created it (another principal's token gets 404 for it); access rules
// apply per principal.
//
// tests/data/e2e/http/tokens.txt holds alice's and bob's tokens; the catalog
// denies bob gen_chars.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import {
  DATA_DIR,
  HTTP_CATALOG,
  HttpServer,
  connectHttp,
  genCharsText,
  pingRequest,
  rawGetStatus,
  rawInitialize,
  rawPost,
  sessionHeaders,
  short,
  textOf,
} from './helpers.mjs';

const TOKENS = path.join(DATA_DIR, 'http', 'tokens.txt');
const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef';
const bearer = (token) => ({ authorization: `Bearer ${token}` });

test('with a tokens file: no token or a wrong one is 401 with WWW-Authenticate; the right one works', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG, args: ['--tokens-file', TOKENS, '--max-message-bytes', '4096'] });
  assert.ok(server.logs.some((l) => l.event === 'serving' && l.auth === 'bearer'), server.stderr);

  for (const [what, headers] of [
    ['no token', {}],
    ['a wrong token', bearer('not-a-token-of-anyone-at-all')],
    ['a prefix of a token', bearer(ALICE.slice(0, -1))],
    ['another scheme', { authorization: `Basic ${ALICE}` }],
  ]) {
    const response = await rawPost(server.url, pingRequest(), headers);
    assert.equal(response.status, 401, `${what}: ${response.status}`);
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer\b/, what);
    await response.text();
  }
  assert.equal(await rawGetStatus(server.url), 401);
  // Without a token, a body over the limit says nothing about the limit.
  const big = await rawPost(server.url, { jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(10000) } });
  assert.equal(big.status, 401);
  await big.text();
  await assert.rejects(connectHttp(t, server.url), /401|Unauthorized/);

  // The SDK client with a token in requestInit.
  const alice = await connectHttp(t, server.url, { headers: bearer(ALICE) });
  assert.equal(textOf(await alice.client.callTool({ name: 'gen_chars', arguments: { count: 5 } })), genCharsText(5));
  await alice.client.ping();

  // /metrics needs a token too; /health does not (probes).
  const metricsWithout = await fetch(`${server.origin}/metrics`);
  assert.equal(metricsWithout.status, 401);
  await metricsWithout.text();
  const metricsWith = await fetch(`${server.origin}/metrics`, { headers: bearer(BOB) });
  assert.equal(metricsWith.status, 200);
  assert.match(await metricsWith.text(), /^toolmux_http_sessions 1$/m);
  assert.equal((await fetch(`${server.origin}/health`)).status, 200);
  await server.stopCleanly(assert);
});

test("a session belongs to its principal: another principal's token gets 404 for it", async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG, args: ['--tokens-file', TOKENS] });
  const alice = await connectHttp(t, server.url, { headers: bearer(ALICE) });
  const sessionId = alice.transport.sessionId;
  const asBob = { ...bearer(BOB), ...sessionHeaders(sessionId) };

  const post = await rawPost(server.url, pingRequest(), asBob);
  assert.equal(post.status, 404);
  await post.text();
  assert.equal(await rawGetStatus(server.url, asBob), 404);
  const del = await fetch(server.url, { method: 'DELETE', headers: asBob });
  assert.equal(del.status, 404);
  await del.text();
  // The SDK client given bob's token and alice's session id.
  const bobInAlice = await connectHttp(t, server.url, { headers: bearer(BOB), sessionId });
  await assert.rejects(bobInAlice.client.listTools(), /404|Not Found/);

  // Bob's DELETE did not end it: alice goes on.
  await alice.client.ping();
  // Bob's own session works, under his access rules.
  const bob = await connectHttp(t, server.url, { headers: bearer(BOB) });
  const tools = (await bob.client.listTools()).tools.map((tool) => tool.name);
  assert.ok(!tools.includes('gen_chars'), `bob is shown gen_chars: ${tools}`);
  const denied = await bob.client.callTool({ name: 'gen_chars', arguments: { count: 1 } });
  assert.equal(denied.isError, true, short(denied));
  assert.match(textOf(denied), /denied by \/policy\/access\/bob\/deny\/0/);
  const allowed = await alice.client.callTool({ name: 'gen_chars', arguments: { count: 1 } });
  assert.equal(textOf(allowed), genCharsText(1));
});

test('tokens from TOOLMUX_TOKENS (comma separated) work like a file', async (t) => {
  const server = await HttpServer.start(t, {
    catalog: HTTP_CATALOG,
    env: { TOOLMUX_TOKENS: `carol=carol-token-0123456789abcdef, dave=dave-token-0123456789abcdef` },
  });
  const sessionId = await rawInitialize(server.url, bearer('dave-token-0123456789abcdef'));
  const carol = await connectHttp(t, server.url, { headers: bearer('carol-token-0123456789abcdef') });
  await carol.client.ping();
  const asCarol = { ...bearer('carol-token-0123456789abcdef'), 'mcp-session-id': sessionId };
  const response = await rawPost(server.url, pingRequest(), asCarol);
  assert.equal(response.status, 404);
  await response.text();
  const unauthorized = await rawPost(server.url, pingRequest(), { 'mcp-session-id': sessionId });
  assert.equal(unauthorized.status, 401);
  await unauthorized.text();
});

test('a malformed token entry or a short token stops serve with exit 2', async (t) => {
  for (const tokens of ['alice', 'alice=short']) {
    const server = new HttpServer({ args: [], env: { TOOLMUX_TOKENS: tokens } });
    t.after(() => server.kill());
    const exit = await server.exited;
    assert.equal(exit.code, 2, `${tokens}: ${JSON.stringify(exit)}`);
    assert.match(server.stderr, /TOOLMUX_TOKENS/);
  }
});
