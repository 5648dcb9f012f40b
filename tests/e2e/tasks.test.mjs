// The tasks extension (io.modelcontextprotocol/tasks; docs/tasks.md) against
// the real binary: the conformance example's task fixtures over stdio in the
// legacy era (the extension negotiated at initialize), a 2026-07-28 request
// over HTTP (negotiated in _meta), a question inside a task answered with
// tasks/update, and the store across a restart: a finished task is still
// there, one that was running when the process died is failed.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { EXAMPLE_BIN, RawServer, TOOLMUX_BIN, makeTempDir, sleep, startExampleHttp } from './helpers.mjs';

const TASKS = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { elicitation: {}, extensions: { [TASKS]: {} } };

async function example(t, dataDir, capabilities = WITH_TASKS) {
  // Discovery off: every tool is listed.
  const catalog = path.join(makeTempDir(), 'catalog.json');
  fs.writeFileSync(catalog, JSON.stringify({ tools: [], discovery: { mode: 'off' } }));
  const server = new RawServer(['serve', '--data-dir', dataDir, '--catalog', catalog], {
    command: EXAMPLE_BIN,
    env: { PATH: process.env.PATH, HOME: process.env.HOME ?? '/' },
  });
  t.after(() => server.kill());
  const init = await server.initialize('2025-11-25', 'init', capabilities);
  assert.deepEqual(init.result.capabilities.extensions, { [TASKS]: {} });
  return server;
}

let nextId = 1;
async function call(server, method, params) {
  return server.request(`r${nextId++}`, method, params);
}

async function until(server, taskId, done, what) {
  for (let i = 0; i < 200; i++) {
    const got = await call(server, 'tasks/get', { taskId });
    assert.ok(got.result, `tasks/get failed: ${JSON.stringify(got)}`);
    if (done(got.result)) return got.result;
    await sleep(50);
  }
  throw new Error(`task ${taskId} never became ${what}`);
}

test('a task-supporting call becomes a task the client polls to its result', async (t) => {
  const server = await example(t, makeTempDir());
  const byName = {};
  let cursor;
  do {
    const listed = await call(server, 'tools/list', cursor ? { cursor } : {});
    for (const tool of listed.result.tools) byName[tool.name] = tool;
    cursor = listed.result.nextCursor;
  } while (cursor);
  assert.deepEqual(byName.slow_compute.execution, { taskSupport: 'optional' });
  assert.deepEqual(byName.failing_job.execution, { taskSupport: 'required' });
  assert.equal(byName.greet.execution, undefined);

  const created = await call(server, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: 'x' } });
  assert.equal(created.result.resultType, 'task');
  assert.equal(created.result.status, 'working');
  assert.equal(created.result.ttlMs, 3600000);
  assert.match(created.result.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const { taskId } = created.result;
  const working = await call(server, 'tasks/get', { taskId });
  assert.equal(working.result.status, 'working');
  assert.equal(working.result.result, undefined);
  const done = await until(server, taskId, (task) => task.status !== 'working', 'finished');
  assert.equal(done.status, 'completed');
  assert.deepEqual(done.result.content, [{ type: 'text', text: 'Computed x after 1 s' }]);

  // A tool error is a completed task with isError; a crash is a failed one.
  const failing = await call(server, 'tools/call', { name: 'failing_job', arguments: {} });
  const failed = await until(server, failing.result.taskId, (task) => task.status !== 'working', 'finished');
  assert.equal(failed.status, 'completed');
  assert.equal(failed.result.isError, true);
  const crashing = await call(server, 'tools/call', { name: 'protocol_error_job', arguments: {} });
  const crashed = await until(server, crashing.result.taskId, (task) => task.status !== 'working', 'finished');
  assert.equal(crashed.status, 'failed');
  assert.equal(typeof crashed.error.code, 'number');
  assert.match(crashed.error.message, /protocol_error_job crashed/);
  assert.equal(crashed.result, undefined);

  // Cancelled while it runs; cancelling again is the same empty answer.
  const long = await call(server, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } });
  const ack = await call(server, 'tasks/cancel', { taskId: long.result.taskId });
  assert.deepEqual(ack.result, { resultType: 'complete' });
  assert.equal((await call(server, 'tasks/get', { taskId: long.result.taskId })).result.status, 'cancelled');
  assert.deepEqual((await call(server, 'tasks/cancel', { taskId: long.result.taskId })).result, { resultType: 'complete' });

  // Unknown ids, and the removed v1 methods.
  const unknown = await call(server, 'tasks/get', { taskId: 'no-such-task' });
  assert.equal(unknown.error.code, -32602);
  assert.match(unknown.error.message, /no task "no-such-task"/);
  assert.equal((await call(server, 'tasks/list', {})).error.code, -32601);
  assert.equal((await call(server, 'tasks/result', { taskId })).error.code, -32601);
});

test('without the extension calls run as before and task methods are refused with -32021', async (t) => {
  const server = await example(t, makeTempDir(), {});
  const plain = await call(server, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: 'y' } });
  assert.equal(plain.result.taskId, undefined);
  assert.deepEqual(plain.result.content, [{ type: 'text', text: 'Computed y after 0 s' }]);
  const required = await call(server, 'tools/call', { name: 'failing_job', arguments: {} });
  assert.equal(required.error.code, -32021);
  assert.deepEqual(required.error.data, { requiredCapabilities: { extensions: { [TASKS]: {} } } });
  const get = await call(server, 'tasks/get', { taskId: 'x' });
  assert.equal(get.error.code, -32021);
});

test('a question inside a task waits for tasks/update, one key at a time', async (t) => {
  const server = await example(t, makeTempDir());
  const created = await call(server, 'tools/call', { name: 'multi_input', arguments: {} });
  const { taskId } = created.result;
  const asking = await until(server, taskId, (task) => Object.keys(task.inputRequests ?? {}).length === 2, 'asking two questions');
  assert.equal(asking.status, 'input_required');
  assert.equal(asking.inputRequests.first.method, 'elicitation/create');
  const ack = await call(server, 'tasks/update', { taskId, inputResponses: { first: { action: 'accept', content: { name: 'Ada' } } } });
  assert.deepEqual(ack.result, { resultType: 'complete' });
  const half = await until(server, taskId, (task) => !('first' in (task.inputRequests ?? {})), 'answered once');
  assert.equal(half.status, 'input_required');
  assert.deepEqual(Object.keys(half.inputRequests), ['second']);
  await call(server, 'tasks/update', { taskId, inputResponses: { second: { action: 'accept', content: { name: 'Bob' } } } });
  const done = await until(server, taskId, (task) => task.status === 'completed', 'completed');
  assert.deepEqual(done.result.content, [{ type: 'text', text: 'Got Ada and Bob' }]);
});

test('tasks outlive their process: a finished one is kept, a running one is failed', async (t) => {
  const data = makeTempDir();
  const first = await example(t, data);
  const quick = await call(first, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: 'kept' } });
  await until(first, quick.result.taskId, (task) => task.status === 'completed', 'completed');
  const long = await call(first, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } });
  await first.kill();

  const second = await example(t, data);
  const kept = await call(second, 'tasks/get', { taskId: quick.result.taskId });
  assert.equal(kept.result.status, 'completed');
  assert.deepEqual(kept.result.result.content, [{ type: 'text', text: 'Computed kept after 0 s' }]);
  const orphan = await call(second, 'tasks/get', { taskId: long.result.taskId });
  assert.equal(orphan.result.status, 'failed');
  assert.match(orphan.result.error.message, /toolmux stopped while the task ran/);
});

test('a 2026-07-28 request over HTTP opts in per request and reads its task by Mcp-Name', async (t) => {
  const url = await startExampleHttp(t);
  const meta = (extensions) => ({
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': extensions ? { extensions: { [TASKS]: {} } } : {},
  });
  const post = async (method, params, name) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
        ...(name ? { 'mcp-name': name } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    });
    return { status: response.status, body: await response.json() };
  };
  const created = await post('tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, _meta: meta(true) }, 'slow_compute');
  assert.equal(created.body.result.resultType, 'task');
  const { taskId } = created.body.result;
  const mismatched = await post('tasks/get', { taskId, _meta: meta(true) }, 'another-task');
  assert.equal(mismatched.status, 400);
  assert.equal(mismatched.body.error.code, -32020);
  let got;
  for (let i = 0; i < 100; i++) {
    got = await post('tasks/get', { taskId, _meta: meta(true) }, taskId);
    if (got.body.result?.status === 'completed') break;
    await sleep(50);
  }
  assert.equal(got.body.result.status, 'completed');
  assert.equal(got.body.result.resultType, 'complete');
  const refused = await post('tasks/get', { taskId, _meta: meta(false) }, taskId);
  assert.equal(refused.body.error.code, -32021);
});

test('a command tool that says taskSupport runs as a task of toolmux itself', async (t) => {
  const dir = makeTempDir();
  const catalog = path.join(dir, 'catalog.json');
  fs.writeFileSync(catalog, JSON.stringify({
    tools: [{
      name: 'build', description: 'Builds for a second, then says so.', sideEffect: 'read_only',
      timeoutMs: 10000, taskSupport: 'optional',
      inputSchema: { type: 'object', properties: {} },
      command: { argv: ['sh', '-c', 'sleep 1; echo built'], envAllow: ['PATH'] },
    }],
    discovery: { mode: 'off' },
  }));
  const server = new RawServer(['serve', '--data-dir', path.join(dir, 'data'), '--catalog', catalog], {
    command: TOOLMUX_BIN,
    env: { PATH: process.env.PATH, HOME: process.env.HOME ?? '/' },
  });
  t.after(() => server.kill());
  await server.initialize('2025-11-25', 'init', WITH_TASKS);
  const created = await call(server, 'tools/call', { name: 'build', arguments: {} });
  assert.equal(created.result.resultType, 'task');
  const done = await until(server, created.result.taskId, (task) => task.status !== 'working', 'finished');
  assert.equal(done.status, 'completed');
  assert.match(done.result.content[0].text, /built/);
});
