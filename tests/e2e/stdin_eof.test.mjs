// End of input over stdio: the calls already read when stdin closes are still
// answered before toolmux exits 0 (`printf '<init>\n<initialized>\n<call>\n' |
// toolmux serve`); past --shutdown-grace, a call still running is answered
// with an error saying toolmux is exiting, and its command is killed.
//
// The catalog (tests/data/e2e/calls/catalog.json) has one command tool, nap
// {seconds}, with a 60 s timeout.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { DATA_DIR, LATEST_PROTOCOL_VERSION, RawServer, makeRoot, makeTempDir, short, textOf } from './helpers.mjs';

const CALLS_CATALOG = path.join(DATA_DIR, 'calls', 'catalog.json');

/** Writes `messages` in one go and closes stdin at once, as a pipe from printf does. */
function pipeAndClose(server, messages) {
  server.child.stdin.end(messages.map((m) => `${JSON.stringify(m)}\n`).join(''));
}

const initialize = {
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'pipe', version: '0' } },
};
const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
const nap = (id, seconds) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'nap', arguments: { seconds } } });

function answerTo(server, id) {
  return server.messages.find((m) => m.id === id && ('result' in m || 'error' in m));
}

test('calls read before stdin closes are answered, then toolmux exits 0', async (t) => {
  const server = new RawServer(['serve', '--root', makeRoot({}), '--catalog', CALLS_CATALOG]);
  t.after(() => server.kill());
  pipeAndClose(server, [initialize, initialized, nap('long', '1'), nap('short', '0.2')]);
  const exit = await Promise.race([server.exited, new Promise((resolve) => setTimeout(() => resolve(null), 15000))]);
  assert.ok(exit, `toolmux still running 15 s after stdin closed; stdout: ${short(server.lines)}; stderr: ${server.stderr}`);
  assert.equal(exit.code, 0, `exit ${JSON.stringify(exit)}; stderr: ${server.stderr}`);
  assert.ok(answerTo(server, 'init')?.result, short(server.lines));
  for (const [id, seconds] of [['long', '1'], ['short', '0.2']]) {
    const answer = answerTo(server, id);
    assert.ok(answer, `no answer to ${id} on stdout: ${short(server.lines, 3000)}`);
    assert.notEqual(answer.result?.isError, true, short(answer));
    assert.equal(textOf(answer.result), `rested ${seconds}\n`);
  }
  assert.deepEqual(server.unparsable, []);
});

test('a call still running after --shutdown-grace is answered with an error saying toolmux is exiting', async (t) => {
  const server = new RawServer(['serve', '--root', makeRoot({}), '--catalog', CALLS_CATALOG, '--shutdown-grace', '1']);
  t.after(() => server.kill());
  const closedAt = performance.now();
  pipeAndClose(server, [initialize, initialized, nap('quick', '0'), nap('endless', '30')]);
  const exit = await Promise.race([server.exited, new Promise((resolve) => setTimeout(() => resolve(null), 15000))]);
  assert.ok(exit, `toolmux still running 15 s after stdin closed; stderr: ${server.stderr}`);
  assert.equal(exit.code, 0, `exit ${JSON.stringify(exit)}; stderr: ${server.stderr}`);
  // The grace (1 s), then moments to stop the command and answer: nowhere near its 30 s.
  assert.ok(exit.at - closedAt < 5000, `took ${Math.round(exit.at - closedAt)} ms to exit`);
  assert.equal(textOf(answerTo(server, 'quick')?.result), 'rested 0\n', short(server.lines));
  const endless = answerTo(server, 'endless');
  assert.ok(endless, `no answer to the call cut short: ${short(server.lines, 3000)}`);
  assert.equal(endless.result?.isError, true, short(endless));
  assert.equal(textOf(endless.result), 'Tool "nap" was stopped before it finished: toolmux is exiting');
});

test('a search just before stdin closes: toolmux exits 0 while its list_changed is still due', async (t) => {
  // The search's list_changed goes out 50 ms after it; the session (and that
  // notification) must not outlive what it sends through. An upstream that
  // ignores SIGTERM keeps toolmux stopping for 1 s after the session ended
  // (ASan saw the notification use the ended session's sink then).
  const catalog = path.join(makeTempDir(), 'catalog.json');
  fs.writeFileSync(catalog, JSON.stringify({
    tools: [],
    discovery: { mode: 'on' },
    upstreams: {
      stubborn: {
        command: 'sh',
        args: ['-c', "trap '' TERM; exec sh scripted.sh"],
        cwd: path.join(DATA_DIR, '..', 'upstreams'),
        env: { RECEIVED: '/dev/null' },
      },
    },
  }));
  const server = new RawServer(['serve', '--root', makeRoot({ 'notes.txt': 'one\n' }), '--catalog', catalog]);
  t.after(() => server.kill());
  const search = {
    jsonrpc: '2.0',
    id: 'search',
    method: 'tools/call',
    params: { name: 'tool_search', arguments: { query: 'read the lines of a text file', limit: 2 } },
  };
  pipeAndClose(server, [initialize, initialized, search]);
  const exit = await Promise.race([server.exited, new Promise((resolve) => setTimeout(() => resolve(null), 15000))]);
  assert.ok(exit, `toolmux still running 15 s after stdin closed; stderr: ${server.stderr}`);
  assert.deepEqual(exit, { ...exit, code: 0, signal: null }, `stderr: ${server.stderr}`);
  const found = answerTo(server, 'search')?.result?.structuredContent?.tools?.map((tool) => tool.name) ?? [];
  assert.ok(found.includes('read_text_file'), short(server.lines));
});
