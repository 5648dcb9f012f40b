// kill -9 while write_text_file writes 8 MB, then a restart on the same
// --data-dir: the file is the old or the new content, and no partial file is
// left.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { HttpServer, connectHttp, makeRoot, short, sleep } from './helpers.mjs';
import { CATALOG, kill9, whenOrAfter, writingIn } from './crash_helpers.mjs';

test('kill -9 during write_text_file of 8 MB: the file is the old or the new content, and no partial file is left', async (t) => {
  const root = makeRoot({ 'big.txt': 'the first content\n' });
  const target = path.join(root, 'big.txt');
  let server = await HttpServer.start(t, { catalog: CATALOG, root, args: ['--allow-writes'] });
  const dataDir = server.dataDir;
  let lastAcknowledged = 'the first content\n';
  let version = 0;
  const contentOf = (n) => `version ${n}\n${String(n % 10).repeat(8 << 20)}\nend of version ${n}\n`;
  // Killed while toolmux has the new content's file open (mid-write), and at
  // fixed offsets.
  for (const killAt of ['mid-write', 'mid-write', 'mid-write', 100, 400]) {
    const session = await connectHttp(t, server.url);
    let stop = false;
    let pending = null;
    const writer = (async () => {
      while (!stop) {
        const n = ++version;
        pending = contentOf(n);
        try {
          const result = await session.client.callTool({ name: 'write_text_file', arguments: { path: 'big.txt', content: pending } });
          if (stop) return;
          assert.notEqual(result.isError, true, short(result));
          lastAcknowledged = pending;
          pending = null;
        } catch (error) {
          if (!stop) throw error;
          return;
        }
      }
    })();
    const when = killAt === 'mid-write' ? 'mid-write' : `${killAt} ms in`;
    if (killAt === 'mid-write') assert.equal(await whenOrAfter(() => writingIn(server.child.pid, root), 10000), 'when', 'no write was seen');
    else await sleep(killAt);
    stop = true;
    await kill9(server);
    await writer;
    await session.close();

    const now = fs.readFileSync(target, 'utf8');
    assert.ok(
      now === lastAcknowledged || now === pending,
      `after a kill ${when} big.txt is neither the last acknowledged content nor the one being written: ${now.length} bytes starting ${JSON.stringify(now.slice(0, 20))}`,
    );
    // No file with part of a content. (A kill between naming the finished
    // file and renaming it over big.txt, two system calls, would leave a
    // whole copy.)
    for (const name of fs.readdirSync(root)) {
      if (name === 'big.txt') continue;
      const left = fs.readFileSync(path.join(root, name), 'utf8');
      assert.ok(left === pending, `after a kill ${when} a partial file is left: ${name}, ${left.length} of ${pending?.length} bytes`);
    }
    lastAcknowledged = now;
    server = await HttpServer.start(t, { catalog: CATALOG, root, dataDir, args: ['--allow-writes'] });
  }
  await server.stopCleanly(assert);
});
