// Catalog command tools (tests/data/e2e/catalog.json) over stdio with the real
// SDK client: output, cwd, environment, failure, cancellation, timeout,
// progress and concurrency.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { CATALOG, makeRoot, makeTempDir, sleep, startClient, textOf } from './helpers.mjs';

async function serve(t, { env = {}, extra = [] } = {}) {
  const root = makeRoot({ 'a.txt': 'a\n' });
  const cwd = makeTempDir('toolmux-cwd-');
  const session = await startClient(t, { args: ['serve', '--root', root, '--catalog', CATALOG, ...extra], env, cwd });
  session.cwd = cwd;
  await session.client.listTools();
  return session;
}

test('command tool: stdout is the text result; placeholders are single argv elements, no shell', async (t) => {
  const { client, cwd } = await serve(t);
  const tricky = 'hello world; $(touch pwned) `touch pwned2` | cat > pwned3 && echo "quoted" \'single\' {text}';
  const result = await client.callTool({ name: 'echo_text', arguments: { text: tricky } });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.equal(textOf(result), tricky);
  for (const name of ['pwned', 'pwned2', 'pwned3']) assert.ok(!fs.existsSync(path.join(cwd, name)), `${name} was created: a shell ran`);

  const empty = await client.callTool({ name: 'echo_text', arguments: { text: '' } });
  assert.notEqual(empty.isError, true, JSON.stringify(empty));
  assert.equal(textOf(empty), '');
});

test('command tool: cwd is relative to the catalog file', async (t) => {
  const { client } = await serve(t);
  const result = await client.callTool({ name: 'cwd_cat', arguments: {} });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.match(textOf(result), /^cwd marker: catalog cwd is relative to the catalog file/);
});

test('command tool: env sets fixed variables; only envAllow names are inherited', async (t) => {
  const { client } = await serve(t, { env: { TOOLMUX_E2E_SECRET: 'leaked-secret' } });
  const result = await client.callTool({ name: 'show_env', arguments: {} });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  // Not "secret=...": an assignment to a key named secret is redacted in results.
  assert.equal(textOf(result), 'fixed=fixed-value inherited=unset');
});

test('command tool: a non-zero exit is an isError result carrying stderr', async (t) => {
  const { client } = await serve(t);
  const result = await client.callTool({ name: 'fail_with_stderr', arguments: { message: 'kaput' } });
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.ok(textOf(result).includes('boom: kaput'), `stderr missing from the result: ${JSON.stringify(result)}`);
  // The session goes on.
  const ok = await client.callTool({ name: 'echo_text', arguments: { text: 'after' } });
  assert.equal(textOf(ok), 'after');
});

test('cancellation: notifications/cancelled stops the call, kills its process group, sends no response', async (t) => {
  const { client, sent, received } = await serve(t);
  const markers = makeTempDir('toolmux-markers-');
  const cancelledMarker = path.join(markers, 'cancelled');
  const keptMarker = path.join(markers, 'kept');

  const controller = new AbortController();
  const started = performance.now();
  const cancelledCall = client.callTool(
    { name: 'sleep_then_mark', arguments: { marker: cancelledMarker } },
    undefined,
    { signal: controller.signal },
  );
  // A second, identical call on the same session that is not cancelled: the positive control.
  const keptCall = client.callTool({ name: 'sleep_then_mark', arguments: { marker: keptMarker } });
  await sleep(400);
  controller.abort('e2e test cancels the call');
  await assert.rejects(cancelledCall);

  const request = sent.find((m) => m.method === 'tools/call' && m.params.arguments?.marker === cancelledMarker);
  const cancel = sent.find((m) => m.method === 'notifications/cancelled');
  assert.ok(cancel, 'the SDK sent no notifications/cancelled');
  assert.equal(cancel.params.requestId, request.id);

  const kept = await keptCall;
  assert.notEqual(kept.isError, true, `the uncancelled call: ${JSON.stringify(kept)}`);
  assert.ok(fs.existsSync(keptMarker), 'control: the uncancelled call wrote its marker');

  // Wait well past the 1.5 s sleep of the cancelled command.
  const waitUntil = started + 2500;
  await sleep(Math.max(0, waitUntil - performance.now()));
  assert.ok(!fs.existsSync(cancelledMarker), 'the cancelled command (or its child) kept running and wrote the marker');
  const responses = received.filter((m) => m.id === request.id);
  assert.deepEqual(responses, [], `a response was sent for the cancelled request: ${JSON.stringify(responses)}`);

  const later = await client.callTool({ name: 'echo_text', arguments: { text: 'still serving' } });
  assert.equal(textOf(later), 'still serving');
});

test('timeout: timeoutMs 300 on a 5 s command returns isError "timed out after 300 ms" and kills the group', async (t) => {
  const { client } = await serve(t);
  const markers = makeTempDir('toolmux-markers-');
  const marker = path.join(markers, 'late');
  const started = performance.now();
  const result = await client.callTool({ name: 'too_slow', arguments: { marker } });
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 2000, `took ${Math.round(elapsed)} ms to time out`);
  assert.ok(elapsed >= 250, `returned after ${Math.round(elapsed)} ms, before the 300 ms timeout`);
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.ok(textOf(result).includes('timed out after 300 ms'), `text: ${JSON.stringify(textOf(result))}`);
  // The class of the failure, for a client to branch on.
  assert.deepEqual(result._meta, { 'io.toolmux/outcome': 'timed_out' }, JSON.stringify(result));

  // The background child would write the marker 1 s after start if the process group survived.
  await sleep(Math.max(0, started + 1700 - performance.now()));
  assert.ok(!fs.existsSync(marker), 'a child of the timed-out command survived and wrote the marker');

  const later = await client.callTool({ name: 'echo_text', arguments: { text: 'after timeout' } });
  assert.equal(textOf(later), 'after timeout');
});

test('progress: a ~2.5 s command call with a progress token gets notifications/progress', async (t) => {
  const { client, sent, received } = await serve(t);
  const events = [];
  const result = await client.callTool({ name: 'slow_progress', arguments: {} }, undefined, {
    onprogress: (progress) => events.push({ ...progress, at: performance.now() }),
  });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.match(textOf(result), /finished/);

  const request = sent.find((m) => m.method === 'tools/call' && m.params.name === 'slow_progress');
  const token = request.params._meta?.progressToken;
  assert.notEqual(token, undefined, 'the SDK sent no progress token');
  const notes = received.filter((m) => m.method === 'notifications/progress');
  assert.ok(notes.length >= 2, `expected about one progress notification a second over 2.5 s, got ${notes.length}: ${JSON.stringify(notes)}`);
  for (const note of notes) assert.equal(note.params.progressToken, token);
  assert.ok(events.length >= 2, `onprogress called ${events.length} times`);
  for (let i = 1; i < events.length; i++) {
    assert.ok(events[i].progress > events[i - 1].progress, `progress must increase: ${JSON.stringify(events)}`);
  }
});

test('concurrency: ping and a quick call are answered while a slow call is in flight', async (t) => {
  const { client } = await serve(t);
  let slowDone = false;
  const started = performance.now();
  const slow = client.callTool({ name: 'slow_progress', arguments: {} }).then((r) => {
    slowDone = true;
    return r;
  });
  await sleep(300);

  const pingStart = performance.now();
  assert.deepEqual(await client.ping(), {});
  const pingMs = performance.now() - pingStart;
  assert.ok(pingMs < 500, `ping took ${Math.round(pingMs)} ms while a slow call ran`);
  assert.equal(slowDone, false, 'the slow call finished before the ping: the test proves nothing');

  const quickStart = performance.now();
  const quick = await client.callTool({ name: 'echo_text', arguments: { text: 'quick' } });
  const quickMs = performance.now() - quickStart;
  assert.equal(textOf(quick), 'quick');
  assert.ok(quickMs < 1000, `a quick call took ${Math.round(quickMs)} ms while a slow call ran`);
  assert.equal(slowDone, false, 'the slow call finished before the quick call');

  const slowResult = await slow;
  assert.match(textOf(slowResult), /finished/);
  assert.ok(performance.now() - started >= 2400, 'the slow call returned too early');
});
