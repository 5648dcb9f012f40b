// kill -9 while results are being offloaded (results of 1 to 1.5 MB, both
// the WriteBatch and the ingested-table-file path of the result store), then
// a restart on the same --data-dir: every result the client was told about
// reads back whole, and no partial one is visible.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import {
  HttpServer,
  connectHttp,
  makeRoot,
  parseOffloadNotice,
  short,
  sleep,
  textOf,
} from './helpers.mjs';
import { CATALOG, assertSameText, blockText, kill9, namesIn, readResource, whenOrAfter } from './crash_helpers.mjs';

test('kill -9 while results are being offloaded: every acknowledged result reads back whole, no partial one is listed', async (t) => {
  const root = makeRoot({});
  let server = await HttpServer.start(t, { catalog: CATALOG, root });
  const dataDir = server.dataDir;
  let session = await connectHttp(t, server.url);
  const sessionId = session.transport.sessionId;
  const acknowledged = new Map(); // id -> count
  const verified = new Set(); // ids read back whole after a restart
  let nextCount = 0;
  let inFlight = 0;
  let midWrite = 0; // rounds killed while a table file was being written
  // Rounds of calls from three clients at once: one asks for 1.5 MB results,
  // written as a table file and ingested; two for 1 MB ones, written in one
  // WriteBatch. Two rounds are killed as soon as a table file shows up
  // (mid-write), one at a fixed offset.
  const ingest = path.join(dataDir, 'results', 'slot-0', 'ingest');
  const rounds = [{ whenTableFile: true }, { whenTableFile: true }, { afterMs: 900 }];
  for (const [round, { whenTableFile, afterMs }] of rounds.entries()) {
    let stop = false;
    const worker = async (w) => {
      for (let i = 0; !stop; i++) {
        const count = (w === 0 ? 600_000 : w === 1 ? 400_000 : 380_000) - 100 * nextCount++;
        inFlight++;
        try {
          const result = await session.client.callTool({ name: 'gen_block', arguments: { count } });
          if (stop) return; // answered after the kill began: not counted as acknowledged
          const notice = parseOffloadNotice(textOf(result));
          assert.ok(notice, `no offload notice in ${short(result)}`);
          acknowledged.set(notice.id, count);
        } catch (error) {
          if (!stop) throw error;
          return;
        } finally {
          inFlight--;
        }
      }
    };
    const workers = [0, 1, 2].map(worker);
    const started = Date.now();
    const why = whenTableFile ? await whenOrAfter(() => namesIn(ingest).length > 0, 5000) : (await sleep(afterMs), 'after');
    const busy = inFlight;
    stop = true;
    await kill9(server);
    const killedAfter = Date.now() - started;
    await Promise.all(workers);
    await session.close();
    // Table files of results that were being written when the kill came.
    const unfinished = namesIn(ingest).length;
    t.diagnostic(
      `round ${round}: killed ${why === 'when' ? 'as a table file appeared' : 'at an offset'}, ${killedAfter} ms in, ` +
        `with ${busy} calls in flight and ${unfinished} table files unfinished; ${acknowledged.size} acknowledged so far`,
    );
    if (unfinished > 0) midWrite++;

    server = await HttpServer.start(t, { catalog: CATALOG, root, dataDir });
    session = await connectHttp(t, server.url, { sessionId });
    // Every result acknowledged since the last restart, byte for byte (the
    // earlier ones were read after an earlier restart; all are read again at
    // the end).
    for (const [id, count] of acknowledged) {
      if (verified.has(id)) continue;
      assertSameText(await readResource(session.client, id), blockText(count), `result ${id} (count ${count})`);
      verified.add(id);
    }
    // Whatever the session lists is whole: acknowledged, or finished just
    // before the kill; never a prefix.
    const listed = (await session.client.listResources()).resources.map((r) => r.uri.slice('toolmux://results/'.length));
    for (const id of acknowledged.keys()) assert.ok(listed.includes(id), `acknowledged result ${id} is not listed`);
    for (const id of listed) {
      if (acknowledged.has(id)) continue;
      const text = await readResource(session.client, id);
      const end = /\nend of (\d+)\n$/.exec(text);
      assert.ok(end, `listed result ${id} is cut: ${text.length} UTF-16 units ending ${JSON.stringify(text.slice(-40))}`);
      assertSameText(text, blockText(Number(end[1])), `listed result ${id}`);
      acknowledged.set(id, Number(end[1]));
      verified.add(id);
    }
  }
  for (const [id, count] of acknowledged) {
    assertSameText(await readResource(session.client, id), blockText(count), `at the end, result ${id} (count ${count})`);
  }
  // A table file can be finished between being seen and the kill: one of
  // the two rounds aimed at it must have landed.
  assert.ok(midWrite >= 1, 'no kill landed while a table file was being written');
  assert.ok(acknowledged.size >= 3, `only ${acknowledged.size} results were acknowledged: the rounds were too short to test anything`);
  await server.stopCleanly(assert);
});
