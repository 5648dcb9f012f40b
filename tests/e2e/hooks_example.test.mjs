// examples/hooks: a program on toolmux's library API whose hooks run around
// every call (a before hook that refuses, rewrites or throws; a middleware
// that retries; an after hook that writes what it saw to TOOLMUX_HOOKS_LOG)
// and whose native tool `whoami` needs a credential that toolmux resolves
// from the environment, driven through the real SDK client over stdio.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { REPO_ROOT, makeTempDir, startClient, startPostgres, textOf } from './helpers.mjs';

const HOOKS_BIN = process.env.TOOLMUX_HOOKS_EXAMPLE_BIN
  ? path.resolve(process.env.TOOLMUX_HOOKS_EXAMPLE_BIN)
  : path.join(path.dirname(process.env.TOOLMUX_BIN ?? path.join(REPO_ROOT, 'build/toolmux')),
    'examples/hooks/toolmux-hooks-example');
const TOKEN = 'hk-example-0123456789abcdef';

async function startExample(t, env = {}, extraArgs = []) {
  assert.ok(fs.existsSync(HOOKS_BIN), `the hooks example is not built at ${HOOKS_BIN}`);
  const log = path.join(makeTempDir('toolmux-hooks-'), 'after.jsonl');
  const started = await startClient(t, {
    command: HOOKS_BIN,
    args: ['serve', '--data-dir', makeTempDir('toolmux-hooks-data-'), ...extraArgs],
    env: { HOOKS_EXAMPLE_TOKEN: TOKEN, TOOLMUX_HOOKS_LOG: log, ...env },
  });
  const records = () =>
    fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
  return { ...started, records };
}

test('a before hook refuses, rewrites, or throws without stopping the server', async (t) => {
  const { client } = await startExample(t);
  const greet = (name) => client.callTool({ name: 'greet', arguments: { name } });

  const plain = await greet('ada');
  assert.notEqual(plain.isError, true);
  assert.equal(textOf(plain), 'Hello, ada!');

  const refused = await greet('mallory');
  assert.equal(refused.isError, true);
  assert.equal(textOf(refused), 'Tool "greet" was refused by the before hook: mallory is not welcome here');
  assert.equal(refused._meta?.['io.toolmux/outcome'], 'denied');

  const rewritten = await greet('  grace  ');
  assert.notEqual(rewritten.isError, true);
  assert.equal(textOf(rewritten), 'Hello, grace!');

  // The rewrite is checked against the tool's schema again.
  const badRewrite = await greet('nobody');
  assert.equal(badRewrite.isError, true);
  assert.match(textOf(badRewrite), /^Invalid arguments for tool "greet": argument \/name: .*\(as the before hook rewrote them\)$/);
  assert.equal(badRewrite._meta?.['io.toolmux/outcome'], 'invalid_arguments');

  const thrown = await greet('boom');
  assert.equal(thrown.isError, true);
  assert.equal(textOf(thrown), 'Tool "greet": the before hook failed: the guest list is unreadable');
  assert.equal(thrown._meta?.['io.toolmux/outcome'], 'crashed');

  const after = await greet('still serving');
  assert.equal(textOf(after), 'Hello, still serving!');
});

test('the middleware wraps the tool: a first failure of flaky is run again', async (t) => {
  const { client } = await startExample(t);
  for (let i = 0; i < 3; ++i) {
    const r = await client.callTool({ name: 'flaky', arguments: {} });
    assert.notEqual(r.isError, true, `call ${i}: ${textOf(r)}`);
    assert.equal(textOf(r), 'worked');
  }
});

test('the after hook sees outcome, sizes, duration, truncation and offload of every call', async (t) => {
  const { client, records } = await startExample(t);
  await client.callTool({ name: 'greet', arguments: { name: 'ada' } });
  await client.callTool({ name: 'greet', arguments: { name: 'mallory' } });
  const big = await client.callTool({ name: 'repeat', arguments: { text: 'abcdefghij', times: 6000 } });
  assert.match(textOf(big), /read_tool_result/);
  const seen = records();
  assert.equal(seen.length, 3, JSON.stringify(seen));
  const [ok, denied, offloaded] = seen;
  assert.deepEqual(
    { ...ok, durationUs: undefined },
    { tool: 'greet', outcome: 'ok', isError: false, durationUs: undefined, bytesProduced: 11, bytesReturned: 11, truncated: false, offloaded: false },
  );
  assert.ok(ok.durationUs > 0, `duration ${ok.durationUs}`);
  assert.equal(denied.outcome, 'denied');
  assert.equal(denied.isError, true);
  assert.equal(offloaded.tool, 'repeat');
  assert.equal(offloaded.bytesProduced, 60000);
  assert.ok(offloaded.bytesReturned < 60000, `returned ${offloaded.bytesReturned}`);
  assert.equal(offloaded.offloaded, true);
});

test('a native tool gets its credential from the environment; its value never leaves toolmux', async (t) => {
  const { client, stderr } = await startExample(t);
  const r = await client.callTool({ name: 'whoami', arguments: {} });
  assert.notEqual(r.isError, true, textOf(r));
  assert.equal(r.content[0].text, `a token of ${TOKEN.length} characters, ending in ${TOKEN.slice(-4)}`);
  assert.equal(r.content[1].text, 'the token is [REDACTED]');
  assert.ok(!JSON.stringify(r).includes(TOKEN));
  assert.ok(!stderr().includes(TOKEN));
});

test('without its credential the example refuses to start, naming what is missing', async () => {
  const env = { ...process.env };
  delete env.HOOKS_EXAMPLE_TOKEN;
  const child = spawn(HOOKS_BIN, ['serve', '--data-dir', makeTempDir('toolmux-hooks-data-')], {
    env,
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 2, stderr);
  assert.match(stderr, /refusing to start/);
  assert.match(stderr, /\/native\/3\/credentials\/0.*api_token.*HOOKS_EXAMPLE_TOKEN/);
});

test("add_note's note commits with its call's audit record in toolmux's PostgreSQL, or not at all", async (t) => {
  // Without a shared store there is no transaction to lend: the tool says what it needs.
  const embedded = await startExample(t);
  const refused = await embedded.client.callTool({ name: 'add_note', arguments: { note: 'buy milk' } });
  assert.equal(refused.isError, true);
  assert.equal(textOf(refused), "add_note keeps its notes in toolmux's PostgreSQL store: serve with --store postgresql");

  const postgres = startPostgres(t);
  const url = postgres.createdb('notes');
  const psql = (sql) => postgres.psql(url, sql);

  const { client } = await startExample(t, { TOOLMUX_POSTGRES_URL: url }, ['--store', 'postgresql']);
  const kept = await client.callTool({ name: 'add_note', arguments: { note: 'buy milk' } });
  assert.notEqual(kept.isError, true, textOf(kept));
  assert.equal(textOf(kept), 'kept: buy milk');
  // The note and its call's audit record, in one database, one commit.
  assert.equal(
    psql('SELECT n.note, a.tool, a.outcome FROM hooks_example_notes n JOIN toolmux_audit a USING (call_id)'),
    'buy milk|add_note|ok',
  );

  // The tool throws after writing: its write is rolled back with the call.
  const crashed = await client.callTool({ name: 'add_note', arguments: { note: 'crash' } });
  assert.equal(crashed.isError, true);
  assert.equal(crashed._meta?.['io.toolmux/outcome'], 'crashed');
  assert.equal(psql('SELECT string_agg(note, \',\') FROM hooks_example_notes'), 'buy milk');
  assert.equal(psql("SELECT string_agg(outcome, ',' ORDER BY seq) FROM toolmux_audit WHERE tool = 'add_note'"), 'ok,crashed');
});
