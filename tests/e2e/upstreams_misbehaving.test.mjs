// An upstream that misbehaves on purpose (tests/data/upstreams/misbehaving.sh,
// catalog tests/data/e2e/upstreams/misbehaving.json), aggregated by the real
// toolmux binary over stdio and driven by the SDK client: whatever it sends,
// each call gets an answer at once, and a broken one is an error naming it.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { CreateMessageRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { DATA_DIR, makeTempDir, startClient, textOf } from './helpers.mjs';

const CATALOG = path.join(DATA_DIR, 'upstreams', 'misbehaving.json');
// Under a sanitizer (scripts/sanitize.sh) relaying the flood is several times
// slower: its tool gets 120 s instead of 30 s, in a copy of the catalog.
const SANITIZER = process.env.TOOLMUX_E2E_SANITIZER;
const FLOOD_TIMEOUT_MS = SANITIZER ? 120000 : 30000;

function catalogFor(dir) {
  if (!SANITIZER) return CATALOG;
  const catalog = JSON.parse(fs.readFileSync(CATALOG, 'utf8'));
  const upstream = catalog.upstreams.misbehaving;
  upstream.cwd = path.dirname(CATALOG);
  upstream.tools.floods.timeoutMs = FLOOD_TIMEOUT_MS;
  const file = path.join(dir, 'misbehaving.json');
  fs.writeFileSync(file, JSON.stringify(catalog));
  return file;
}

async function serveMisbehaving(t, clientCapabilities = {}) {
  const dir = makeTempDir('toolmux-misbehaving-');
  return startClient(t, {
    args: ['serve', '--root', dir, '--catalog', catalogFor(dir), '--data-dir', path.join(dir, 'data')],
    clientCapabilities,
  });
}

test('a sampling request sent just before the result does not hold the result back', async (t) => {
  const { client } = await serveMisbehaving(t, { sampling: {} });
  let asked = 0;
  // A client slow to answer: later than the call's 10 s timeout.
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    asked += 1;
    await new Promise((resolve) => setTimeout(resolve, 15000).unref());
    return { role: 'assistant', model: 'late', content: { type: 'text', text: 'late' } };
  });
  const result = await client.callTool({ name: 'misbehaving_asks_first', arguments: {} });
  assert.equal(result.isError, false, JSON.stringify(result));
  assert.equal(textOf(result), 'answered');
  assert.equal(asked, 1);
});

test('a flood of log messages is cut to a rate, and the answer still comes', async (t) => {
  const { client, stderr } = await serveMisbehaving(t);
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.setLoggingLevel('debug');
  const result = await client.callTool({ name: 'misbehaving_floods', arguments: {} }, undefined, {
    timeout: FLOOD_TIMEOUT_MS + 10000,
  });
  assert.equal(result.isError, false, JSON.stringify(result));
  assert.equal(textOf(result), 'survived');

  const relayed = logs.filter((p) => p.data === 'flood').length;
  const told = logs.filter((p) => p.data?.event === 'upstream_log_dropped');
  assert.ok(relayed >= 200 && relayed < 2000, `${relayed} relayed`);
  assert.ok(told.length >= 1, 'the client is told how many were dropped');
  assert.equal(told[0].level, 'warning');
  assert.match(told[0].data.message, /^toolmux dropped \d+ log messages from upstream "misbehaving"/);
  assert.equal(relayed + told.reduce((sum, p) => sum + p.data.dropped, 0), 100000);
  // toolmux's own log: as many lines, and the count.
  const lines = stderr().split('\n');
  assert.equal(lines.filter((l) => l.includes('"event":"upstream_log"')).length, relayed);
  assert.ok(lines.some((l) => /"event":"upstream_log_dropped".*"message":"dropped \d+ log messages from upstream \\"misbehaving\\"/.test(l)));
});

test('a flood of stderr lines is cut to a rate in the log, and every dropped line is counted', async (t) => {
  const { client, stderr, close } = await serveMisbehaving(t);
  const result = await client.callTool({ name: 'misbehaving_floods_stderr', arguments: {} });
  assert.equal(result.isError, false, JSON.stringify(result));
  assert.equal(textOf(result), 'survived stderr');
  // The rest of the count is logged when the upstream's stderr ends.
  await close();
  const lines = stderr().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  const logged = lines.filter((l) => l.event === 'upstream_stderr' && l.line === 'stderr flood').length;
  const reports = lines.filter((l) => l.event === 'upstream_stderr_dropped');
  assert.ok(logged >= 200 && logged < 5000, `${logged} stderr lines logged`);
  assert.ok(reports.length >= 1, 'the log says how many lines were dropped');
  assert.equal(reports[0].upstream, 'misbehaving');
  assert.match(reports[0].message, /^dropped \d+ stderr lines from upstream "misbehaving" \(over 50 a second, in bursts of 200\)$/);
  assert.equal(logged + reports.reduce((sum, r) => sum + r.dropped, 0), 100000);
});

test('a result that breaks MCP, or is nested too deep to read, is an error naming the upstream', async (t) => {
  const { client } = await serveMisbehaving(t);
  const misshapen = await client.callTool({ name: 'misbehaving_text_not_string', arguments: {} });
  assert.equal(misshapen.isError, true, JSON.stringify(misshapen));
  assert.equal(
    textOf(misshapen),
    'upstream "misbehaving" answered tools/call with a result MCP does not allow: /content/0/text must be a string (it is a number)',
  );

  const deep = await client.callTool({ name: 'misbehaving_too_deep', arguments: {} });
  assert.equal(deep.isError, true, JSON.stringify(deep));
  assert.match(
    textOf(deep),
    /^upstream "misbehaving" answered tools\/call with a message toolmux refuses: not JSON: nested deeper than 1024 levels at byte \d+$/,
  );

  const fine = await client.callTool({ name: 'misbehaving_fine', arguments: {} });
  assert.equal(textOf(fine), 'fine');
});
