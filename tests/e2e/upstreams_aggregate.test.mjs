// Three upstream MCP servers from the npm registry aggregated at once by the
// real toolmux binary: server-everything over Streamable HTTP (its HTTP mode,
// started by the test), server-filesystem and server-memory over stdio. Also:
// aliases naming upstream tools, a catalog edited on disk while toolmux runs
// (reloaded, the client told; a broken edit refused while the old catalog
// serves; SIGHUP), and toolmux itself served over HTTP in front of them.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { HttpServer, connectHttp, listAllTools, makeTempDir, sleep, startClient, textOf, waitUntil } from './helpers.mjs';

const MODULES = path.resolve('node_modules/@modelcontextprotocol');
const EVERYTHING = path.join(MODULES, 'server-everything/dist/index.js');
const FILESYSTEM = path.join(MODULES, 'server-filesystem/dist/index.js');
const MEMORY = path.join(MODULES, 'server-memory/dist/index.js');

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** server-everything in its Streamable HTTP mode on a free port; stopped after the test. */
async function everythingOverHttp(t) {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  t.after(() => child.kill('SIGKILL'));
  await waitUntil(() => /listening on port/.test(stderr), 15000, 'server-everything listens');
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

/** A folder with the catalog file and what the upstreams work on. */
function workspace(upstreams, extra = {}) {
  const dir = makeTempDir('toolmux-aggregate-');
  fs.mkdirSync(path.join(dir, 'files'));
  fs.writeFileSync(path.join(dir, 'files', 'notes.txt'), 'aggregated by toolmux\n');
  const catalog = path.join(dir, 'catalog.json');
  const write = (ups, more = extra) => fs.writeFileSync(catalog, JSON.stringify({ tools: [], upstreams: ups, ...more }, null, 2));
  write(upstreams);
  return { dir, catalog, write, files: fs.realpathSync(path.join(dir, 'files')) };
}

const filesUpstream = (files) => ({ command: process.execPath, args: [FILESYSTEM, files], prefix: 'files_' });
const memoryUpstream = (dir) => ({
  command: process.execPath,
  args: [MEMORY],
  prefix: 'memory_',
  env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') },
});

test('server-everything over Streamable HTTP, server-filesystem and server-memory over stdio, aggregated at once', async (t) => {
  const everything = await everythingOverHttp(t);
  const ws = workspace({});
  // 43 tools: past 40, discovery would list only tool_search and its kin.
  ws.write({ everything: { url: everything.url }, files: filesUpstream(ws.files), memory: memoryUpstream(ws.dir) }, { discovery: { mode: 'off' } });
  const { client, stderr } = await startClient(t, {
    args: ['serve', '--root', ws.dir, '--catalog', ws.catalog, '--data-dir', path.join(ws.dir, 'data')],
  });

  const names = new Set((await listAllTools(client)).map((tool) => tool.name));
  for (const name of ['everything_echo', 'everything_get-sum', 'files_read_text_file', 'files_list_directory', 'memory_create_entities', 'memory_read_graph']) {
    assert.ok(names.has(name), `${name} is listed: ${[...names].join(' ')}`);
  }

  const found = await client.callTool({ name: 'tool_search', arguments: { query: 'read the text of a file', limit: 3 } });
  assert.equal(found.structuredContent.tools[0].name, 'files_read_text_file', JSON.stringify(found.structuredContent));

  const echo = await client.callTool({ name: 'everything_echo', arguments: { message: 'over http' } });
  assert.equal(textOf(echo), 'Echo: over http');
  const read = await client.callTool({ name: 'files_read_text_file', arguments: { path: path.join(ws.files, 'notes.txt') } });
  assert.equal(textOf(read), 'aggregated by toolmux\n');
  const outside = await client.callTool({ name: 'files_read_text_file', arguments: { path: '/etc/passwd' } });
  assert.equal(outside.isError, true, 'the upstream refuses, toolmux relays the refusal');
  const created = await client.callTool({
    name: 'memory_create_entities',
    arguments: { entities: [{ name: 'toolmux', entityType: 'program', observations: ['one endpoint'] }] },
  });
  assert.notEqual(created.isError, true, JSON.stringify(created));
  assert.match(textOf(await client.callTool({ name: 'memory_read_graph', arguments: {} })), /one endpoint/);

  // Progress from the HTTP upstream reaches the client.
  const progress = [];
  const long = await client.callTool(
    { name: 'everything_trigger-long-running-operation', arguments: { duration: 1, steps: 3 } },
    undefined,
    { onprogress: (p) => progress.push(p), timeout: 20000 },
  );
  assert.notEqual(long.isError, true, JSON.stringify(long));
  assert.ok(progress.length >= 2, JSON.stringify(progress));

  // Cancelling a call relays the cancellation to the HTTP upstream.
  const controller = new AbortController();
  const call = client.callTool(
    { name: 'everything_trigger-long-running-operation', arguments: { duration: 20, steps: 20 } },
    undefined,
    { signal: controller.signal, onprogress: () => {} },
  );
  await sleep(1000);
  controller.abort('cancelled by the test');
  await assert.rejects(call);
  await waitUntil(() => /"event":"upstream_request_cancelled"/.test(stderr()), 5000, 'cancelled upstream');
  assert.equal(textOf(await client.callTool({ name: 'everything_echo', arguments: { message: 'still' } })), 'Echo: still');
});

test('an HTTP upstream that goes away fails fast and is reconnected when it is back', async (t) => {
  const first = await everythingOverHttp(t);
  const ws = workspace({ everything: { url: first.url, restart: { initialDelayMs: 200, maxDelayMs: 400 } } });
  const { client, stderr } = await startClient(t, {
    args: ['serve', '--root', ws.dir, '--catalog', ws.catalog, '--data-dir', path.join(ws.dir, 'data')],
  });
  assert.equal(textOf(await client.callTool({ name: 'everything_echo', arguments: { message: 'a' } })), 'Echo: a');
  first.child.kill('SIGKILL');
  await new Promise((resolve) => first.child.once('exit', resolve));
  const failed = await client.callTool({ name: 'everything_echo', arguments: { message: 'b' } });
  assert.equal(failed.isError, true);
  assert.match(textOf(failed), /^upstream "everything" /);
  await waitUntil(() => /"event":"upstream_down"/.test(stderr()), 5000, 'toolmux notices');

  // Back on the same port: toolmux opens a new session there.
  const port = new URL(first.url).port;
  const again = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { PATH: process.env.PATH, PORT: port }, stdio: 'ignore' });
  t.after(() => again.kill('SIGKILL'));
  let echo;
  await waitUntil(async () => {
    echo = await client.callTool({ name: 'everything_echo', arguments: { message: 'c' } });
    return !echo.isError;
  }, 15000, 'served again');
  assert.equal(textOf(echo), 'Echo: c');
});

test('aliases, argument policy and pins may name upstream tools', async (t) => {
  const ws = workspace(
    { files: filesUpstream(makeTempDir('toolmux-files-')) },
    {
      aliases: { tools: { list_folder: 'files_list_directory' } },
      policy: { access: { '*': { deny: ['files_write_file'] } } },
      discovery: { mode: 'on', pinned: ['files_read_text_file'] },
    },
  );
  const { client } = await startClient(t, {
    args: ['serve', '--root', ws.dir, '--catalog', ws.catalog, '--data-dir', path.join(ws.dir, 'data')],
  });
  const listed = (await listAllTools(client)).map((tool) => tool.name);
  assert.ok(listed.includes('files_read_text_file'), `pinned: ${listed}`);
  assert.ok(!listed.includes('files_list_directory'), 'discovery is on: not pinned, not listed');
  const folder = JSON.parse(fs.readFileSync(ws.catalog, 'utf8')).upstreams.files.args[1];
  fs.writeFileSync(path.join(folder, 'a.txt'), 'a');
  const viaAlias = await client.callTool({ name: 'list_folder', arguments: { path: folder } });
  assert.match(textOf(viaAlias), /\[FILE\] a\.txt/);
  const denied = await client.callTool({ name: 'files_write_file', arguments: { path: path.join(folder, 'b.txt'), content: 'b' } });
  assert.equal(denied.isError, true);
  assert.match(textOf(denied), /denied by \/policy\/access\/\*\/deny\/0/);
  assert.ok(!fs.existsSync(path.join(folder, 'b.txt')));
});

test('a catalog edited on disk is reloaded and the client told; a broken edit is refused and the old catalog serves', async (t) => {
  const ws = workspace({ memory: memoryUpstream(makeTempDir('toolmux-memory-')) });
  const { client, stderr, transport } = await startClient(t, {
    args: ['serve', '--root', ws.dir, '--catalog', ws.catalog, '--data-dir', path.join(ws.dir, 'data')],
  });
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes += 1;
  });
  const before = (await listAllTools(client)).map((tool) => tool.name);
  assert.ok(before.includes('memory_read_graph'));
  assert.ok(!before.some((name) => name.startsWith('files_')));

  // A valid edit: one more upstream.
  ws.write({ memory: memoryUpstream(makeTempDir('toolmux-memory-')), files: filesUpstream(ws.files) });
  await waitUntil(() => changes > 0, 15000, 'notifications/tools/list_changed');
  const after = (await listAllTools(client)).map((tool) => tool.name);
  assert.ok(after.includes('files_read_text_file'), after.join(' '));
  assert.match(stderr(), /"event":"catalog_reloaded"/);
  const read = await client.callTool({ name: 'files_read_text_file', arguments: { path: path.join(ws.files, 'notes.txt') } });
  assert.equal(textOf(read), 'aggregated by toolmux\n');

  // A broken edit: refused with the check report; the old catalog keeps serving.
  const seen = changes;
  fs.writeFileSync(ws.catalog, JSON.stringify({ tools: [], upstreams: { files: { command: '' } } }));
  await waitUntil(() => /"event":"catalog_rejected"/.test(stderr()), 15000, 'the edit refused');
  const rejected = stderr().split('\n').find((line) => line.includes('"event":"catalog_rejected"'));
  assert.match(JSON.parse(rejected).report, /\/upstreams\/files\/command: the command is empty/);
  assert.equal(changes, seen, 'no notification for a refused edit');
  const still = await client.callTool({ name: 'files_read_text_file', arguments: { path: path.join(ws.files, 'notes.txt') } });
  assert.equal(textOf(still), 'aggregated by toolmux\n');

  // SIGHUP reloads at once.
  ws.write({ memory: memoryUpstream(makeTempDir('toolmux-memory-')) });
  process.kill(transport.pid, 'SIGHUP');
  await waitUntil(() => /"event":"catalog_reload_signal"/.test(stderr()), 5000, 'SIGHUP taken');
  await waitUntil(async () => !(await listAllTools(client)).some((tool) => tool.name.startsWith('files_')), 15000, 'files gone');
});

test('toolmux over Streamable HTTP in front of its upstreams', async (t) => {
  const ws = workspace({ files: filesUpstream(makeTempDir('toolmux-files-')), memory: memoryUpstream(makeTempDir('toolmux-memory-')) });
  const server = await HttpServer.start(t, { catalog: ws.catalog });
  const { client } = await connectHttp(t, server.url);
  const names = (await listAllTools(client)).map((tool) => tool.name);
  assert.ok(names.includes('files_list_allowed_directories') && names.includes('memory_read_graph'), names.join(' '));
  const allowed = await client.callTool({ name: 'files_list_allowed_directories', arguments: {} });
  assert.match(textOf(allowed), /toolmux-files-/);
});
