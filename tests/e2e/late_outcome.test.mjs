// Late outcomes (issue 31): a native tool that goes on past its timeout, or
// past its caller's cancellation, has what it came to recorded when it ends.
// The example built on the library (examples/conformance-server) serves
// slow_write, a local_mutation that takes 2.5 s whatever it is told, with a
// 1 s timeout. Through the 1.x SDK client (legacy era) and the v2 client
// pinned to 2026-07-28, both over stdio: the caller's answer is audited at
// once, a retry with the same idempotency key is told the call is still
// running (it does not run twice), and once the tool ends its journal entry
// and a second audit record hold its real outcome, which a later retry is
// answered from.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';

import { EXAMPLE_BIN, makeTempDir, runCli, sleep, startClient, textOf, waitUntil } from './helpers.mjs';

const MODERN = '2026-07-28';
const KEY = 'io.toolmux/idempotencyKey';

/** The example serving over stdio from a fresh data directory, through a client of `kind`. */
async function serveExample(t, kind) {
  const dataDir = makeTempDir('toolmux-late-');
  const args = ['serve', '--data-dir', dataDir];
  if (kind === 'legacy') {
    const { client } = await startClient(t, { command: EXAMPLE_BIN, args });
    return { client, dataDir };
  }
  const client = new ModernClient(
    { name: 'toolmux-e2e-late', version: '0.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } },
  );
  t.after(() => client.close().catch(() => {}));
  await client.connect(new ModernStdioTransport({ command: EXAMPLE_BIN, args, stderr: 'pipe' }));
  return { client, dataDir };
}

/** `toolmux audit --json` of `dataDir`, or `toolmux journal --json`: parsed lines. */
async function records(what, dataDir) {
  const run = await runCli([what, '--json', '--data-dir', dataDir]);
  assert.equal(run.code, 0, `toolmux ${what}: ${run.stderr}`);
  return run.stdout.split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line));
}

const outcomesOf = (audit, callId) => audit.filter((r) => r.call_id === callId).map((r) => r.outcome);

describe('late outcomes of a native tool', { concurrency: 2 }, () => {
  for (const kind of ['legacy', 'modern']) {
    test(`${kind}: past its timeout, the real outcome is journaled when the tool ends; a retry meanwhile does not run it again`, async (t) => {
      const { client, dataDir } = await serveExample(t, kind);
      const call = { name: 'slow_write', arguments: {}, _meta: { [KEY]: `late-${kind}` } };

      const timedOut = await client.callTool(call);
      assert.equal(timedOut.isError, true, textOf(timedOut));
      assert.match(textOf(timedOut), /timed out after 1000 ms/);
      const [entry] = await records('journal', dataDir);
      assert.equal(entry.state, 'running', JSON.stringify(entry));
      assert.deepEqual(outcomesOf(await records('audit', dataDir), entry.call_id), ['timed_out']);

      // While the tool goes on, the same key is not run a second time.
      const during = await client.callTool(call);
      assert.equal(during.isError, true, textOf(during));
      assert.match(textOf(during), /is still running; ask again once it has ended/);

      await waitUntil(async () => (await records('journal', dataDir))[0].outcome === 'ok', 10000, 'the late outcome');
      const audit = await records('audit', dataDir);
      assert.deepEqual(outcomesOf(audit, entry.call_id), ['timed_out', 'ok']);

      const after = await client.callTool(call);
      assert.notEqual(after.isError, true, textOf(after));
      assert.equal(textOf(after), 'written');
      assert.equal(after._meta?.['io.toolmux/replayed'], true);
      assert.equal((await records('journal', dataDir)).length, 1, 'the tool ran again');
    });

    test(`${kind}: a cancelled call is audited cancelled, then its real outcome when the tool ends`, async (t) => {
      const { client, dataDir } = await serveExample(t, kind);
      const controller = new AbortController();
      // The 1.x client takes a result schema before the options; the v2 client does not.
      const params = { name: 'slow_write', arguments: {} };
      const options = { signal: controller.signal };
      const answered = kind === 'legacy' ? client.callTool(params, undefined, options) : client.callTool(params, options);
      // Cancelled well within its 1 s timeout.
      await sleep(200);
      controller.abort();
      await assert.rejects(answered);
      const [entry] = await records('journal', dataDir);
      await waitUntil(async () => outcomesOf(await records('audit', dataDir), entry.call_id).length === 2, 10000, 'both records');
      assert.deepEqual(outcomesOf(await records('audit', dataDir), entry.call_id), ['cancelled', 'ok']);
      const [ended] = await records('journal', dataDir);
      assert.equal(ended.outcome, 'ok');
    });
  }
});
