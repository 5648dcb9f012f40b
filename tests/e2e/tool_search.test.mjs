// tool_search finds tools by what they do, returns what a model needs to call
// them, and never returns a tool the caller may not call.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { makeRoot, makeTempDir, runCli, startClient, textOf } from './helpers.mjs';

function denyCatalog() {
  const dir = makeTempDir();
  const file = path.join(dir, 'catalog.json');
  fs.writeFileSync(file, JSON.stringify({
    tools: [],
    policy: { access: { local: { deny: ['get_file_info'] } } },
  }));
  return file;
}

test('tool_search returns matching tools with their inputSchema, ready to call', async (t) => {
  const root = makeRoot({ 'notes.txt': 'one\n' });
  const { client } = await startClient(t, { args: ['serve', '--root', root] });
  const { tools } = await client.listTools();
  const search = tools.find((tool) => tool.name === 'tool_search');
  assert.ok(search, 'tool_search is listed');
  assert.match(search.description, /This server offers \d+ tools/);

  const result = await client.callTool({ name: 'tool_search', arguments: { query: 'read the lines of a text file', limit: 3 } });
  assert.equal(result.isError, false, JSON.stringify(result));
  const found = result.structuredContent.tools;
  assert.ok(found.length >= 1 && found.length <= 3);
  assert.equal(found[0].name, 'read_text_file');
  assert.equal(found[0].inputSchema.type, 'object');
  assert.ok(found.every((tool) => tool.name !== 'tool_search'));

  const none = await client.callTool({ name: 'tool_search', arguments: { query: 'qqqzzzxxy' } });
  assert.equal(none.isError, false);
  assert.deepEqual(none.structuredContent.tools, []);
  assert.match(textOf(none), /No tools match .*broader/);
});

test('a tool the access rules deny never shows in search results', async (t) => {
  const root = makeRoot({ 'notes.txt': 'one\n' });
  const { client } = await startClient(t, { args: ['serve', '--root', root, '--catalog', denyCatalog()] });
  const result = await client.callTool({ name: 'tool_search', arguments: { query: 'file size modification time info', limit: 20 } });
  const names = result.structuredContent.tools.map((tool) => tool.name);
  assert.ok(names.length > 0);
  assert.ok(!names.includes('get_file_info'), names.join(', '));
  const { tools } = await client.listTools();
  assert.ok(!tools.some((tool) => tool.name === 'get_file_info'));
});

test('toolmux search runs the same search from the command line', async () => {
  const out = await runCli(['search', '--limit', '2', 'list', 'the', 'entries', 'of', 'a', 'folder']);
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout.split('\n')[0], /^1\. list_directory /);
  const none = await runCli(['search', 'qqqzzzxxy']);
  assert.equal(none.code, 1);
  assert.match(none.stdout, /No tools match/);
});

test('the catalog file sets search synonyms and weights; bad ones are load errors', async () => {
  const dir = makeTempDir();
  const good = path.join(dir, 'good.json');
  fs.writeFileSync(good, JSON.stringify({
    tools: [{
      name: 'count_lines', description: 'Counts the lines of a text file.',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
      sideEffect: 'read_only', timeoutMs: 1000, command: { argv: ['wc', '-l', '--', '{path}'] },
    }],
    search: { synonyms: { wc: ['count', 'lines'] }, expansionWeight: 0.5, weights: { name: 3 } },
  }));
  const found = await runCli(['search', '--catalog', good, '--limit', '1', 'wc']);
  assert.equal(found.code, 0, found.stderr);
  assert.match(found.stdout, /^1\. count_lines /);

  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, JSON.stringify({ tools: [], search: { weights: { nam: 1 }, synonyms: { x: 'y' } } }));
  const out = await runCli(['check', bad]);
  assert.equal(out.code, 1);
  assert.match(out.stdout, /\/search\/weights\/nam: unknown field "nam" \(did you mean "name"\?\)/);
  assert.match(out.stdout, /\/search\/synonyms\/x: expected an array of words/);
});
