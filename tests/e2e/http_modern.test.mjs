// Streamable HTTP in the 2026-07-28 protocol (`toolmux serve --http`), seen by
// the official v2 client (@modelcontextprotocol/client 2.4.0) pinned to
// 2026-07-28: no session, tools listed and called, an offloaded result read
// back page by page over separate requests (it belongs to the principal, not
// to a session), a legacy 1.x client on the same endpoint at the same time,
// an aborted call cancelled by its closed stream, tool_search and a found tool
// called by name, and a native tool's elicitation through MRTR (input_required
// and the retry) with a tampered requestState refused.
//
// The catalog (tests/data/e2e/http/catalog.json) has discovery on, with
// gen_chars and two sleepers pinned, and offloads results over 8192 bytes.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';

import {
  DATA_DIR,
  HTTP_CATALOG,
  HTTP_PINNED,
  HttpServer,
  connectHttp,
  genCharsText,
  offloadChars,
  parseOffloadNotice,
  rawPost,
  readStoredResult,
  startExampleHttp,
  textOf,
  toolNames,
  short,
} from './helpers.mjs';

/** The v2 client pinned to 2026-07-28 over Streamable HTTP; closed after the test. */
async function connectModern(t, url) {
  const transport = new ModernTransport(new URL(url));
  const client = new ModernClient(
    { name: 'toolmux-e2e-modern', version: '0.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  t.after(() => client.close().catch(() => {}));
  await client.connect(transport);
  return { client, transport };
}

/** The value of the gauge `name` in /metrics. */
async function gauge(server, name) {
  const text = await (await fetch(`${server.origin}/metrics`)).text();
  const match = text.match(new RegExp(`^${name} (\\d+)$`, 'm'));
  assert.ok(match, `${name} not in /metrics:\n${text}`);
  return Number(match[1]);
}

test('the v2 client pinned to 2026-07-28 lists the tools and calls one, with no session', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const { client, transport } = await connectModern(t, server.url);
  assert.equal(transport.sessionId, undefined, 'a session id was minted');
  const { tools } = await client.listTools();
  assert.deepEqual(toolNames(tools), HTTP_PINNED);
  const result = await client.callTool({ name: 'gen_chars', arguments: { count: 12 } });
  assert.notEqual(result.isError, true, short(result));
  assert.equal(textOf(result), genCharsText(12));
  assert.equal(await gauge(server, 'toolmux_http_sessions'), 0);
});

test('a modern client reads its offloaded result back page by page, request after request', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const { client } = await connectModern(t, server.url);
  const count = 12000;
  const id = await offloadChars(assert, client, count);
  // Each page is a request of its own: the result is the principal's, not a session's.
  const read = await readStoredResult(assert, client, id, { maxChars: 5000 });
  assert.equal(read.pages, 3);
  assert.ok(read.text === genCharsText(count), `read back ${read.totalChars} characters, not the ${count} made`);
});

test('a legacy 1.x client and a modern client on one endpoint at once', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const legacy = await connectHttp(t, server.url);
  const modern = await connectModern(t, server.url);
  assert.ok(legacy.transport.sessionId, 'the legacy client has no session');
  const [legacyCall, modernCall, legacyList, modernList] = await Promise.all([
    legacy.client.callTool({ name: 'slow_call', arguments: {} }),
    modern.client.callTool({ name: 'slow_call', arguments: {} }),
    legacy.client.listTools(),
    modern.client.listTools(),
  ]);
  assert.equal(textOf(legacyCall).trim(), 'finished', short(legacyCall));
  assert.equal(textOf(modernCall).trim(), 'finished', short(modernCall));
  assert.deepEqual(toolNames(legacyList.tools), HTTP_PINNED);
  assert.deepEqual(toolNames(modernList.tools), HTTP_PINNED);
  // One session: the legacy client's.
  assert.equal(await gauge(server, 'toolmux_http_sessions'), 1);
  // Its session goes on after the modern client's requests.
  const again = await legacy.client.callTool({ name: 'gen_chars', arguments: { count: 3 } });
  assert.equal(textOf(again), genCharsText(3));
});

test("a modern call aborted by its client is cancelled: its stream's closing is the signal", async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const { client } = await connectModern(t, server.url);
  const controller = new AbortController();
  const call = client.callTool({ name: 'sleep_long', arguments: {} }, { signal: controller.signal });
  setTimeout(() => controller.abort(), 500);
  await assert.rejects(call);
  // sleep_long sleeps 30 s: cancelled, it ends long before.
  const record = await server.waitForLog((l) => l.event === 'tool_call' && l.tool === 'sleep_long', 15000);
  assert.equal(record.outcome, 'cancelled', JSON.stringify(record));
  assert.ok(record.duration_ms < 20000, JSON.stringify(record));
});

test('over HTTP, tool_search finds a tool that is not listed, and the modern client calls it by name', async (t) => {
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG });
  const { client } = await connectModern(t, server.url);
  const search = await client.callTool({ name: 'tool_search', arguments: { query: 'list the files in a directory', limit: 3 } });
  const found = search.structuredContent.tools.map((tool) => tool.name);
  assert.ok(found.includes('list_directory'), found.join(', '));
  assert.ok(!toolNames((await client.listTools()).tools).includes('list_directory'), 'the list grew');
  const listing = await client.callTool({ name: 'list_directory', arguments: { path: '.' } });
  assert.notEqual(listing.isError, true, short(listing));
});

test("over HTTP, a native tool's elicitation is answered through input_required, and a tampered requestState is refused", async (t) => {
  const url = await startExampleHttp(t);
  const asked = [];
  const transport = new ModernTransport(new URL(url));
  const client = new ModernClient(
    { name: 'toolmux-e2e-modern', version: '0.0.0' },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { username: 'lin', email: 'lin@example.com' } };
  });
  t.after(() => client.close().catch(() => {}));
  await client.connect(transport);
  const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Name?' } });
  assert.notEqual(result.isError, true, short(result));
  assert.match(textOf(result), /"username":"lin"/);
  assert.equal(asked.length, 1);

  // The same round trip by hand, with the state changed on the way back.
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
  };
  const headers = { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'test_elicitation' };
  const params = { name: 'test_elicitation', arguments: { message: 'Name?' }, _meta: meta };
  const first = await (await rawPost(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params }, headers)).json();
  assert.equal(first.result.resultType, 'input_required', JSON.stringify(first));
  const [key] = Object.keys(first.result.inputRequests);
  const tampered = await rawPost(url, {
    jsonrpc: '2.0', id: 2, method: 'tools/call',
    params: { ...params, inputResponses: { [key]: { action: 'decline' } }, requestState: `${first.result.requestState}x` },
  }, headers);
  const body = await tampered.json();
  assert.equal(body.error?.code, -32602, JSON.stringify(body));
  assert.match(body.error.message, /requestState/);
});

test("a modern request's offloaded result is its principal's: another principal gets the answer of an id that never existed", async (t) => {
  const tokens = path.join(DATA_DIR, 'http', 'tokens.txt');
  const server = await HttpServer.start(t, { catalog: HTTP_CATALOG, args: ['--tokens-file', tokens] });
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const call = async (token, id, name, args) => {
    const response = await rawPost(server.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: meta } }, {
      authorization: `Bearer ${token}`, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': name,
    });
    assert.equal(response.status, 200);
    return (await response.json()).result;
  };
  const alice = 'alice-token-0123456789abcdef';
  const bob = 'bob-token-0123456789abcdef';
  const big = await call(alice, 1, 'gen_chars', { count: 9000 });
  const notice = parseOffloadNotice(big.content.find((b) => b.type === 'text').text);
  assert.ok(notice, short(big));
  const own = await call(alice, 2, 'read_tool_result', { result_id: notice.id, offset: 0 });
  assert.notEqual(own.isError, true, short(own));
  const other = await call(bob, 3, 'read_tool_result', { result_id: notice.id, offset: 0 });
  const none = await call(bob, 4, 'read_tool_result', { result_id: 'A'.repeat(43), offset: 0 });
  assert.equal(other.isError, true);
  assert.equal(textOf(other).replace(notice.id, 'ID'), textOf(none).replace('A'.repeat(43), 'ID'));
});
