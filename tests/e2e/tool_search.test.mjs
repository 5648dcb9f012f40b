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
  // The description stays the same whatever the catalog holds (a client's
  // prompt cache survives a reload); the instructions say what it holds.
  assert.doesNotMatch(search.description, /\d+ tools/);
  assert.match(client.getInstructions(), /This server offers \d+ tools/);

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
  assert.match(textOf(none), /No tools match .*other words/);
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
      inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'The file.' } } },
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

/** A catalog of one source's 70 command tools in three API families, and a few others. */
function largeCatalog() {
  const dir = makeTempDir();
  const file = path.join(dir, 'catalog.json');
  const tools = [];
  const families = [['Billing', 'invoice'], ['Chat', 'channel'], ['Voice', 'call']];
  for (const [family, object] of families) {
    for (let i = 0; i < 24; i += 1) {
      const verb = ['Create', 'Fetch', 'Delete'][i % 3];
      tools.push({
        name: `${family}--${verb}${object[0].toUpperCase()}${object.slice(1)}${i}`,
        description: `${verb} ${object} number ${i}.`,
        inputSchema: { type: 'object', properties: {} },
        sideEffect: 'read_only', timeoutMs: 1000, command: { argv: ['true'] },
      });
    }
  }
  fs.writeFileSync(file, JSON.stringify({ tools, discovery: { mode: 'on' } }));
  return file;
}

test('an empty query lists the sources; a source lists its groups, a group its tools', async (t) => {
  const root = makeRoot({ 'notes.txt': 'one\n' });
  const { client } = await startClient(t, { args: ['serve', '--root', root, '--catalog', largeCatalog()] });
  const { tools } = await client.listTools();
  const search = tools.find((tool) => tool.name === 'tool_search');
  assert.ok(search.inputSchema.properties.alternatives && search.inputSchema.properties.source);

  const outline = await client.callTool({ name: 'tool_search', arguments: {} });
  assert.equal(outline.isError, false, JSON.stringify(outline));
  const sources = outline.structuredContent.sources;
  assert.deepEqual(sources.map((s) => s.id), ['toolmux', 'catalog']);
  assert.equal(sources[1].tools, 72);
  assert.equal(sources[1].groups, 3);
  assert.match(textOf(outline), /- catalog: .*\(72 tools in 3 groups\)/);

  const groups = await client.callTool({ name: 'tool_search', arguments: { query: '', source: 'catalog' } });
  assert.deepEqual(groups.structuredContent.sources.map((s) => [s.id, s.tools]),
    [['catalog/Billing', 24], ['catalog/Chat', 24], ['catalog/Voice', 24]]);

  const inGroup = await client.callTool({ name: 'tool_search', arguments: { query: '', source: 'catalog/Chat', limit: 20 } });
  assert.equal(inGroup.structuredContent.tools.length, 20);
  assert.equal(inGroup.structuredContent.more, 4);
  assert.ok(inGroup.structuredContent.tools.every((tool) => tool.name.startsWith('Chat--')));

  const unknown = await client.callTool({ name: 'tool_search', arguments: { query: 'x', source: 'nowhere' } });
  assert.equal(unknown.isError, true);
  assert.match(textOf(unknown), /no source "nowhere"; the sources are toolmux, catalog/);
});

test('a search narrowed to a group finds only its tools, and they become callable', async (t) => {
  const root = makeRoot({ 'notes.txt': 'one\n' });
  const { client } = await startClient(t, { args: ['serve', '--root', root, '--catalog', largeCatalog()] });
  const found = await client.callTool({ name: 'tool_search', arguments: { query: 'delete', source: 'catalog/Voice', limit: 20 } });
  const names = found.structuredContent.tools.map((tool) => tool.name);
  assert.equal(names.length, 8, names.join(', '));
  assert.ok(names.every((name) => /^Voice--DeleteCall\d+$/.test(name)), names.join(', '));
  const { tools } = await client.listTools();
  assert.ok(tools.some((tool) => tool.name === names[0]), 'a found tool is listed to this client');
});

test('alternatives are searched with the query; an unsure answer names the sources that match', async (t) => {
  const root = makeRoot({ 'notes.txt': 'one\n' });
  const { client } = await startClient(t, { args: ['serve', '--root', root, '--catalog', largeCatalog()] });
  const vague = await client.callTool({ name: 'tool_search', arguments: { query: 'phone call' } });
  assert.equal(vague.isError, false, JSON.stringify(vague));
  assert.notEqual(vague.structuredContent.confidence, 'high');
  const named = vague.structuredContent.sources.map((s) => s.id);
  assert.ok(named.includes('catalog/Voice'), named.join(', '));
  assert.match(textOf(vague), /call tool_search again with "source" set to its id/);

  const sure = await client.callTool({
    name: 'tool_search',
    arguments: { query: 'phone call', alternatives: ['fetch call', 'get voice call'], limit: 3 },
  });
  assert.equal(sure.structuredContent.confidence, 'high');
  assert.equal(sure.structuredContent.sources, undefined);
  assert.ok(sure.structuredContent.tools.every((tool) => /^Voice--FetchCall\d+$/.test(tool.name)),
    sure.structuredContent.tools.map((tool) => tool.name).join(', '));
});

test('toolmux search lists sources, narrows to one, and explains its ranking', async () => {
  const catalog = largeCatalog();
  const outline = await runCli(['search', '--catalog', catalog]);
  assert.equal(outline.code, 0, outline.stderr);
  assert.match(outline.stdout, /^catalog {2}72 tools in 3 groups {2}/m);
  const narrowed = await runCli(['search', '--catalog', catalog, '--source', 'catalog/Billing', '--limit', '1', 'create']);
  assert.equal(narrowed.code, 0, narrowed.stderr);
  assert.match(narrowed.stdout, /^1\. Billing--CreateInvoice\d+ /);
  const explained = await runCli(['search', '--limit', '1', '--explain', 'read', 'the', 'lines', 'of', 'a', 'text', 'file']);
  assert.equal(explained.code, 0, explained.stderr);
  assert.match(explained.stdout, /^read_text_file {2}\(source toolmux/m);
  assert.match(explained.stdout, /^ {4}lines -> line: [\d.]+ = idf [\d.]+, in .*description x\d/m);
  assert.match(explained.stdout, /^ {4}score [\d.]+$/m);
  const bad = await runCli(['search', '--source', 'nowhere', 'x']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /no source "nowhere"/);
});
