// How errors reach an SDK client: argument errors are isError results that
// name the argument, every error result names its class in
// _meta["io.toolmux/outcome"]; an unknown tool is JSON-RPC error -32602.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { CATALOG, expectMcpError, makeRoot, startClient, textOf } from './helpers.mjs';

async function serve(t) {
  const root = makeRoot({ 'notes.txt': 'one\ntwo\n', 'dir/': '' });
  const session = await startClient(t, { args: ['serve', '--root', root, '--catalog', CATALOG] });
  await session.client.listTools();
  return session;
}

const PREFIX = (name) => `Invalid arguments for tool "${name}":`;

test('invalid arguments: wrong type is an isError result naming the argument', async (t) => {
  const { client } = await serve(t);
  const result = await client.callTool({ name: 'read_text_file', arguments: { path: 'notes.txt', start_line: 'two' } });
  assert.equal(result.isError, true, JSON.stringify(result));
  const text = textOf(result);
  assert.ok(text.startsWith(PREFIX('read_text_file')), `text: ${JSON.stringify(text)}`);
  assert.ok(text.includes('/start_line'), `text does not name /start_line: ${JSON.stringify(text)}`);
  // The class of the failure, for a client to branch on.
  assert.deepEqual(result._meta, { 'io.toolmux/outcome': 'invalid_arguments' }, JSON.stringify(result));
});

test('invalid arguments: a missing required argument is named', async (t) => {
  const { client } = await serve(t);
  const result = await client.callTool({ name: 'read_text_file', arguments: {} });
  assert.equal(result.isError, true, JSON.stringify(result));
  const text = textOf(result);
  assert.ok(text.startsWith(PREFIX('read_text_file')), `text: ${JSON.stringify(text)}`);
  assert.match(text.slice(PREFIX('read_text_file').length), /\bpath\b/, `text does not name "path": ${JSON.stringify(text)}`);
});

test('invalid arguments: catalog tool schemas are enforced too (type, extra property)', async (t) => {
  const { client } = await serve(t);
  const wrongType = await client.callTool({ name: 'echo_text', arguments: { text: 42 } });
  assert.equal(wrongType.isError, true, JSON.stringify(wrongType));
  assert.ok(textOf(wrongType).startsWith(PREFIX('echo_text')), JSON.stringify(wrongType));
  assert.ok(textOf(wrongType).includes('/text'), JSON.stringify(wrongType));

  const extra = await client.callTool({ name: 'echo_text', arguments: { text: 'x', surprise: true } });
  assert.equal(extra.isError, true, JSON.stringify(extra));
  assert.ok(textOf(extra).startsWith(PREFIX('echo_text')), JSON.stringify(extra));
  assert.match(textOf(extra), /surprise/, JSON.stringify(extra));
});

test('unknown tool name is JSON-RPC error -32602 (McpError)', async (t) => {
  const { client } = await serve(t);
  const error = await expectMcpError(assert, client.callTool({ name: 'no_such_tool', arguments: {} }), -32602);
  assert.ok(error instanceof McpError);
  assert.match(error.message, /no_such_tool/);
  // The session goes on.
  const ok = await client.callTool({ name: 'echo_text', arguments: { text: 'ok' } });
  assert.equal(textOf(ok), 'ok');
  assert.equal(ok._meta, undefined, 'a success carries no outcome');
});

test('a tool failing on its input (reading a directory) is an isError result, not a protocol error', async (t) => {
  const { client } = await serve(t);
  const result = await client.callTool({ name: 'read_text_file', arguments: { path: 'dir' } });
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.ok(textOf(result).length > 0);
  assert.deepEqual(result._meta, { 'io.toolmux/outcome': 'tool_error' }, JSON.stringify(result));
});

test('unknown tool: the error suggests the closest tool names (message and data.suggestions)', async (t) => {
  const { client } = await serve(t);
  const error = await expectMcpError(assert, client.callTool({ name: 'read_txt_file', arguments: { path: 'notes.txt' } }), -32602);
  assert.match(error.message, /read_text_file/, `no suggestion in: ${error.message}`);
  assert.ok(Array.isArray(error.data?.suggestions), `data: ${JSON.stringify(error.data)}`);
  assert.ok(error.data.suggestions.includes('read_text_file'), `data: ${JSON.stringify(error.data)}`);
});
