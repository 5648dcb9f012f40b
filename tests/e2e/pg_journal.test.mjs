// The journal and the audit trail on PostgreSQL (issue 17): two toolmux
// instances (`serve --store postgresql`, each with a data directory of its
// own) on one database, started by tests/support/postgres.sh in a temporary
// folder. A destructive call made with an idempotency key through one is
// answered from the journal (replayed) through the other, which does not run
// it; `toolmux audit --store postgresql` and `toolmux journal --store
// postgresql` list the calls of both instances; the data directories hold no
// journal. An instance killed (kill -9) while a call runs: the other lists the
// call interrupted, runs nothing by itself, and runs it again only when its
// client asks again with the key. A call that ends while PostgreSQL is down:
// its outcome kept in the instance's spool (a repeat gets "outcome pending"),
// not taken for dead by another instance when the server is back, and
// written by the next process on its data directory before it answers. A
// 2026-07-28 confirmation used through one instance is refused through the
// other (spent tokens are in the store).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';

import { DATA_DIR, REPO_ROOT, TOOLMUX_BIN, makeTempDir, runCli, short, sleep, startClient, textOf, waitUntil, writeTree } from './helpers.mjs';

const POSTGRES_SH = path.join(REPO_ROOT, 'tests/support/postgres.sh');
const GUARDED_CATALOG = path.join(DATA_DIR, 'guarded', 'catalog.json');

// One server for the file: started before the tests, stopped after.
let pgDir;
let conninfo;

before(() => {
  const parent = fs.mkdtempSync('/tmp/tmpg-');
  fs.chmodSync(parent, 0o755); // the server runs as nobody under root
  pgDir = path.join(parent, 'pg');
  execFileSync('bash', [POSTGRES_SH, 'start', pgDir], { encoding: 'utf8' });
  conninfo = execFileSync('bash', [POSTGRES_SH, 'createdb', pgDir, 'e2e'], { encoding: 'utf8' }).trim();
});

after(() => {
  if (!pgDir) return;
  execFileSync('bash', [POSTGRES_SH, 'stop', pgDir]);
  fs.rmSync(path.dirname(pgDir), { recursive: true, force: true });
});

const meta = (result) => result._meta ?? {};

/**
 * One instance serving `dir` with the guarded catalog (delete_file let through
 * unconfirmed), its own data directory, on the database.
 */
async function serveInstance(t, dir, dataDir = makeTempDir('toolmux-data-')) {
  const catalog = JSON.parse(fs.readFileSync(GUARDED_CATALOG, 'utf8'));
  catalog.policy.confirm = { tools: { delete_file: false, slow_mark: false } };
  const catalogFile = path.join(dir, 'catalog.json');
  fs.writeFileSync(catalogFile, JSON.stringify(catalog));
  const session = await startClient(t, {
    args: ['serve', '--root', dir, '--data-dir', dataDir, '--catalog', catalogFile, '--store', 'postgresql'],
    env: { TOOLMUX_POSTGRES_URL: conninfo },
  });
  session.dataDir = dataDir;
  session.call = (name, args, m) => session.client.callTool({ name, arguments: args, ...(m ? { _meta: m } : {}) });
  return session;
}

/** `toolmux COMMAND --json --store postgresql ...`: its lines, parsed. */
async function sharedLines(command, extra = []) {
  const run = await runCli([command, '--json', '--store', 'postgresql', ...extra], { env: { TOOLMUX_POSTGRES_URL: conninfo } });
  assert.equal(run.code, 0, `toolmux ${command}: ${run.stderr}`);
  return run.stdout.split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line));
}

test('a keyed call made through one instance is replayed by another; the audit trail lists both', async (t) => {
  const dir = makeTempDir('toolmux-pg-journal-');
  writeTree(dir, { 'notes.txt': 'old notes\n' });
  const first = await serveInstance(t, dir);
  const second = await serveInstance(t, dir);
  const key = { 'io.toolmux/idempotencyKey': 'cleanup-across-instances' };

  const done = await first.call('delete_file', { path: 'notes.txt' }, key);
  assert.notEqual(done.isError, true, short(done));
  assert.match(textOf(done), /^deleted notes\.txt \(call .+\)/);
  assert.ok(!fs.existsSync(path.join(dir, 'notes.txt')));

  // The other instance answers from the journal: the same result, and the
  // file written meanwhile stays.
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'new notes\n');
  const replayed = await second.call('delete_file', { path: 'notes.txt' }, key);
  assert.deepEqual(replayed.content, done.content, 'the replay is not the recorded result');
  assert.equal(meta(replayed)['io.toolmux/replayed'], true, short(replayed));
  assert.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'new notes\n', 'the other instance ran the call again');

  // The same key for another call is refused there too.
  const other = await second.call('delete_file', { path: 'other.txt' }, key);
  assert.equal(other.isError, true, short(other));
  assert.match(textOf(other), /idempotency key "cleanup-across-instances" was used for another call/);

  const records = await sharedLines('audit', ['--tool', 'delete_file']);
  assert.deepEqual(records.map((r) => r.confirmation).slice(0, 2), ['not_required', 'replayed'], short(records));
  assert.equal(records[0].outcome, 'ok', short(records));
  const instances = new Set(records.map((r) => r.instance));
  assert.equal(instances.size, 2, `one instance wrote them all: ${short(records)}`);
  assert.ok(records.every((r) => r.idempotency_key === 'cleanup-across-instances'), short(records));

  const entries = await sharedLines('journal');
  assert.equal(entries.length, 1, short(entries));
  assert.equal(entries[0].tool, 'delete_file');
  assert.equal(entries[0].state, 'ok');
  assert.equal(entries[0].instance, records[0].instance);

  // The table form, and nothing in either data directory.
  const table = await runCli(['audit', '--store', 'postgresql', '--tool', 'delete_file'], { env: { TOOLMUX_POSTGRES_URL: conninfo } });
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^TIME +PRINCIPAL/);
  assert.equal(table.stdout.trim().split('\n').length, 1 + records.length, table.stdout);
  for (const session of [first, second]) {
    const local = await runCli(['audit', '--data-dir', session.dataDir]);
    assert.equal(local.code, 0, local.stderr);
    assert.match(local.stdout, /^No audit records in /);
  }
});

test('an instance killed while a call runs: the other finds it interrupted and runs it only when asked again', async (t) => {
  const dir = makeTempDir('toolmux-pg-journal-');
  const marker = path.join(dir, 'marker.txt');
  const doomed = await serveInstance(t, dir);
  const survivor = await serveInstance(t, dir);
  const key = { 'io.toolmux/idempotencyKey': 'mark-across-instances' };
  const call = doomed.call('slow_mark', {}, key).then((result) => ({ result }), (error) => ({ error }));
  await waitUntil(() => fs.existsSync(marker), 5000, 'slow_mark to start');
  const startedAt = Date.now();
  process.kill(doomed.transport.pid, 'SIGKILL');
  const answer = await call;
  assert.ok(answer.error, `the call got an answer from a killed instance: ${short(answer)}`);

  // The database drops the killed instance's lock with its connection: the
  // call no longer runs, and no instance ran it again.
  let entries = [];
  await waitUntil(async () => {
    entries = (await sharedLines('journal')).filter((entry) => entry.tool === 'slow_mark');
    return entries.length === 1 && entries[0].state === 'interrupted';
  }, 10000, `the killed instance's call to read as interrupted: ${short(entries)}`);
  const callId = entries[0].call_id;
  await sleep(Math.max(0, startedAt + 3000 - Date.now())); // past the command's 2 s sleep
  const lines = () => fs.readFileSync(marker, 'utf8').split('\n').filter(Boolean);
  assert.deepEqual(lines().filter((line) => line.startsWith('started')), [`started ${callId}`]);

  // Its client asks the other instance again with the key: it runs again,
  // under the earlier call's id.
  const retried = await survivor.call('slow_mark', {}, key);
  assert.equal(textOf(retried), `done (call ${callId})\n`, short(retried));
  assert.deepEqual(lines().filter((line) => line.startsWith('started')), [`started ${callId}`, `started ${callId}`]);
  const after = (await sharedLines('journal')).filter((entry) => entry.tool === 'slow_mark');
  assert.deepEqual(after.map((entry) => [entry.call_id, entry.outcome]), [[callId, 'interrupted'], [callId, 'ok']], short(after));
  assert.notEqual(after[0].instance, after[1].instance, short(after));
  const records = (await sharedLines('audit', ['--tool', 'slow_mark'])).map((r) => [r.call_id, r.outcome]);
  assert.deepEqual(records, [[callId, 'interrupted'], [callId, 'ok']]);
});

test('a call that ends during an outage is kept: its repeat is pending, then replayed, never run twice', async (t) => {
  const dir = makeTempDir('toolmux-pg-outage-');
  writeTree(dir, { 'notes.txt': 'notes\n' });
  const marker = path.join(dir, 'marker.txt');
  const first = await serveInstance(t, dir);
  const key = { 'io.toolmux/idempotencyKey': 'mark-through-an-outage' };
  const call = first.call('slow_mark', {}, key);
  await waitUntil(() => fs.existsSync(marker), 5000, 'slow_mark to start');
  execFileSync('bash', [POSTGRES_SH, 'pause', pgDir]);
  let paused = true;
  t.after(() => paused && execFileSync('bash', [POSTGRES_SH, 'resume', pgDir]));

  const done = await call;
  assert.notEqual(done.isError, true, short(done));
  const callId = /\(call (\S+)\)/.exec(textOf(done))[1];
  const read = await first.call('read_text_file', { path: 'notes.txt' });
  assert.equal(textOf(read), 'notes\n', short(read));
  const pending = await first.call('slow_mark', {}, key);
  assert.equal(pending.isError, true, short(pending));
  assert.match(textOf(pending), /ended, but its outcome is not in toolmux's journal yet .*Outcome pending/s);

  // The instance dies with the outcome in its spool; the server comes back.
  process.kill(first.transport.pid, 'SIGKILL');
  execFileSync('bash', [POSTGRES_SH, 'resume', pgDir]);
  paused = false;
  const other = await serveInstance(t, dir);
  const meanwhile = await other.call('slow_mark', {}, key);
  assert.equal(meanwhile.isError, true, short(meanwhile));
  assert.match(textOf(meanwhile), /is still running/, 'taken for dead right after the restart');

  // The next process on its data directory writes what it kept first.
  const again = await serveInstance(t, dir, first.dataDir);
  const replayed = await again.call('slow_mark', {}, key);
  assert.deepEqual(replayed.content, done.content, short(replayed));
  assert.equal(meta(replayed)['io.toolmux/replayed'], true, short(replayed));
  const fromOther = await other.call('slow_mark', {}, key);
  assert.equal(meta(fromOther)['io.toolmux/replayed'], true, short(fromOther));
  const lines = fs.readFileSync(marker, 'utf8').split('\n').filter(Boolean);
  assert.deepEqual(lines, [`started ${callId}`, `ran ${callId}`]);
  const records = await sharedLines('audit');
  const of = (tool) =>
    records.filter((r) => r.tool === tool && (tool !== 'slow_mark' || r.idempotency_key === key['io.toolmux/idempotencyKey'])).map((r) => [r.confirmation, r.outcome]);
  // Run once; the two repeats refused while pending or running; two replays.
  assert.deepEqual(of('slow_mark'), [
    ['not_required', 'ok'],
    ['not_required', 'denied'],
    ['not_required', 'denied'],
    ['replayed', 'ok'],
    ['replayed', 'ok'],
  ]);
  assert.ok(of('read_text_file').some(([, outcome]) => outcome === 'ok'), `the read's record: ${short(records)}`);
});

/**
 * One instance serving `dir` with the guarded catalog as it is (delete_file
 * confirmed by a human) on the database, through the v2 client pinned to
 * 2026-07-28 over stdio, which can be asked (elicitation).
 */
async function serveModernInstance(t, dir) {
  const catalogFile = path.join(dir, 'catalog.json');
  fs.copyFileSync(GUARDED_CATALOG, catalogFile); // its commands run in the catalog's folder
  const transport = new ModernStdioTransport({
    command: TOOLMUX_BIN,
    args: ['serve', '--root', dir, '--data-dir', makeTempDir('toolmux-data-'), '--catalog', catalogFile, '--store', 'postgresql'],
    env: { PATH: process.env.PATH, TOOLMUX_POSTGRES_URL: conninfo },
    stderr: 'pipe',
  });
  const client = new ModernClient({ name: 'toolmux-e2e-pg', version: '0.0.0' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  t.after(() => client.close().catch(() => {}));
  await client.connect(transport);
  return client;
}

test('a confirmation used through one instance is refused through the other', async (t) => {
  const dir = makeTempDir('toolmux-pg-journal-');
  writeTree(dir, { 'notes.txt': 'old notes\n' });
  const [first, second] = await Promise.all([serveModernInstance(t, dir), serveModernInstance(t, dir)]);
  const call = { name: 'delete_file', arguments: { path: 'notes.txt' } };
  const question = await first.callTool(call, { allowInputRequired: true });
  assert.equal(question.resultType, 'input_required', short(question));
  const retry = {
    ...call,
    requestState: question.requestState,
    inputResponses: { 'io.toolmux/confirm': { action: 'accept', content: { approve: true, approver: 'Ada Lovelace', rationale: 'stale notes' } } },
  };
  const done = await first.callTool(retry);
  assert.notEqual(done.isError, true, short(done));
  assert.ok(!fs.existsSync(path.join(dir, 'notes.txt')));

  // The state opens on the other instance (one state key in the store), and
  // its answer is known there as used.
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'new notes\n');
  const again = await second.callTool(retry);
  assert.equal(again.isError, true, short(again));
  assert.match(textOf(again), /this confirmation was already used/);
  assert.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'new notes\n');
});

test('toolmux audit --store postgresql without a connection string says where to put one', async () => {
  const run = await runCli(['audit', '--store', 'postgresql'], { env: { TOOLMUX_POSTGRES_URL: '' } });
  assert.equal(run.code, 1, run.stdout);
  assert.match(run.stderr, /TOOLMUX_POSTGRES_URL/);
});
