// `toolmux serve --store postgresql`: offloaded results kept in PostgreSQL
// (a real server, tests/support/postgres.sh, started in a temporary folder),
// so that a result offloaded through one instance is read back through
// another; the connection string from $TOOLMUX_POSTGRES_URL or
// --store-url-file, never from the command line; an unreachable store refused
// at start, naming where and never the password.
//
// The catalog (tests/data/e2e/http/catalog.json) offloads results over 8192
// bytes; gen_chars makes them.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';

import {
  DATA_DIR,
  HTTP_CATALOG,
  HttpServer,
  REPO_ROOT,
  connectHttp,
  genCharsText,
  offloadChars,
  readStoredResult,
  runCli,
  serveStore,
  short,
  waitUntil,
} from './helpers.mjs';

const POSTGRES_SH = path.join(REPO_ROOT, 'tests/support/postgres.sh');

// One server for the file, a database per test.
let parent;
let serverDir;
let databases = 0;

before(() => {
  // Short: the socket's path is at most 107 bytes. Searchable by nobody, the
  // server's user when the tests run as root.
  parent = fs.mkdtempSync('/tmp/tmpg-');
  fs.chmodSync(parent, 0o755);
  serverDir = path.join(parent, 'pg');
  execFileSync('bash', [POSTGRES_SH, 'start', serverDir], { encoding: 'utf8' });
});

after(() => {
  if (serverDir) execFileSync('bash', [POSTGRES_SH, 'stop', serverDir]);
  if (parent) fs.rmSync(parent, { recursive: true, force: true });
});

/** A fresh database: { url (its connection string), name }. */
function freshDatabase() {
  const name = `e2e_${++databases}`;
  const url = execFileSync('bash', [POSTGRES_SH, 'createdb', serverDir, name], { encoding: 'utf8' }).trim();
  return { url, name };
}

/** One query's rows, with psql (unaligned, tuples only). */
function psql(url, sql) {
  const bin = fs.readdirSync('/usr/lib/postgresql').sort().reverse()[0];
  return execFileSync(`/usr/lib/postgresql/${bin}/bin/psql`, [url, '-Atc', sql], { encoding: 'utf8' }).trim();
}

/** The v2 client pinned to 2026-07-28 (no session: its results are its principal's). */
async function connectModern(t, url) {
  const client = new ModernClient(
    { name: 'toolmux-e2e-shared', version: '0.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  t.after(() => client.close().catch(() => {}));
  await client.connect(new ModernTransport(new URL(url)));
  return client;
}

test('with --store postgresql, a result offloaded through one instance is read back through another', async (t) => {
  const db = freshDatabase();
  const env = { TOOLMUX_POSTGRES_URL: db.url };
  const args = ['--store', 'postgresql'];
  const first = await HttpServer.start(t, { catalog: HTTP_CATALOG, args, env });
  const second = await HttpServer.start(t, { catalog: HTTP_CATALOG, args, env });

  // Each instance says which it is and where its store is: host, port and database.
  const started = [first, second].map((server) => server.logs.find((line) => line.event === 'instance'));
  for (const line of started) {
    assert.ok(line, 'no "instance" log line');
    assert.equal(line.store, 'postgresql');
    assert.equal(line.store_at, `host ${serverDir} port 5432 database ${db.name}`);
    assert.match(line.instance, /^[A-Za-z0-9_-]{16}$/);
  }
  assert.notEqual(started[0].instance, started[1].instance);
  const status = await (await fetch(`${first.origin}/status.json`)).json();
  assert.equal(status.server.instance, started[0].instance);
  assert.equal(status.server.store, 'postgresql');

  const count = 30000;
  const id = await offloadChars(assert, await connectModern(t, first.url), count);
  const read = await readStoredResult(assert, await connectModern(t, second.url), id, { maxChars: 7000 });
  assert.equal(read.pages, 5);
  assert.ok(read.text === genCharsText(count), `read back ${read.totalChars} characters, not the ${count} made`);
  // It is in the database, in chunks.
  assert.equal(psql(db.url, `SELECT count(*) FROM toolmux_results WHERE id = '${id}'`), '1');
  assert.equal(psql(db.url, `SELECT sum(chars) FROM toolmux_result_chunks WHERE result_id = '${id}'`), String(count));

  // A legacy client's results are its session's; its session is on one instance.
  const legacy = await connectHttp(t, first.url);
  const own = await offloadChars(assert, legacy.client, 9000);
  const back = await readStoredResult(assert, legacy.client, own);
  assert.ok(back.text === genCharsText(9000));
});

test('what tool_search learns through one instance ranks on the others, from the store', async (t) => {
  const db = freshDatabase();
  const env = { TOOLMUX_POSTGRES_URL: db.url };
  const catalog = path.join(DATA_DIR, 'learning_catalog.json');
  const args = ['--store', 'postgresql'];
  const first = await HttpServer.start(t, { catalog, args, env });
  const second = await HttpServer.start(t, { catalog, args, env });
  const query = 'send a message to a channel';
  const ranking = async (client) => {
    const result = await client.callTool({ name: 'tool_search', arguments: { query, limit: 10 } });
    assert.equal(result.isError, false, short(result));
    return result.structuredContent.tools.map((tool) => tool.name);
  };
  const there = await connectModern(t, second.url);
  const before = await ranking(there);

  // The same principal searches and calls the third tool through the first instance.
  const here = await connectModern(t, first.url);
  assert.deepEqual(await ranking(here), before);
  const called = await here.callTool({ name: before[2], arguments: { text: 'hello team' } });
  assert.equal(called.isError, false, short(called));

  // The second instance ranks it first within a few seconds (each sends and
  // reads every 2 s), the others keeping their order.
  let after = before;
  await waitUntil(async () => (after = await ranking(there))[0] === before[2], 8000, `${before[2]} first on the second instance`);
  assert.deepEqual(after.filter((name) => name !== before[2]), before.filter((name) => name !== before[2]));
  // Normalized words and the tool's name only: never the call's arguments.
  assert.equal(psql(db.url, `SELECT string_agg(DISTINCT tool, ',') || ' ' || string_agg(DISTINCT term, ',' ORDER BY term) FROM toolmux_search_memory`), `${before[2]} channel,messag,send`);
  // The data directories keep no memory file of their own.
  for (const server of [first, second]) assert.ok(!fs.existsSync(path.join(server.dataDir, 'search-memory')));
});

test('the connection string may come from --store-url-file (first line), over stdio too', async (t) => {
  const db = freshDatabase();
  const file = path.join(fs.mkdtempSync('/tmp/toolmux-url-'), 'store-url');
  t.after(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }));
  fs.writeFileSync(file, `  ${db.url}  \nignored second line\n`, { mode: 0o600 });
  const { client } = await serveStore(t, {
    catalog: HTTP_CATALOG,
    args: ['--store', 'postgresql', '--store-url-file', file],
    env: { TOOLMUX_POSTGRES_URL: 'host=/nonexistent dbname=unused' },
  });
  const id = await offloadChars(assert, client, 10000);
  const read = await readStoredResult(assert, client, id);
  assert.ok(read.text === genCharsText(10000));
  assert.equal(psql(db.url, 'SELECT count(*) FROM toolmux_results'), '1');
  assert.equal(psql(db.url, 'SELECT max(version) > 0 FROM toolmux_schema'), 't');
});

test('a connection string on the command line is refused, and not repeated', async () => {
  for (const args of [
    ['serve', '--store', 'postgresql://toolmux:s3cret@localhost/db'],
    ['serve', '--store=host=localhost password=s3cret'],
    ['serve', '--store', 'postgresql', 'postgres://toolmux:s3cret@localhost/db'],
  ]) {
    const { code, stderr } = await runCli(args);
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      /^toolmux: --store takes rocksdb or postgresql, not a connection string \(the command line is visible to every user of the machine and it may hold a password\): give --store postgresql and the connection string in \$TOOLMUX_POSTGRES_URL or in a file named by --store-url-file\n/,
    );
    assert.ok(!stderr.includes('s3cret'), stderr);
  }
});

test('an unreachable store at start is a clear error naming where, at once, without the password', async () => {
  const began = performance.now();
  const { code, stderr } = await runCli(['serve', '--store', 'postgresql'], {
    env: { TOOLMUX_POSTGRES_URL: 'host=/tmp/toolmux-no-such-server port=5432 dbname=nowhere password=s3cret' },
  });
  assert.equal(code, 2, stderr);
  assert.ok(
    stderr.startsWith('toolmux: refusing to start: cannot reach the store at host /tmp/toolmux-no-such-server port 5432 database nowhere: '),
    stderr,
  );
  assert.ok(!stderr.includes('s3cret'), stderr);
  assert.ok(performance.now() - began < 8000, 'took longer than the connect timeout');

  const missing = await runCli(['serve', '--store', 'postgresql'], { env: { TOOLMUX_POSTGRES_URL: '' } });
  assert.equal(missing.code, 2);
  assert.equal(
    missing.stderr,
    'toolmux: refusing to start: --store postgresql needs a connection string: set TOOLMUX_POSTGRES_URL or give --store-url-file FILE\n',
  );
});
