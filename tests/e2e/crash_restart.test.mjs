// A restart on the same --data-dir (after SIGTERM and after kill -9): a
// restored session still sees its offloaded results as resources, before
// anything else has opened the result store.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { HttpServer, connectHttp, makeRoot, parseOffloadNotice, textOf } from './helpers.mjs';
import { CATALOG, assertSameText, blockText, kill9, readResource } from './crash_helpers.mjs';

test('after a restart, a restored session lists and reads its results as resources before anything else opens the store', async (t) => {
  for (const how of ['SIGTERM', 'SIGKILL']) {
    const root = makeRoot({});
    const first = await HttpServer.start(t, { catalog: CATALOG, root });
    const a = await connectHttp(t, first.url);
    const result = await a.client.callTool({ name: 'gen_block', arguments: { count: 5000 } });
    const id = parseOffloadNotice(textOf(result)).id;
    await a.close();
    if (how === 'SIGKILL') await kill9(first);
    else await first.stopCleanly(assert);

    const second = await HttpServer.start(t, { catalog: CATALOG, root, dataDir: first.dataDir });
    const again = await connectHttp(t, second.url, { sessionId: a.transport.sessionId });
    const listed = (await again.client.listResources()).resources.map((r) => r.uri);
    assert.deepEqual(listed, [`toolmux://results/${id}`], `after ${how}`);
    assertSameText(await readResource(again.client, id), blockText(5000), `after ${how}`);
    await kill9(second);
  }
});
