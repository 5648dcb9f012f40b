// Losing an instance of a deployment that shares one PostgreSQL store: a
// legacy session, and a result it offloaded, live on in the store, so the
// 1.x client goes on through HAProxy after the instance that made them is
// killed with kill -9.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { POSTGRES_SH, clusterOnPostgres, connectModern } from './cluster.mjs';
import { DATA_DIR, connectHttp, genCharsText, offloadChars, parseOffloadNotice, rawInitialize, readStoredResult, short, textOf, waitUntil } from './helpers.mjs';

const execFileAsync = promisify(execFile);

const CATALOG = path.join(DATA_DIR, 'cluster', 'catalog.json');
const FILES = { 'notes.txt': 'failover\n' };
describe('an instance killed under a legacy session (PostgreSQL store)', () => {
  let cluster;
  clusterOnPostgres({ catalog: CATALOG, files: FILES }, (_pg, c) => {
    cluster = c;
  });

  test('the 1.x client goes on with its session and reads its stored result after kill -9 of the instance that made them', async (t) => {
    const [first] = cluster.instances;
    // The session is made on the first instance, which also stores a large result of it.
    const id = await rawInitialize(first.url);
    const direct = await connectHttp(t, first.url, { sessionId: id });
    const count = 20000;
    const stored = await offloadChars(assert, direct.client, count);
    await direct.close();

    // Through HAProxy (round robin, no stickiness) with the same session.
    const legacy = await connectHttp(t, cluster.url, { sessionId: id });
    for (let i = 1; i <= 3; i++) {
      const result = await legacy.client.callTool({ name: 'gen_chars', arguments: { count: i } });
      assert.equal(textOf(result), genCharsText(i), short(result));
    }

    await cluster.kill(0);

    // Every call after the kill is answered by the survivors, in the same session.
    for (let i = 4; i <= 9; i++) {
      const result = await legacy.client.callTool({ name: 'gen_chars', arguments: { count: i } });
      assert.equal(textOf(result), genCharsText(i), short(result));
    }
    const read = await readStoredResult(assert, legacy.client, stored);
    assert.equal(read.text, genCharsText(count));
    assert.equal(legacy.transport.sessionId, id);
  });
});

describe('the store unreachable for a while (PostgreSQL stopped, then started)', () => {
  let pg;
  let cluster;
  clusterOnPostgres({ instances: 1, catalog: CATALOG, files: FILES }, (p, c) => {
    pg = p;
    cluster = c;
  });

  test('what is in memory keeps working, a result that cannot be stored comes back whole, and storing comes back by itself', async (t) => {
    const [server] = cluster.instances;
    const modern = await connectModern(t, server.url);
    const count = 20000;
    await offloadChars(assert, modern.client, count);

    await execFileAsync('bash', [POSTGRES_SH, 'pause', pg.dir]);
    let paused = true;
    t.after(async () => {
      if (paused) await execFileAsync('bash', [POSTGRES_SH, 'resume', pg.dir]);
    });
    // The catalog and small answers are in memory.
    const listed = await modern.client.listTools();
    assert.ok(listed.tools.length > 0);
    const small = await modern.client.callTool({ name: 'gen_chars', arguments: { count: 5 } });
    assert.equal(textOf(small), genCharsText(5), short(small));
    // A result that would go to the store comes back whole instead (this
    // catalog cuts nothing: maxTextChars -1), with no notice of a stored result.
    const large = await modern.client.callTool({ name: 'gen_chars', arguments: { count } });
    assert.notEqual(large.isError, true, short(large, 300));
    assert.equal(parseOffloadNotice(textOf(large)), null, short(large, 300));
    assert.ok(textOf(large) === genCharsText(count), 'the whole text, unchanged');

    await execFileAsync('bash', [POSTGRES_SH, 'resume', pg.dir]);
    paused = false;
    // Reconnected with back-off (at most 5 s between attempts).
    await waitUntil(async () => {
      const again = await modern.client.callTool({ name: 'gen_chars', arguments: { count } });
      return again.isError !== true && parseOffloadNotice(textOf(again));
    }, 15000, 'offloading to work again after the store came back');
    assert.ok(server.logs.some((l) => /store/.test(JSON.stringify(l)) && l.level === 'warning'), 'a warning says the store was unreachable');
  });
});
