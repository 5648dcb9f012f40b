// The 2026-07-28 protocol over stdio, through the official v2 client
// (@modelcontextprotocol/client) pinned to 2026-07-28: no initialize, every
// request carrying its own _meta. Lists, tool_search and a found tool called by
// name, an offloaded result read back page by page, a native tool's elicitation
// answered through MRTR (input_required and the retry), a tampered requestState
// refused, and a legacy stdio upstream's elicitation reaching a modern client.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import {
  EXAMPLE_BIN,
  LIMITS_DIR,
  TOOLMUX_BIN,
  charCount,
  makeRoot,
  makeTempDir,
  parseOffloadNotice,
  readStoredResult,
  requireBinary,
  textOf,
} from './helpers.mjs';

const MODERN = '2026-07-28';

/** The v2 client pinned to 2026-07-28 over stdio to `command args`; closed after the test. */
async function modernClient(t, command, args, { capabilities = {}, onElicit } = {}) {
  const transport = new StdioClientTransport({ command, args, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => { stderr += chunk.toString(); });
  const client = new Client(
    { name: 'toolmux-e2e-modern', version: '0.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: MODERN } } },
  );
  if (onElicit) client.setRequestHandler('elicitation/create', onElicit);
  t.after(async () => {
    await client.close().catch(() => {});
    if (process.env.TOOLMUX_E2E_STDERR && stderr) t.diagnostic(`stderr:\n${stderr}`);
  });
  try {
    await client.connect(transport);
  } catch (error) {
    error.message += `\n--- stderr ---\n${stderr}`;
    throw error;
  }
  return { client, stderr: () => stderr };
}

/** gen_chars of the limits catalog (offloads past 50000 bytes) with discovery on. */
function discoveryOffloadCatalog() {
  const base = JSON.parse(fs.readFileSync(path.join(LIMITS_DIR, 'offload.catalog.json'), 'utf8'));
  const file = path.join(makeTempDir(), 'catalog.json');
  fs.writeFileSync(file, JSON.stringify({ ...base, discovery: { mode: 'on', pinned: ['list_directory'] } }));
  return file;
}

test('modern over stdio: the pinned list, a search, a found tool by name, an offloaded result read back', async (t) => {
  requireBinary();
  const root = makeRoot({ 'notes.txt': 'one\ntwo\n' });
  const { client } = await modernClient(t, TOOLMUX_BIN, [
    'serve', '--root', root, '--data-dir', makeTempDir('toolmux-data-'), '--catalog', discoveryOffloadCatalog(),
  ]);
  assert.equal(client.getServerVersion()?.name, 'toolmux');

  const listed = (await client.listTools()).tools.map((tool) => tool.name).sort();
  assert.deepEqual(listed, ['call_tool', 'list_directory', 'read_tool_result', 'tool_search']);

  const search = await client.callTool({ name: 'tool_search', arguments: { query: 'read the lines of a text file', limit: 3 } });
  const found = search.structuredContent.tools.map((tool) => tool.name);
  assert.ok(found.includes('read_text_file'), found.join(', '));
  // No per-session list grows in this era: the list stays the pinned tools...
  assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name).sort(), listed);
  // ...and what the search found is called by its name, or through call_tool.
  const direct = await client.callTool({ name: 'read_text_file', arguments: { path: 'notes.txt' } });
  assert.equal(direct.isError, false, textOf(direct));
  assert.match(textOf(direct), /one\ntwo/);
  const through = await client.callTool({
    name: 'call_tool', arguments: { name: 'read_text_file', arguments: { path: 'notes.txt' } },
  });
  assert.match(textOf(through), /one\ntwo/);

  // An offloaded result belongs to the process: read back whole, page by page.
  const big = await client.callTool({ name: 'gen_chars', arguments: { count: 60000 } });
  const notice = parseOffloadNotice(big.content.find((b) => b.type === 'text').text);
  assert.ok(notice, textOf(big));
  assert.equal(notice.chars, 60000);
  const read = await readStoredResult(assert, client, notice.id);
  assert.equal(charCount(read.text), 60000);
  assert.ok(read.pages >= 2, `${read.pages} page(s)`);
  assert.equal([...read.text].slice(0, 5).join(''), 'aé☃𝄞a');
});

test("modern over stdio: a native tool's elicitation is answered through input_required and the retry", async (t) => {
  assert.ok(fs.existsSync(EXAMPLE_BIN), `example server not built at ${EXAMPLE_BIN}`);
  const asked = [];
  const { client } = await modernClient(t, EXAMPLE_BIN, ['serve', '--data-dir', makeTempDir('toolmux-example-')], {
    capabilities: { elicitation: {} },
    onElicit: async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
    },
  });
  const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
  assert.equal(result.isError, false, textOf(result));
  assert.match(textOf(result), /action=accept/);
  assert.match(textOf(result), /"username":"ada"/);
  assert.equal(asked.length, 1);
  assert.equal(asked[0].message, 'Who are you?');
});

/** The example over a raw pipe: one JSON-RPC message per line, for what the SDK hides. */
async function rawExample(t, dataDir = makeTempDir('toolmux-example-')) {
  const child = spawn(EXAMPLE_BIN, ['serve', '--data-dir', dataDir], { stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(async () => {
    child.stdin.end();
    await once(child, 'exit');
  });
  const messages = [];
  let buffer = '';
  child.stdout.on('data', (chunk) => {
    buffer += chunk.toString();
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      messages.push(JSON.parse(buffer.slice(0, newline)));
      buffer = buffer.slice(newline + 1);
    }
  });
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
  };
  const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const waitFor = async (predicate, what) => {
    for (let waited = 0; waited < 5000; waited += 5) {
      const found = messages.find(predicate);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`no ${what}: ${JSON.stringify(messages)}`);
  };
  const request = (id, method, params) => {
    send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } });
    return waitFor((m) => m.id === id && !m.method, `answer to ${id}`);
  };
  request.send = send;
  request.waitFor = waitFor;
  request.messages = messages;
  request.meta = meta;
  return request;
}

test('modern over stdio: a tampered or misplaced requestState is refused with -32602', async (t) => {
  const request = await rawExample(t);
  const call = { name: 'test_elicitation', arguments: { message: 'Who?' } };
  const first = await request(1, 'tools/call', call);
  assert.equal(first.result.resultType, 'input_required');
  const [key] = Object.keys(first.result.inputRequests);
  const answer = { [key]: { action: 'accept', content: { username: 'x', email: 'x@y.z' } } };
  const tampered = await request(2, 'tools/call', { ...call, inputResponses: answer, requestState: `${first.result.requestState}-TAMPERED` });
  assert.equal(tampered.error?.code, -32602, JSON.stringify(tampered));
  assert.match(tampered.error.message, /requestState/);
  const elsewhere = await request(3, 'tools/call', { ...call, arguments: { message: 'Other?' }, inputResponses: answer, requestState: first.result.requestState });
  assert.equal(elsewhere.error?.code, -32602);
  assert.match(elsewhere.error.message, /belongs to another request/);
  const good = await request(4, 'tools/call', { ...call, inputResponses: answer, requestState: first.result.requestState });
  assert.equal(good.result.resultType, 'complete');
  assert.match(good.result.content[0].text, /action=accept/);
});

test('modern over stdio: a requestState opens after a restart on the same data directory, not on another', async (t) => {
  const dataDir = makeTempDir('toolmux-example-');
  const call = { name: 'test_elicitation', arguments: { message: 'Still there?' } };
  const first = await (await rawExample(t, dataDir))(1, 'tools/call', call);
  const [key] = Object.keys(first.result.inputRequests);
  const retry = { ...call, inputResponses: { [key]: { action: 'decline' } }, requestState: first.result.requestState };
  const again = await (await rawExample(t, dataDir))(2, 'tools/call', retry);
  assert.equal(again.result?.resultType, 'complete', JSON.stringify(again));
  assert.match(again.result.content[0].text, /action=decline/);
  const elsewhere = await (await rawExample(t))(3, 'tools/call', retry);
  assert.equal(elsewhere.error?.code, -32602);
});

test('modern over stdio: subscriptions/listen is acknowledged, carries the resource updates and list changes asked for, and ends when cancelled', async (t) => {
  const request = await rawExample(t);
  const subscription = 'listen-1';
  request.send({
    jsonrpc: '2.0', id: subscription, method: 'subscriptions/listen',
    params: { _meta: request.meta, notifications: { resourceSubscriptions: ['test://watched-resource', 'test://nowhere'], promptsListChanged: true } },
  });
  const ack = await request.waitFor((m) => m.method === 'notifications/subscriptions/acknowledged', 'acknowledgment');
  assert.equal(ack.params._meta['io.modelcontextprotocol/subscriptionId'], subscription);
  // A URI no provider has is left out of what is agreed.
  assert.deepEqual(ack.params.notifications, { promptsListChanged: true, resourceSubscriptions: ['test://watched-resource'] });
  const changed = await request(2, 'tools/call', { name: 'update_watched_resource', arguments: { text: 'new text' } });
  assert.equal(changed.result.isError, false);
  const updated = await request.waitFor((m) => m.method === 'notifications/resources/updated', 'resources/updated');
  assert.equal(updated.params.uri, 'test://watched-resource');
  assert.equal(updated.params._meta['io.modelcontextprotocol/subscriptionId'], subscription);
  // Cancelled: no answer, and nothing more on it.
  request.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: subscription } });
  await request(3, 'tools/list', {});
  await request(4, 'tools/call', { name: 'update_watched_resource', arguments: { text: 'newer' } });
  await request(5, 'tools/list', {});
  assert.equal(request.messages.filter((m) => m.method === 'notifications/resources/updated').length, 1);
  assert.equal(request.messages.filter((m) => m.id === subscription).length, 0);
});

test("modern over stdio: a legacy stdio upstream's elicitation reaches the modern client and its answer completes the call", async (t) => {
  requireBinary();
  assert.ok(fs.existsSync(EXAMPLE_BIN), `example server not built at ${EXAMPLE_BIN}`);
  const dir = makeTempDir();
  const catalog = path.join(dir, 'catalog.json');
  // The example's own catalog: discovery off, so that it lists all its
  // tools to toolmux, however many it has.
  const exampleCatalog = path.join(dir, 'example.json');
  fs.writeFileSync(exampleCatalog, JSON.stringify({ tools: [], discovery: { mode: 'off' } }));
  fs.writeFileSync(catalog, JSON.stringify({
    tools: [],
    upstreams: { example: { command: EXAMPLE_BIN, args: ['serve', '--data-dir', path.join(dir, 'upstream-data'), '--catalog', exampleCatalog], prefix: 'ex_' } },
  }));
  const asked = [];
  const { client } = await modernClient(t, TOOLMUX_BIN, ['serve', '--data-dir', path.join(dir, 'data'), '--catalog', catalog], {
    capabilities: { elicitation: {} },
    onElicit: async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { username: 'grace', email: 'grace@example.com' } };
    },
  });
  const result = await client.callTool({ name: 'ex_test_elicitation', arguments: { message: 'Relayed?' } });
  assert.equal(result.isError, false, textOf(result));
  assert.match(textOf(result), /"username":"grace"/);
  assert.equal(asked.length, 1);
  assert.equal(asked[0].message, 'Relayed?');
});
