// `toolmux store backup` beside a server that keeps writing, and `toolmux
// store restore` of what it took: every call acknowledged before the backup
// began is in the restored journal and audit trail, and every result offloaded
// before it is in the restored result store; the restored state serves again;
// a data directory a server holds is never restored over. With a PostgreSQL
// store, the pg_dump and pg_restore procedure they print, run as printed.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { HttpServer, connectHttp, makeRoot, makeTempDir, parseOffloadNotice, runCli, short, startClient, startPostgres, textOf, waitUntil } from './helpers.mjs';
import { CATALOG } from './crash_helpers.mjs';


/** `toolmux COMMAND --json --data-dir DIR`: its lines, parsed. */
async function jsonLines(command, dataDir) {
  const run = await runCli([...command, '--json', '--data-dir', dataDir]);
  assert.equal(run.code, 0, `toolmux ${command.join(' ')}: ${run.stderr}`);
  return run.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

test('a backup taken under load holds every acknowledged write; restored, audit, journal and results list each', async (t) => {
  const server = await HttpServer.start(t, { catalog: CATALOG, args: ['--allow-writes'] });
  const sessions = await Promise.all([0, 1, 2].map(() => connectHttp(t, server.url)));
  const writes = []; // file names of write_text_file calls, in the order acknowledged
  const offloads = []; // ids of results offloaded, in the order acknowledged
  let next = 0;
  let stop = false;
  const loops = [
    ...sessions.slice(0, 2).map(({ client }) =>
      (async () => {
        while (!stop) {
          const name = `f-${++next}.txt`;
          const result = await client.callTool({ name: 'write_text_file', arguments: { path: name, content: name } });
          assert.notEqual(result.isError, true, short(result));
          writes.push(name);
        }
      })(),
    ),
    (async () => {
      while (!stop) {
        const result = await sessions[2].client.callTool({ name: 'gen_block', arguments: { count: 9000 } });
        const notice = parseOffloadNotice(textOf(result));
        assert.ok(notice, short(result));
        offloads.push(notice.id);
      }
    })(),
  ];
  const loopsDone = Promise.all(loops);
  loopsDone.catch(() => {}); // awaited below
  await waitUntil(() => writes.length >= 10 && offloads.length >= 2, 30000, 'calls before the backup');

  // What was acknowledged before the backup began.
  const writesBefore = writes.slice();
  const offloadsBefore = offloads.slice();
  const backup = path.join(makeTempDir('toolmux-backup-'), 'nightly');
  const saved = await runCli(['store', 'backup', backup, '--data-dir', server.dataDir], { timeoutMs: 60000 });
  t.diagnostic(`${writesBefore.length} writes acknowledged before the backup, ${writes.length - writesBefore.length} while it ran`);
  // The server kept writing through the backup.
  const writesAfter = writes.length;
  await waitUntil(() => writes.length > writesAfter, 30000, 'a write after the backup');
  stop = true;
  await loopsDone;
  assert.equal(saved.code, 0, saved.stderr);
  assert.match(saved.stdout, new RegExp(`^Backed up ${server.dataDir} into ${backup}:\n`));
  for (const store of ['journal/slot-0', 'results/slot-0', 'sessions']) {
    assert.match(saved.stdout, new RegExp(`\n  ${store} +\\d+ keys, `), saved.stdout);
  }

  // Restored into a fresh folder while the server keeps its own.
  const restored = path.join(makeTempDir('toolmux-restored-'), 'state');
  const back = await runCli(['store', 'restore', backup, '--data-dir', restored], { timeoutMs: 60000 });
  assert.equal(back.code, 0, back.stderr);
  assert.ok(back.stdout.startsWith(`Restored ${backup} into ${restored} (verified first):\n`), back.stdout);

  const audited = (await jsonLines(['audit'], restored)).filter((r) => r.tool === 'write_text_file' && r.outcome === 'ok');
  const auditedPaths = new Set(audited.map((r) => r.arguments.path));
  const missingAudit = writesBefore.filter((name) => !auditedPaths.has(name));
  assert.deepEqual(missingAudit, [], `acknowledged writes missing from the restored audit trail (${writesBefore.length} acknowledged before the backup)`);
  const journaled = new Map((await jsonLines(['journal'], restored)).map((e) => [e.call_id, e]));
  for (const record of audited) {
    if (!writesBefore.includes(record.arguments.path)) continue;
    const entry = journaled.get(record.call_id);
    assert.ok(entry, `${record.arguments.path}: call ${record.call_id} is not in the restored journal`);
    assert.equal(entry.tool, 'write_text_file');
    assert.equal(entry.state, 'ok');
  }
  const stored = new Set((await jsonLines(['results', 'list'], restored)).map((r) => r.id));
  assert.deepEqual(offloadsBefore.filter((id) => !stored.has(id)), [], 'acknowledged offloads missing from the restored result store');

  // A data directory a server holds is not restored over, even with --force.
  const refused = await runCli(['store', 'restore', backup, '--data-dir', server.dataDir, '--force']);
  assert.equal(refused.code, 1, refused.stdout);
  assert.match(refused.stderr, new RegExp(`^toolmux: a running toolmux holds ${server.dataDir}/\\S+: stop the servers on ${server.dataDir} before restoring into it\n$`));
  await Promise.all(sessions.map((s) => s.close()));
  await server.stopCleanly(assert);

  // The restored state serves: a new call is journaled after the restored ones.
  const again = await HttpServer.start(t, { catalog: CATALOG, dataDir: restored, args: ['--allow-writes'] });
  const session = await connectHttp(t, again.url);
  const result = await session.client.callTool({ name: 'write_text_file', arguments: { path: 'after.txt', content: 'after' } });
  assert.notEqual(result.isError, true, short(result));
  await session.close();
  await again.stopCleanly(assert);
  const after = (await jsonLines(['audit'], restored)).filter((r) => r.tool === 'write_text_file');
  assert.equal(after.at(-1).arguments.path, 'after.txt');
  assert.ok(fs.existsSync(path.join(backup, 'toolmux-backup.json')), 'the backup is kept');
});

test('PostgreSQL: store backup and restore print the pg_dump procedure; run as printed, the restored database holds every call', async (t) => {
  const postgres = startPostgres(t);
  const live = postgres.createdb('live');
  const restoredDb = postgres.createdb('restored');
  const session = await startClient(t, {
    args: ['serve', '--root', makeRoot({}), '--data-dir', makeTempDir('toolmux-data-'), '--catalog', CATALOG, '--store', 'postgresql', '--allow-writes'],
    env: { TOOLMUX_POSTGRES_URL: live },
  });
  const names = ['a.txt', 'b.txt', 'c.txt'];
  for (const name of names) {
    const result = await session.client.callTool({ name: 'write_text_file', arguments: { path: name, content: name } });
    assert.notEqual(result.isError, true, short(result));
  }

  const dumpDir = path.join(makeTempDir('toolmux-pgdump-'), 'nightly');
  const backup = await runCli(['store', 'backup', dumpDir, '--store', 'postgresql'], { env: { TOOLMUX_POSTGRES_URL: live } });
  assert.equal(backup.code, 1, backup.stdout);
  assert.ok(backup.stderr.startsWith('toolmux: store backup does not copy a PostgreSQL store: back it up with pg_dump'), backup.stderr);
  assert.ok(!fs.existsSync(dumpDir), 'toolmux wrote the backup folder itself');
  assert.ok(!backup.stdout.includes(live), 'the connection string was printed');
  // Run as printed, while the instance keeps serving.
  execFileSync('bash', ['-euc', backup.stdout], { env: { ...process.env, TOOLMUX_POSTGRES_URL: live } });
  await session.client.close();

  const restore = await runCli(['store', 'restore', dumpDir, '--store', 'postgresql'], { env: { TOOLMUX_POSTGRES_URL: restoredDb } });
  assert.equal(restore.code, 1, restore.stdout);
  assert.match(restore.stdout, /Stop every toolmux instance on the database/);
  execFileSync('bash', ['-euc', restore.stdout], { env: { ...process.env, TOOLMUX_POSTGRES_URL: restoredDb } });

  const audit = await runCli(['audit', '--json', '--store', 'postgresql', '--tool', 'write_text_file'], { env: { TOOLMUX_POSTGRES_URL: restoredDb } });
  assert.equal(audit.code, 0, audit.stderr);
  const paths = audit.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line).arguments.path);
  assert.deepEqual(paths, names);
});
