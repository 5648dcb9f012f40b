// The commands that read the journal and switch the write freeze, through the
// binary: `toolmux journal`, `toolmux audit`, `toolmux freeze`; and `toolmux
// results` beside a running server.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  TOOLMUX_BIN,
  genCharsText,
  limitsCatalog,
  makeTempDir,
  parseOffloadNotice,
  runCli,
  serveStore,
  short,
  textOf,
} from './helpers.mjs';

// runCli with an environment of its own (for the default data directory).
function runWithEnv(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(TOOLMUX_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('toolmux freeze: on with a reason, status, off, in the data directory given', async () => {
  const dir = makeTempDir('toolmux-freeze-');
  const file = path.join(dir, 'write-freeze');
  let r = await runCli(['freeze', 'status', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `Write freeze off in ${dir}.\n`);

  r = await runCli(['freeze', 'on', '--reason', 'incident 42: database migration', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `Write freeze on in ${dir}: servers on it refuse every tool but read_only ones.\n`);
  assert.equal(fs.readFileSync(file, 'utf8'), 'incident 42: database migration');
  assert.deepEqual(fs.readdirSync(dir), ['write-freeze'], 'a temporary file was left behind');

  r = await runCli(['freeze', 'status', '--data-dir', dir]);
  assert.equal(r.stdout, `Write freeze on in ${dir}: incident 42: database migration.\n`);

  r = await runCli(['freeze', 'off', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `Write freeze off in ${dir}.\n`);
  assert.equal(fs.existsSync(file), false);
  r = await runCli(['freeze', 'status', '--data-dir', dir]);
  assert.equal(r.stdout, `Write freeze off in ${dir}.\n`);
});

test("toolmux freeze: without --data-dir, serve's default data directory", async () => {
  const state = makeTempDir('toolmux-state-');
  const r = await runWithEnv(['freeze', 'on'], { XDG_STATE_HOME: state });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(fs.readFileSync(path.join(state, 'toolmux', 'write-freeze'), 'utf8'), '');
  const status = await runWithEnv(['freeze', 'status'], { XDG_STATE_HOME: state });
  assert.equal(status.stdout, `Write freeze on in ${path.join(state, 'toolmux')} (no reason given).\n`);
});

test('toolmux freeze: a bad action or a misplaced --reason is a usage error (exit 2)', async () => {
  for (const [args, message] of [
    [['freeze'], 'freeze needs on, off or status'],
    [['freeze', 'maybe'], 'freeze needs on, off or status, not "maybe"'],
    [['freeze', 'off', '--reason', 'x'], '--reason goes with freeze on'],
  ]) {
    const r = await runCli(args);
    assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code}; ${r.stderr}`);
    assert.ok(r.stderr.startsWith(`toolmux: ${message}\n`), r.stderr);
  }
});

test('toolmux audit --since: a bad time is a usage error naming it (exit 2)', async () => {
  const dir = makeTempDir('toolmux-audit-');
  const r = await runCli(['audit', '--since', 'last tuesday', '--data-dir', dir]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.ok(
    r.stderr.startsWith(
      'toolmux: --since needs an RFC 3339 time (2026-12-01T10:00:00Z) or a duration back from now ' +
        '(90s, 15m, 2h, 7d), not "last tuesday"\n',
    ),
    r.stderr,
  );
  assert.deepEqual(fs.readdirSync(dir), [], 'a usage error wrote to the data directory');
});

test('toolmux journal and audit: an empty data directory has nothing to list, and nothing is written', async () => {
  const dir = makeTempDir('toolmux-journal-');
  let r = await runCli(['journal', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `No journaled calls in ${dir}/journal.\n`);
  r = await runCli(['audit', '--data-dir', dir, '--since', '7d', '--tool', 'delete_file']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `No audit records in ${dir}/journal match those filters.\n`);
  for (const args of [['journal', '--json'], ['audit', '--json']]) {
    r = await runCli([...args, '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '', 'JSON Lines of nothing is no line');
  }
  assert.deepEqual(fs.readdirSync(dir), []);
});

test('toolmux journal: a slot that cannot be read is an error naming it (exit 1)', async () => {
  const dir = makeTempDir('toolmux-journal-');
  const slot = path.join(dir, 'journal', 'slot-0');
  fs.mkdirSync(slot, { recursive: true });
  fs.writeFileSync(path.join(slot, 'CURRENT'), 'MANIFEST-000099\n');
  const r = await runCli(['journal', '--data-dir', dir]);
  assert.equal(r.code, 1, r.stdout);
  assert.ok(r.stderr.startsWith(`toolmux: could not read the journal in ${slot}: `), r.stderr);
});

test("toolmux results: a running server's stored result is listed and shown, not deleted; it goes with its session", async (t) => {
  const session = await serveStore(t, { catalog: limitsCatalog('offload_small.catalog.json') });
  const stored = await session.client.callTool({ name: 'gen_chars', arguments: { count: 30000 } });
  assert.notEqual(stored.isError, true, short(stored));
  const notice = parseOffloadNotice(textOf(stored));
  assert.ok(notice, short(stored));
  const dir = session.dataDir;

  let r = await runCli(['results', 'list', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.match(lines[0], /^CREATED {19}ID {43}SESSION {7}BYTES {7}PAGES  TYPE$/);
  assert.match(
    lines[1],
    new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]{12}Z  ${notice.id}  [0-9a-f]{12}  ${notice.bytes} +2 {6}text/plain$`),
  );
  assert.equal(lines.length, 3, r.stdout);

  r = await runCli(['results', 'show', notice.id, '--page', '2', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout.includes('PAGE     2 of 2: characters 20000 to 30000\n\n'), r.stdout);
  const tail = `\n\n${Array.from(genCharsText(30000)).slice(20000).join('')}\n`;
  assert.ok(r.stdout.endsWith(tail), short(r.stdout));

  r = await runCli(['results', 'delete', notice.id, '--data-dir', dir]);
  assert.equal(r.code, 1, r.stdout);
  assert.equal(
    r.stderr,
    `toolmux: result ${notice.id} is in ${path.join(dir, 'results', 'slot-0')}, which a running toolmux holds: ` +
      'only that process can delete it (when its session ends, or past the retention)\n',
  );

  await session.client.close();  // over stdio the session ends with the process
  r = await runCli(['results', 'delete', notice.id, '--data-dir', dir]);
  assert.equal(r.code, 1, r.stdout);
  assert.equal(r.stderr, `toolmux: no stored result ${notice.id}\n`);
});

test('toolmux audit verify: the chain a running server wrote is intact, and verify writes nothing', async (t) => {
  const empty = makeTempDir('toolmux-journal-');
  let r = await runCli(['audit', 'verify', '--data-dir', empty]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `No chained audit records in ${empty}/journal.\n`);
  assert.deepEqual(fs.readdirSync(empty), []);

  const session = await serveStore(t, { files: { 'a.txt': 'hello' } });
  for (let n = 0; n < 3; n++) {
    const read = await session.client.callTool({ name: 'read_text_file', arguments: { path: 'a.txt' } });
    assert.notEqual(read.isError, true, short(read));
  }
  r = await runCli(['audit', 'verify', '--data-dir', session.dataDir]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^3 records, chain intact from \d{4}-\d\d-\d\dT[\d:.]{12}Z to \d{4}-\d\d-\d\dT[\d:.]{12}Z\.\n$/);
});
