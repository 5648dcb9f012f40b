// call_tool reaches any catalog tool by name through the same checks as a
// direct call, for clients that call only what their tool list shows.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { CATALOG, makeRoot, startClient, textOf } from './helpers.mjs';

async function serve(t) {
  const root = makeRoot({ 'notes.txt': 'one\ntwo\n' });
  return startClient(t, { args: ['serve', '--root', root, '--catalog', CATALOG] });
}

test('call_tool is listed with the worst class it reaches, and reaches a tool with its arguments', async (t) => {
  const { client } = await serve(t);
  const { tools } = await client.listTools();
  const callTool = tools.find((tool) => tool.name === 'call_tool');
  assert.ok(callTool, 'call_tool is listed');
  // Its annotations say the most severe class among the tools it can reach.
  const reachesDestructive = tools.some(
    (tool) => tool.name !== 'call_tool' && tool.annotations?.destructiveHint === true && tool.annotations?.readOnlyHint !== true,
  );
  assert.equal(callTool.annotations.destructiveHint, reachesDestructive);

  const result = await client.callTool({
    name: 'call_tool',
    arguments: { name: 'read_text_file', arguments: { path: 'notes.txt' } },
  });
  assert.equal(result.isError, false, JSON.stringify(result));
  assert.equal(textOf(result), 'one\ntwo\n');
});

test('call_tool applies the named tool\'s checks and answers unknown names with suggestions', async (t) => {
  const { client } = await serve(t);
  const bad = await client.callTool({
    name: 'call_tool',
    arguments: { name: 'read_text_file', arguments: { path: 'notes.txt', start_line: 'x' } },
  });
  assert.equal(bad.isError, true);
  assert.match(textOf(bad), /^Invalid arguments for tool "read_text_file":.*\/start_line/);

  const outside = await client.callTool({
    name: 'call_tool',
    arguments: { name: 'read_text_file', arguments: { path: '../etc/passwd' } },
  });
  assert.equal(outside.isError, true);
  assert.match(textOf(outside), /outside the allowed roots/);

  const unknown = await client.callTool({ name: 'call_tool', arguments: { name: 'read_txt_file' } });
  assert.equal(unknown.isError, true);
  assert.match(textOf(unknown), /Did you mean "read_text_file"/);
});
