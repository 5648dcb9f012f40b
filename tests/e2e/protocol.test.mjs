// Lifecycle and listing over stdio with the real SDK client: initialize,
// negotiated version, capabilities, tools/list pagination, ping, logging.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { McpError } from '@modelcontextprotocol/sdk/types.js';

import {
  BUILTIN_READ_TOOLS,
  CATALOG,
  LATEST_PROTOCOL_VERSION,
  expectMcpError,
  listAllTools,
  makeRoot,
  startClient,
} from './helpers.mjs';

test('initialize: serverInfo, negotiated protocol version and capabilities', async (t) => {
  const root = makeRoot({ 'a.txt': 'a\n' });
  const { client, sent, received } = await startClient(t, { args: ['serve', '--root', root] });

  const info = client.getServerVersion();
  assert.equal(info?.name, 'toolmux');
  assert.equal(typeof info.version, 'string');
  assert.ok(info.version.length > 0, 'serverInfo.version is empty');

  const init = sent.find((m) => m.method === 'initialize');
  assert.equal(init.params.protocolVersion, LATEST_PROTOCOL_VERSION, 'the SDK offers the latest version');
  const response = received.find((m) => m.id === init.id);
  assert.ok(response?.result, `initialize response: ${JSON.stringify(response)}`);
  assert.equal(response.result.protocolVersion, LATEST_PROTOCOL_VERSION);

  const caps = client.getServerCapabilities();
  assert.ok(caps.tools, `capabilities: ${JSON.stringify(caps)}`);
  // true: a catalog reload or an upstream's change can replace the list at any time.
  assert.equal(caps.tools.listChanged, true, `capabilities.tools: ${JSON.stringify(caps.tools)}`);
  assert.ok(caps.logging, `capabilities.logging missing: ${JSON.stringify(caps)}`);
  assert.deepEqual(caps.logging, {});
});

test('tools/list default: every tool in one page, no nextCursor, valid tool entries', async (t) => {
  const root = makeRoot({});
  const { client } = await startClient(t, { args: ['serve', '--root', root, '--catalog', CATALOG] });
  const page = await client.listTools();
  assert.equal(page.nextCursor, undefined, `unexpected nextCursor ${page.nextCursor}`);
  const names = page.tools.map((tool) => tool.name);
  for (const name of [...BUILTIN_READ_TOOLS, 'echo_text', 'slow_progress', 'too_slow']) {
    assert.ok(names.includes(name), `${name} missing from tools/list: ${names}`);
  }
  assert.ok(!names.includes('write_text_file'), 'write_text_file listed without --allow-writes');
  for (const tool of page.tools) {
    assert.equal(tool.inputSchema?.type, 'object', `${tool.name}: inputSchema.type`);
    assert.equal(typeof tool.description, 'string', `${tool.name}: description`);
  }
  const echo = page.tools.find((tool) => tool.name === 'echo_text');
  assert.deepEqual(echo.inputSchema.required, ['text']);
});

test('tools/list --page-size 2: walking nextCursor yields every tool exactly once', async (t) => {
  const root = makeRoot({});
  const base = ['serve', '--root', root, '--catalog', CATALOG, '--allow-writes'];
  const full = await startClient(t, { args: base });
  const expected = (await full.client.listTools()).tools.map((tool) => tool.name).sort();
  assert.ok(expected.length >= 5, `too few tools: ${expected}`);

  const paged = await startClient(t, { args: [...base, '--page-size', '2'] });
  const names = [];
  const cursors = new Set();
  let cursor;
  let pages = 0;
  for (;;) {
    const page = await paged.client.listTools(cursor === undefined ? {} : { cursor });
    pages += 1;
    assert.ok(page.tools.length <= 2, `page ${pages} has ${page.tools.length} tools`);
    assert.ok(page.tools.length >= 1, `page ${pages} is empty`);
    names.push(...page.tools.map((tool) => tool.name));
    if (page.nextCursor === undefined) break;
    assert.equal(typeof page.nextCursor, 'string');
    assert.ok(!cursors.has(page.nextCursor), `cursor repeated: ${page.nextCursor}`);
    cursors.add(page.nextCursor);
    cursor = page.nextCursor;
    assert.ok(pages < 100, 'pagination does not end');
  }
  assert.equal(pages, Math.ceil(expected.length / 2));
  assert.equal(new Set(names).size, names.length, `a tool appears twice: ${names}`);
  assert.deepEqual([...names].sort(), expected);
  assert.deepEqual((await listAllTools(paged.client)).map((tool) => tool.name), names, 'the same walk is stable');
});

test('tools/list with a bad cursor is JSON-RPC error -32602', async (t) => {
  const root = makeRoot({});
  const { client } = await startClient(t, { args: ['serve', '--root', root, '--catalog', CATALOG, '--page-size', '2'] });
  const error = await expectMcpError(assert, client.listTools({ cursor: 'definitely-not-a-cursor' }), -32602);
  assert.ok(error instanceof McpError);
  await expectMcpError(assert, client.listTools({ cursor: '' }), -32602);
  // The server keeps serving after the error.
  const page = await client.listTools();
  assert.equal(page.tools.length, 2);
});

test('ping is answered; logging/setLevel is accepted', async (t) => {
  const root = makeRoot({ 'a.txt': 'hello\n' });
  const { client, received } = await startClient(t, { args: ['serve', '--root', root] });
  assert.deepEqual(await client.ping(), {});
  await client.setLoggingLevel('debug');
  await client.setLoggingLevel('error');
  await client.setLoggingLevel('emergency');
  // Nothing at or above "emergency" should be logged by a plain successful call.
  const before = received.length;
  const result = await client.callTool({ name: 'read_text_file', arguments: { path: 'a.txt' } });
  assert.equal(result.isError ?? false, false);
  const logs = received.slice(before).filter((m) => m.method === 'notifications/message');
  assert.deepEqual(logs, [], `notifications/message below the level: ${JSON.stringify(logs)}`);
});

test('logging/setLevel with an unknown level is invalid params (-32602), and the session goes on', async (t) => {
  const root = makeRoot({});
  const { client } = await startClient(t, { args: ['serve', '--root', root] });
  await expectMcpError(assert, client.setLoggingLevel('loudest'), -32602);
  assert.deepEqual(await client.ping(), {});
});
