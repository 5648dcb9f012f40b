// Native tools (toolmux as a library) that talk back: progress, log messages,
// elicitation and sampling from a C++ handler's CallContext, through the real
// SDK client, over Streamable HTTP and over stdio. The server is the example
// built on the library API (examples/conformance-server).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import { EXAMPLE_BIN, mcpHeaders, startClient, startExampleHttp, textOf } from './helpers.mjs';

/** A client that declares elicitation and sampling and answers both. */
function talkingClient(answers) {
  const client = new Client(
    { name: 'toolmux-e2e-native', version: '0.0.0' },
    { capabilities: { elicitation: {}, sampling: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    answers.elicitations.push(request.params);
    return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    answers.samplings.push(request.params);
    return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'forty-two' } };
  });
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  return { client, logs };
}

async function exerciseTalkingTools(client, logs, answers) {
  const progress = [];
  const progressResult = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
    onprogress: (p) => progress.push(p),
  });
  // The SDK hands notifications to their handlers a tick later than the
  // response that follows them, so the last progress may be dropped by the
  // client when both arrive in one read; the raw tests below see all three.
  assert.deepEqual(
    progress.map((p) => [p.progress, p.total]).slice(0, 2),
    [[0, 100], [50, 100]],
    'progress notifications arrive in order, before the result',
  );
  assert.notEqual(progressResult.isError, true);

  await client.setLoggingLevel('info');
  const logged = await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
  assert.equal(textOf(logged), 'Tool with logging executed successfully');
  assert.deepEqual(
    logs.map((l) => [l.level, l.data]),
    [
      ['info', 'Tool execution started'],
      ['info', 'Tool processing data'],
      ['info', 'Tool execution completed'],
    ],
  );

  const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
  assert.equal(answers.elicitations.length, 1);
  assert.equal(answers.elicitations[0].message, 'Who are you?');
  assert.deepEqual(answers.elicitations[0].requestedSchema.required, ['username', 'email']);
  assert.equal(textOf(elicited), 'User response: action=accept, content={"email":"ada@example.com","username":"ada"}');

  const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'What is six times seven?' } });
  assert.equal(answers.samplings[0].messages[0].content.text, 'What is six times seven?');
  assert.equal(textOf(sampled), 'LLM response: forty-two');
}

test('over HTTP, a native tool reports progress, logs, elicits and samples through the SDK client', async (t) => {
  const url = await startExampleHttp(t);
  const answers = { elicitations: [], samplings: [] };
  const { client, logs } = talkingClient(answers);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  t.after(() => client.close());
  await exerciseTalkingTools(client, logs, answers);
});

test('over stdio, the same native tools talk back the same way', async (t) => {
  const answers = { elicitations: [], samplings: [] };
  const { client, logs } = talkingClient(answers);
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  await client.connect(new StdioClientTransport({ command: EXAMPLE_BIN, args: ['serve'], stderr: 'ignore' }));
  t.after(() => client.close());
  await exerciseTalkingTools(client, logs, answers);
});

test("over HTTP, progress and log messages travel on the call's own SSE stream, ending with its result", async (t) => {
  const url = await startExampleHttp(t);
  const init = await fetch(url, {
    method: 'POST',
    headers: mcpHeaders(),
    body: JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    }),
  });
  const sessionId = init.headers.get('mcp-session-id');
  assert.ok(sessionId, 'initialize answers with Mcp-Session-Id');
  const headers = mcpHeaders({ 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' });
  await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });

  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0', id: 7, method: 'tools/call',
      params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'tok' } },
    }),
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type'), /^text\/event-stream/);
  const events = (await response.text()).split('\n\n').filter((e) => e.includes('data: {'));
  const messages = events.map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)));
  assert.deepEqual(
    messages.map((m) => m.method ?? `result ${m.id}`),
    ['notifications/progress', 'notifications/progress', 'notifications/progress', 'result 7'],
  );
  assert.ok(messages.slice(0, 3).every((m) => m.params.progressToken === 'tok'));
  for (const e of events) assert.match(e, /^id: \d+-\d+$/m, 'every event carries an id for resumption');
});

test('over stdio, every progress notification comes before the response, in order', async (t) => {
  const child = spawn(EXAMPLE_BIN, ['serve'], { stdio: ['pipe', 'pipe', 'ignore'] });
  t.after(() => child.kill('SIGKILL'));
  const lines = [];
  let buffer = '';
  child.stdout.on('data', (chunk) => {
    buffer += chunk.toString();
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
    }
  });
  const send = (m) => child.stdin.write(`${JSON.stringify(m)}\n`);
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'p' } } });
  const deadline = Date.now() + 10000;
  while (!lines.some((m) => m.id === 2) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const forCall = lines.filter((m) => m.id === 2 || m.params?.progressToken === 'p');
  assert.deepEqual(
    forCall.map((m) => (m.id === 2 ? 'result' : m.params.progress)),
    [0, 50, 100, 'result'],
  );
});

test('a client that did not declare elicitation gets a tool error, not a hang', async (t) => {
  const { client } = await startClient(t, { command: EXAMPLE_BIN, args: ['serve'] });
  const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'hi' } });
  assert.equal(result.isError, true);
  assert.match(textOf(result), /did not declare the elicitation capability/);
});
