// Learning from use: a tool called after a search ranks higher the next time
// those words are searched, across a restart on the same --data-dir; with
// "search": {"learn": false} nothing changes and no file is written.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';

import { DATA_DIR, TOOLMUX_BIN, makeRoot, makeTempDir, short, startClient } from './helpers.mjs';

// Twelve tools about messages, close enough that a search's order among them
// turns on small differences in their words.
const CATALOG = path.join(DATA_DIR, 'learning_catalog.json');
const QUERY = 'send a message to a channel';

/** The same catalog with "search": {"learn": false}. */
function catalogNotLearning() {
  const file = path.join(makeTempDir(), 'catalog.json');
  const catalog = JSON.parse(fs.readFileSync(CATALOG, 'utf8'));
  catalog.search = { learn: false };
  fs.writeFileSync(file, JSON.stringify(catalog));
  return file;
}

/**
 * The search memory file, read as catalog/search_memory.h saves it ("TMSM",
 * version, time saved, then each term with its tools and their counts):
 * { term: { tool: count } }.
 */
function readMemory(file) {
  const bytes = fs.readFileSync(file);
  assert.equal(bytes.toString('latin1', 0, 4), 'TMSM');
  let at = 4 + 2 + 8;
  const terms = bytes.readUInt32LE(at);
  at += 4;
  const memory = {};
  for (let i = 0; i < terms; i++) {
    const length = bytes.readUInt8(at);
    const term = bytes.toString('utf8', at + 1, at + 1 + length);
    at += 1 + length;
    const tools = bytes.readUInt16LE(at);
    at += 2;
    memory[term] = {};
    for (let j = 0; j < tools; j++) {
      const nameLength = bytes.readUInt16LE(at);
      const name = bytes.toString('utf8', at + 2, at + 2 + nameLength);
      at += 2 + nameLength;
      memory[term][name] = bytes.readFloatLE(at);
      at += 4;
    }
  }
  assert.equal(at + 8, bytes.length, 'the checksum ends the file');
  return memory;
}

/** A server on `catalog` and `dataDir`, as the SDK's stdio client starts it. */
function serve(t, catalog, dataDir) {
  return startClient(t, {
    args: ['serve', '--root', makeRoot(), '--catalog', catalog, '--data-dir', dataDir],
  });
}

/** The v2 SDK client pinned to 2026-07-28 (requests without a session) on `dataDir`. */
async function serveModern(dataDir) {
  const client = new ModernClient({ name: 'toolmux-e2e-learning', version: '0.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  const args = ['serve', '--root', makeRoot(), '--catalog', CATALOG, '--data-dir', dataDir];
  await client.connect(new ModernStdioTransport({ command: TOOLMUX_BIN, args, stderr: 'pipe' }));
  return client;
}

/** The names tool_search answers QUERY with, best first. */
async function ranking(client) {
  const result = await client.callTool({ name: 'tool_search', arguments: { query: QUERY, limit: 10 } });
  assert.equal(result.isError, false, short(result));
  return result.structuredContent.tools.map((tool) => tool.name);
}

/**
 * Searches QUERY, calls its 3rd-ranked tool, and stops the server (the SDK
 * closes stdin and waits for the process to exit). Returns the ranking and
 * the tool called.
 */
async function searchAndCallThird(t, catalog, dataDir) {
  const server = await serve(t, catalog, dataDir);
  const before = await ranking(server.client);
  assert.ok(before.length >= 3, before.join(', '));
  const third = before[2];
  const called = await server.client.callTool({ name: third, arguments: { text: 'hello team' } });
  assert.equal(called.isError, false, short(called));
  await server.close();
  return { before, third, stderr: server.stderr() };
}

test('a tool called after a search ranks higher after a restart on the same data directory', async (t) => {
  const dataDir = makeTempDir('toolmux-data-');
  const { before, third, stderr } = await searchAndCallThird(t, CATALOG, dataDir);

  // The memory is in the data directory, readable by its owner only, and
  // holds normalized words and tool names, never the call's arguments.
  const file = path.join(dataDir, 'search-memory');
  assert.ok(fs.existsSync(file), `no ${file}; toolmux stderr:\n${stderr}`);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  // The query's words, stemmed and without stop words ("a", "to"), each
  // with the tool called once; nothing of the call's arguments.
  const memory = readMemory(file);
  assert.deepEqual(Object.keys(memory), ['channel', 'messag', 'send']);
  for (const term of Object.keys(memory)) {
    assert.deepEqual(Object.keys(memory[term]), [third]);
    assert.ok(Math.abs(memory[term][third] - 1) < 1e-3, short(memory));
  }
  assert.ok(!fs.readFileSync(file).toString('latin1').includes('hello'), 'no argument value is kept');
  assert.match(stderr, /"event":"search_learning"/);

  const again = await serve(t, CATALOG, dataDir);
  const after = await ranking(again.client);
  assert.equal(after[0], third, `before: ${before.join(', ')}; after: ${after.join(', ')}`);
  // The other tools keep their order among themselves.
  assert.deepEqual(after.filter((name) => name !== third), before.filter((name) => name !== third));
});

test('a call through call_tool is a click too, and a second call of the same tool is not', async (t) => {
  const dataDir = makeTempDir('toolmux-data-');
  const server = await serve(t, CATALOG, dataDir);
  const before = await ranking(server.client);
  const third = before[2];
  for (let i = 0; i < 2; i++) {
    const called = await server.client.callTool({
      name: 'call_tool',
      arguments: { name: third, arguments: { text: 'hello' } },
    });
    assert.equal(called.isError, false, short(called));
  }
  await server.close();
  // One click: the second call of the same tool after the same search is not another.
  const memory = readMemory(path.join(dataDir, 'search-memory'));
  assert.ok(Math.abs(memory.channel[third] - 1) < 1e-3, short(memory));
  const again = await serve(t, CATALOG, dataDir);
  const after = await ranking(again.client);
  assert.equal(after[0], third, `before: ${before.join(', ')}; after: ${after.join(', ')}`);
});

test('with "learn": false a call after a search changes nothing and no file is written', async (t) => {
  const dataDir = makeTempDir('toolmux-data-');
  const catalog = catalogNotLearning();
  const { before, stderr } = await searchAndCallThird(t, catalog, dataDir);
  assert.ok(!fs.existsSync(path.join(dataDir, 'search-memory')), fs.readdirSync(dataDir).join(', '));
  assert.doesNotMatch(stderr, /"event":"search_learning"/);

  const again = await serve(t, catalog, dataDir);
  assert.deepEqual(await ranking(again.client), before);
  await again.close();
  assert.ok(!fs.existsSync(path.join(dataDir, 'search-memory')));
});

test('a damaged memory file is set aside and logged, and the server learns from nothing', async (t) => {
  const dataDir = makeTempDir('toolmux-data-');
  const file = path.join(dataDir, 'search-memory');
  fs.writeFileSync(file, 'not a search memory');
  const { before, third, stderr } = await searchAndCallThird(t, CATALOG, dataDir);
  assert.match(stderr, /"event":"search_memory_unreadable"/);
  assert.equal(fs.readFileSync(path.join(dataDir, 'search-memory.damaged'), 'utf8'), 'not a search memory');
  assert.deepEqual(Object.keys(readMemory(file)), ['channel', 'messag', 'send']);
  const again = await serve(t, CATALOG, dataDir);
  const after = await ranking(again.client);
  assert.equal(after[0], third, `before: ${before.join(', ')}; after: ${after.join(', ')}`);
});

test('2026-07-28 requests, which have no session, learn per principal', async (t) => {
  const dataDir = makeTempDir('toolmux-data-');
  const modern = await serveModern(dataDir);
  t.after(() => modern.close().catch(() => {}));
  const before = await ranking(modern);
  const called = await modern.callTool({ name: before[2], arguments: { text: 'hello' } });
  assert.equal(called.isError, false, short(called));
  await modern.close();
  // The legacy client that follows on the same data directory ranks by what was learned.
  const again = await serve(t, CATALOG, dataDir);
  assert.equal((await ranking(again.client))[0], before[2]);
});
