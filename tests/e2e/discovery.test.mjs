// Discovery mode: tools/list shows the pinned tools and the discovery tools;
// what a search finds joins that session's list, announced by list_changed.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { makeRoot, makeTempDir, runCli, startClient, waitUntil } from './helpers.mjs';

function catalogFile(discovery) {
  const file = path.join(makeTempDir(), 'catalog.json');
  fs.writeFileSync(file, JSON.stringify({ tools: [], discovery }));
  return file;
}

const names = (tools) => tools.map((tool) => tool.name).sort();

test('discovery on: pinned and discovery tools are listed; found tools join after list_changed', async (t) => {
  const root = makeRoot({ 'notes.txt': 'one\n' });
  const catalog = catalogFile({ mode: 'on', pinned: ['list_directory'] });
  const { client } = await startClient(t, { args: ['serve', '--root', root, '--catalog', catalog] });
  assert.equal(client.getServerCapabilities().tools.listChanged, true);
  assert.deepEqual(names((await client.listTools()).tools),
    ['call_tool', 'list_directory', 'read_tool_result', 'tool_search']);

  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changes += 1; });
  const result = await client.callTool({ name: 'tool_search', arguments: { query: 'read the lines of a text file', limit: 2 } });
  const found = result.structuredContent.tools.map((tool) => tool.name);
  assert.ok(found.includes('read_text_file'), found.join(', '));
  await waitUntil(() => changes > 0, 3000, 'notifications/tools/list_changed');
  const listed = names((await client.listTools()).tools);
  for (const name of found) assert.ok(listed.includes(name), `${name} missing from ${listed}`);
  assert.equal(changes, 1, 'one notification for the burst');

  // A tool never listed is still reachable, directly and through call_tool.
  const direct = await client.callTool({ name: 'get_file_info', arguments: { path: 'notes.txt' } });
  assert.equal(direct.isError, false, JSON.stringify(direct));
});

test('discovery off lists every tool; an unknown pinned tool is refused at load', async (t) => {
  const root = makeRoot({});
  const off = catalogFile({ mode: 'off' });
  const { client } = await startClient(t, { args: ['serve', '--root', root, '--catalog', off] });
  assert.ok((await client.listTools()).tools.length >= 8);
  // listChanged stays true: a catalog reload or an upstream's change can change the list.
  assert.equal(client.getServerCapabilities().tools.listChanged, true);

  const bad = catalogFile({ mode: 'on', pinned: ['no_such_tool'] });
  const out = await runCli(['check', bad]);
  assert.equal(out.code, 1);
  assert.match(out.stdout, /\/discovery\/pinned\/0: pinned tool "no_such_tool" does not exist/);
});

test('a catalog tool may not take a reserved name', async () => {
  const file = path.join(makeTempDir(), 'catalog.json');
  fs.writeFileSync(file, JSON.stringify({ tools: [{
    name: 'tool_search', description: 'mine', inputSchema: { type: 'object' },
    sideEffect: 'read_only', timeoutMs: 1000, command: { argv: ['true'] },
  }] }));
  const out = await runCli(['check', file]);
  assert.equal(out.code, 1);
  assert.match(out.stdout, /\/tools\/0\/name: .*tool_search/);
});
