// kill -9 while a mutating command appends to a file step by step, then a
// restart on the same --data-dir: the call got no answer, and the restored
// session runs the command again.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { HttpServer, connectHttp, makeRoot, short, sleep, textOf } from './helpers.mjs';
import { CATALOG, kill9 } from './crash_helpers.mjs';

test('kill -9 during a mutating command: no answer was given, the session works after the restart and the command can be run again', async (t) => {
  const root = makeRoot({});
  const file = path.join(root, 'steps.txt');
  const server = await HttpServer.start(t, { catalog: CATALOG, root });
  const session = await connectHttp(t, server.url);
  const sessionId = session.transport.sessionId;
  const call = session.client.callTool({ name: 'append_steps', arguments: { path: file, steps: 10 } }).catch((error) => error);
  // Until it has written two steps of 10 (2 s in all).
  for (let i = 0; i < 500 && !(fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('step 2\n')); i++) await sleep(10);
  await kill9(server);
  assert.ok((await call) instanceof Error, 'the call got an answer from a killed server');
  // toolmux does not stop a command it was running when it is killed (see
  // docs/catalog-file.md): wait until this one has stopped writing.
  let seen = '';
  for (let i = 0; i < 100; i++) {
    await sleep(300);
    const now = fs.readFileSync(file, 'utf8');
    if (now === seen) break;
    seen = now;
  }
  assert.ok(/^(step \d+\n)+$/.test(seen), JSON.stringify(seen));

  const again = await HttpServer.start(t, { catalog: CATALOG, root, dataDir: server.dataDir });
  const resumed = await connectHttp(t, again.url, { sessionId });
  fs.rmSync(file);
  const result = await resumed.client.callTool({ name: 'append_steps', arguments: { path: file, steps: 2 } });
  assert.equal(textOf(result), 'appended\n', short(result));
  assert.equal(fs.readFileSync(file, 'utf8'), 'step 1\nstep 2\n');
  await again.stopCleanly(assert);
});
