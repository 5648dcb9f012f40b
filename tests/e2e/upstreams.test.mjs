// Upstream MCP servers from the npm registry (server-everything and
// server-memory, pinned in package.json), aggregated by the real toolmux
// binary over stdio and driven by the SDK client: their tools listed with
// prefixes, found by tool_search, called with what the upstream returns,
// progress relayed, a call cancelled upstream, and a broken upstream reported
// while the others serve. The catalog is tests/data/e2e/upstreams/catalog.json.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { execFileSync } from 'node:child_process';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { DATA_DIR, listAllTools, makeTempDir, runCli, sleep, startClient, textOf, waitUntil } from './helpers.mjs';

const UPSTREAMS_CATALOG = path.join(DATA_DIR, 'upstreams', 'catalog.json');
const EVERYTHING_DIR = path.resolve('node_modules/@modelcontextprotocol/server-everything');

/** toolmux serving the upstreams catalog; the memory server writes to its own temp file. */
async function serveUpstreams(t, clientCapabilities = {}) {
  const dir = makeTempDir('toolmux-upstreams-');
  const memoryFile = path.join(dir, 'memory.jsonl');
  const started = await startClient(t, {
    args: ['serve', '--root', dir, '--catalog', UPSTREAMS_CATALOG, '--data-dir', path.join(dir, 'data')],
    env: { TOOLMUX_E2E_MEMORY_FILE: memoryFile },
    clientCapabilities,
  });
  return { ...started, memoryFile };
}

/** server-everything on its own, for what it answers without toolmux in between. */
async function everythingDirect(t) {
  const client = new Client({ name: 'toolmux-e2e-direct', version: '0.0.0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: ['dist/index.js', 'stdio'], cwd: EVERYTHING_DIR, stderr: 'pipe' }),
  );
  t.after(() => client.close());
  return client;
}

test('upstream tools are listed under their prefix, with include/exclude and overrides applied', async (t) => {
  const { client } = await serveUpstreams(t);
  const tools = await listAllTools(client);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));

  for (const name of ['everything_echo', 'everything_get-sum', 'everything_trigger-long-running-operation']) {
    assert.ok(byName.has(name), `${name} is listed`);
  }
  assert.ok(!byName.has('everything_gzip-file-as-resource'), 'excluded by the catalog');
  assert.ok(!byName.has('echo'), 'everything has a prefix');
  // memory has the empty prefix, one tool renamed and one excluded.
  assert.ok(byName.has('create_entities'));
  assert.ok(byName.has('memory_graph'));
  assert.ok(!byName.has('read_graph'));
  assert.ok(!byName.has('delete_entities'));
  assert.match(byName.get('memory_graph').description, /whole knowledge graph/);
  assert.ok(![...byName.keys()].some((name) => name.startsWith('broken')), 'the broken upstream adds nothing');

  // Side effects from the upstream's annotations, or the catalog's override.
  assert.equal(byName.get('everything_echo').annotations.readOnlyHint, true);
  assert.equal(byName.get('create_entities').annotations.readOnlyHint, false);
  assert.equal(byName.get('create_entities').annotations.destructiveHint, false);
  assert.equal(byName.get('create_entities').annotations.openWorldHint, false, 'as the upstream says');
  assert.equal(byName.get('delete_relations').annotations.openWorldHint, false, 'overridden to local_mutation');
  assert.equal(byName.get('delete_observations').annotations.destructiveHint, true);
  assert.deepEqual(byName.get('everything_echo').inputSchema.required, ['message']);
});

test('tool_search finds upstream tools', async (t) => {
  const { client } = await serveUpstreams(t);
  const echo = await client.callTool({ name: 'tool_search', arguments: { query: 'echo a message back', limit: 3 } });
  assert.equal(echo.isError, false, JSON.stringify(echo));
  assert.equal(echo.structuredContent.tools[0].name, 'everything_echo');

  const graph = await client.callTool({ name: 'tool_search', arguments: { query: 'create entities in the knowledge graph', limit: 3 } });
  assert.ok(
    graph.structuredContent.tools.some((tool) => tool.name === 'create_entities'),
    JSON.stringify(graph.structuredContent),
  );
});

test("tool_search names each upstream as a source, described in the operator's or the server's words", async (t) => {
  const { client } = await serveUpstreams(t);
  await waitUntil(async () => {
    const outline = await client.callTool({ name: 'tool_search', arguments: {} });
    return outline.structuredContent.sources.some((s) => s.id === 'memory');
  }, 10000, 'the upstreams are listed');
  const outline = await client.callTool({ name: 'tool_search', arguments: {} });
  const byId = Object.fromEntries(outline.structuredContent.sources.map((s) => [s.id, s]));
  // The broken upstream has no tools: it is not a source.
  assert.deepEqual(Object.keys(byId).sort(), ['everything', 'memory', 'toolmux']);
  assert.match(byId.memory.description, /^Remembers people, projects and facts across conversations\.$/);
  assert.equal(byId.memory.tools, 8);  // delete_entities is excluded

  const mine = await client.callTool({ name: 'tool_search', arguments: { query: 'add', source: 'memory', limit: 20 } });
  const names = mine.structuredContent.tools.map((tool) => tool.name);
  assert.ok(names.length > 0 && names.every((name) => !name.startsWith('everything_')), names.join(', '));

  // Words of the source's purpose, none of its tools': the answer is unsure and names it.
  const recall = await client.callTool({ name: 'tool_search', arguments: { query: 'remember across conversations' } });
  assert.notEqual(recall.structuredContent.confidence, 'high');
  assert.equal(recall.structuredContent.sources[0].id, 'memory', JSON.stringify(recall.structuredContent.sources));
});

test('a call through toolmux returns what the upstream returns', async (t) => {
  const [{ client }, direct] = await Promise.all([serveUpstreams(t), everythingDirect(t)]);
  for (const [tool, args] of [
    ['echo', { message: 'hello through toolmux' }],
    ['get-sum', { a: 2, b: 40 }],
    ['get-structured-content', { location: 'Chicago' }],
  ]) {
    const relayed = await client.callTool({ name: `everything_${tool}`, arguments: args });
    const original = await direct.callTool({ name: tool, arguments: args });
    assert.deepEqual(relayed.content, original.content, tool);
    assert.deepEqual(relayed.structuredContent, original.structuredContent, tool);
    assert.equal(relayed.isError ?? false, original.isError ?? false, tool);
  }
  const sum = await client.callTool({ name: 'everything_get-sum', arguments: { a: 2, b: 40 } });
  assert.match(textOf(sum), /42/);

  // Arguments are checked against the upstream's schema before the call is relayed.
  const bad = await client.callTool({ name: 'everything_get-sum', arguments: { a: 'two', b: 3 } });
  assert.equal(bad.isError, true);
});

test('memory: an upstream with a secret-style env reference writes where the environment says', async (t) => {
  const { client, memoryFile } = await serveUpstreams(t);
  const created = await client.callTool({
    name: 'create_entities',
    arguments: { entities: [{ name: 'toolmux', entityType: 'program', observations: ['aggregates MCP servers'] }] },
  });
  assert.notEqual(created.isError, true, JSON.stringify(created));
  const graph = await client.callTool({ name: 'memory_graph', arguments: {} });
  assert.match(textOf(graph), /aggregates MCP servers/);
  assert.ok(fs.existsSync(memoryFile), 'MEMORY_FILE_PATH came from {"fromEnv": "TOOLMUX_E2E_MEMORY_FILE"}');
  assert.match(fs.readFileSync(memoryFile, 'utf8'), /toolmux/);
});

test('a long-running upstream call relays its progress', async (t) => {
  const { client } = await serveUpstreams(t);
  const progress = [];
  const result = await client.callTool(
    { name: 'everything_trigger-long-running-operation', arguments: { duration: 1.5, steps: 3 } },
    undefined,
    { onprogress: (p) => progress.push(p), timeout: 20000 },
  );
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.match(textOf(result), /completed/i);
  assert.ok(progress.length >= 2, `progress: ${JSON.stringify(progress)}`);
  for (let i = 1; i < progress.length; ++i) assert.ok(progress[i].progress > progress[i - 1].progress);
  assert.equal(progress.at(-1).total, 3);
});

test('cancelling a relayed call cancels it upstream; the upstream keeps serving', async (t) => {
  const { client, sent, received, stderr } = await serveUpstreams(t);
  const controller = new AbortController();
  const started = performance.now();
  const call = client.callTool(
    { name: 'everything_trigger-long-running-operation', arguments: { duration: 20, steps: 20 } },
    undefined,
    { signal: controller.signal, onprogress: () => {} },
  );
  await sleep(1500);
  controller.abort('e2e test cancels the upstream call');
  await assert.rejects(call);
  const request = sent.find((m) => m.method === 'tools/call' && m.params.name === 'everything_trigger-long-running-operation');
  await waitUntil(() => /"event":"upstream_request_cancelled"/.test(stderr()), 5000, 'toolmux cancels upstream');
  assert.match(stderr(), /"event":"upstream_request_cancelled".*"reason":"cancelled"|"reason":"cancelled".*"event":"upstream_request_cancelled"/);
  assert.ok(performance.now() - started < 10000);

  const echo = await client.callTool({ name: 'everything_echo', arguments: { message: 'still here' } });
  assert.match(textOf(echo), /still here/);
  await sleep(300);
  assert.equal(received.filter((m) => m.id === request.id).length, 0, 'no response to the cancelled request');
});

test("an upstream tool's timeout from the catalog ends the call and cancels it upstream", async (t) => {
  const dir = makeTempDir('toolmux-upstreams-');
  const { client, stderr } = await startClient(t, {
    args: ['serve', '--root', dir, '--catalog', path.join(DATA_DIR, 'upstreams', 'timeout.json'), '--data-dir', path.join(dir, 'data')],
  });
  const names = (await listAllTools(client)).map((tool) => tool.name).filter((name) => name.startsWith('slow_'));
  assert.deepEqual(names, ['slow_trigger-long-running-operation'], 'include keeps one tool');

  const started = performance.now();
  const result = await client.callTool({ name: 'slow_trigger-long-running-operation', arguments: { duration: 10, steps: 10 } });
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.match(textOf(result), /timed out after 1000 ms/);
  assert.ok(performance.now() - started < 5000);
  await waitUntil(() => /"event":"upstream_request_cancelled"[^\n]*"reason":"timed out"/.test(stderr()), 5000, 'the upstream call cancelled');
});

test("an upstream's sampling request is relayed to the calling client and its answer back", async (t) => {
  const { client } = await serveUpstreams(t, { sampling: {} });
  const asked = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.push(request.params);
    return { role: 'assistant', model: 'e2e-model', content: { type: 'text', text: 'forty-two' } };
  });
  const result = await client.callTool({ name: 'everything_trigger-sampling-request', arguments: { prompt: 'the answer?' } });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.equal(asked.length, 1);
  assert.match(asked[0].messages[0].content.text, /the answer\?/);
  assert.match(textOf(result), /forty-two/);
  assert.match(textOf(result), /e2e-model/);
});

test("an upstream's elicitation is relayed to the calling client and its answer back", async (t) => {
  const { client } = await serveUpstreams(t, { elicitation: {} });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { name: 'Ada' } };
  });
  const result = await client.callTool({ name: 'everything_trigger-elicitation-request', arguments: {} });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.equal(asked.length, 1);
  assert.deepEqual(asked[0].requestedSchema.required, ['name']);
  assert.match(textOf(result), /User provided the requested information/);
  assert.match(textOf(result), /Ada/);
});

/** The pid of toolmux's child whose working directory is `dir`. */
function upstreamPid(toolmuxPid, dir) {
  const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(toolmuxPid)], { encoding: 'utf8' })
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter(Boolean);
  return children.find((pid) => {
    try {
      return fs.realpathSync(`/proc/${pid}/cwd`) === fs.realpathSync(dir);
    } catch {
      return false;
    }
  });
}

test('an upstream killed mid-session fails fast with a clear error, is restarted, and serves again while the others serve', async (t) => {
  const { client, transport, stderr } = await serveUpstreams(t);
  const echo = await client.callTool({ name: 'everything_echo', arguments: { message: 'before' } });
  assert.match(textOf(echo), /before/);
  const pid = upstreamPid(transport.pid, EVERYTHING_DIR);
  assert.ok(pid, 'server-everything runs as a child of toolmux');
  process.kill(-pid, 'SIGKILL'); // its own process group

  // The exit is noticed when the upstream's stdout closes: at once, or nearly.
  await waitUntil(() => /"event":"upstream_down"/.test(stderr()), 5000, 'toolmux sees the upstream go');
  const started = performance.now();
  const failed = await client.callTool({ name: 'everything_echo', arguments: { message: 'while down' } });
  if (failed.isError) {
    assert.ok(performance.now() - started < 1000, 'fails fast');
    assert.match(textOf(failed), /^upstream "everything" is unavailable: was killed by signal 9 \(SIGKILL\); toolmux restarts it \(attempt 1 in \d+\.\d s\)$/);
  } // else: already restarted (the first delay is 0.5 s)

  // The other upstreams serve meanwhile.
  const graph = await client.callTool({ name: 'memory_graph', arguments: {} });
  assert.notEqual(graph.isError, true, JSON.stringify(graph));

  let after;
  await waitUntil(async () => {
    after = await client.callTool({ name: 'everything_echo', arguments: { message: 'after' } });
    return !after.isError;
  }, 10000, 'the upstream serves again');
  assert.match(textOf(after), /after/);
  const newPid = upstreamPid(transport.pid, EVERYTHING_DIR);
  assert.ok(newPid && newPid !== pid, 'a new process');
  const down = stderr().split('\n').filter((line) => line.includes('"event":"upstream_down"')).map((line) => JSON.parse(line));
  assert.equal(down[0].upstream, 'everything');
  assert.equal(down[0].restart_in_ms, 500);
});

test('a broken upstream is reported in the log while the others serve', async (t) => {
  const { client, stderr } = await serveUpstreams(t);
  const lines = stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  const failed = lines.find((line) => line.event === 'upstream_failed');
  assert.ok(failed, stderr());
  assert.equal(failed.upstream, 'broken');
  assert.match(failed.reason, /exited with status 3/);
  assert.ok(lines.some((line) => line.event === 'upstream_stderr' && /no configuration/.test(line.line)));
  const echo = await client.callTool({ name: 'everything_echo', arguments: { message: 'ok' } });
  assert.match(textOf(echo), /ok/);
});

test('toolmux check reads the upstreams section without starting them', async () => {
  // {"fromEnv": ...} is resolved when the file is checked: the variable must be set.
  process.env.TOOLMUX_E2E_MEMORY_FILE = '/nonexistent/memory.jsonl';
  const { code, stdout, stderr } = await runCli(['check', UPSTREAMS_CATALOG]);
  assert.equal(code, 0, stdout);
  assert.match(stdout, /: ok, 0 command tools \(\d+ tools with the built-ins\), 3 upstream MCP servers \(not started\)/);
  assert.doesNotMatch(stderr, /upstream/, 'nothing was started');

  delete process.env.TOOLMUX_E2E_MEMORY_FILE;
  const missing = await runCli(['check', UPSTREAMS_CATALOG]);
  assert.equal(missing.code, 1);
  assert.match(missing.stdout, /\/upstreams\/memory\/env\/MEMORY_FILE_PATH\/fromEnv: toolmux's environment has no variable "TOOLMUX_E2E_MEMORY_FILE"/);
});
