// Resources, resource templates, subscriptions, prompts and completion through
// the real SDK client, over stdio and over Streamable HTTP. The server is the
// example built on the library API (examples/conformance-server): its native
// ResourceProvider and PromptProvider serve the conformance fixtures, and its
// offloaded tool results are resources of the session that produced them.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  EXAMPLE_BIN,
  expectMcpError,
  genCharsText,
  limitsCatalog,
  makeTempDir,
  parseOffloadNotice,
  short,
  sleep,
  startExampleHttp,
  textOf,
  waitUntil,
} from './helpers.mjs';

// gen_chars, and offloading from 1024 bytes on.
const OFFLOAD_SMALL = limitsCatalog('offload_small.catalog.json');
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const RESULT_URI = /^toolmux:\/\/results\/[A-Za-z0-9_-]{43}$/;

/** A connected SDK client that records notifications/resources/updated in `updates`. */
async function connect(t, transport) {
  const client = new Client({ name: 'toolmux-e2e-resources', version: '0.0.0' });
  const updates = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
  await client.connect(transport);
  t.after(() => client.close());
  return { client, updates };
}

const connectStdio = (t, args = []) =>
  connect(t, new StdioClientTransport({
    command: EXAMPLE_BIN,
    args: ['serve', '--data-dir', makeTempDir('toolmux-example-'), ...args],
    stderr: 'ignore',
  }));
const connectHttp = (t, url) => connect(t, new StreamableHTTPClientTransport(new URL(url)));

async function listsAndReads(client) {
  assert.deepEqual(client.getServerCapabilities().resources, { subscribe: true, listChanged: true });
  assert.deepEqual(client.getServerCapabilities().prompts, { listChanged: true });
  assert.deepEqual(client.getServerCapabilities().completions, {});

  const { resources } = await client.listResources();
  assert.deepEqual(
    resources.map((r) => [r.uri, r.name, r.mimeType]),
    [
      ['test://static-text', 'Static Text Resource', 'text/plain'],
      ['test://static-binary', 'Static Binary Resource', 'image/png'],
      ['test://watched-resource', 'Watched Resource', 'text/plain'],
    ],
    'the fixture resources, and no stored results yet',
  );
  assert.ok(resources.every((r) => r.description), 'every resource has a description');

  assert.deepEqual((await client.readResource({ uri: 'test://static-text' })).contents, [
    { uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
  ]);
  assert.deepEqual((await client.readResource({ uri: 'test://static-binary' })).contents, [
    { uri: 'test://static-binary', mimeType: 'image/png', blob: PNG },
  ]);

  const { resourceTemplates } = await client.listResourceTemplates();
  assert.deepEqual(resourceTemplates.map((r) => r.uriTemplate), ['test://template/{id}/data', 'toolmux://results/{id}']);
  const filled = await client.readResource({ uri: 'test://template/123/data' });
  assert.deepEqual(filled.contents, [
    { uri: 'test://template/123/data', mimeType: 'application/json', text: '{"id":"123","templateTest":true,"data":"Data for ID: 123"}' },
  ]);

  const missing = await expectMcpError(assert, client.readResource({ uri: 'test://no-such-thing' }), -32002, /Resource not found/);
  assert.deepEqual(missing.data, { uri: 'test://no-such-thing' });
}

async function promptsAndCompletion(client) {
  const { prompts } = await client.listPrompts();
  assert.deepEqual(prompts.map((p) => p.name), [
    'test_simple_prompt',
    'test_prompt_with_arguments',
    'test_prompt_with_embedded_resource',
    'test_prompt_with_image',
    'test_input_required_result_prompt',
  ]);
  assert.deepEqual(prompts[1].arguments, [
    { name: 'arg1', description: 'First test argument', required: true },
    { name: 'arg2', description: 'Second test argument', required: true },
  ]);

  const filled = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'sun', arg2: 'moon' } });
  assert.deepEqual(filled.messages, [
    { role: 'user', content: { type: 'text', text: "Prompt with arguments: arg1='sun', arg2='moon'" } },
  ]);
  const embedded = await client.getPrompt({ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://x' } });
  assert.deepEqual(embedded.messages[0].content.resource, {
    uri: 'test://x', mimeType: 'text/plain', text: 'Embedded resource content for testing.',
  });
  const image = await client.getPrompt({ name: 'test_prompt_with_image' });
  assert.deepEqual(image.messages[0].content, { type: 'image', data: PNG, mimeType: 'image/png' });

  await expectMcpError(
    assert,
    client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'sun' } }),
    -32602,
    /prompt "test_prompt_with_arguments" needs the argument "arg2"/,
  );
  await expectMcpError(assert, client.getPrompt({ name: 'test_simple_promt' }), -32602, /unknown prompt "test_simple_promt"/);

  const completed = await client.complete({
    ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
    argument: { name: 'arg1', value: 'test' },
  });
  assert.deepEqual(completed.completion, { values: ['testValue1', 'testValue2'], total: 2, hasMore: false });
  const ids = await client.complete({
    ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
    argument: { name: 'id', value: '12' },
  });
  assert.deepEqual(ids.completion.values, ['123', '124']);
  await expectMcpError(
    assert,
    client.complete({ ref: { type: 'ref/prompt', name: 'test_simple_prompt' }, argument: { name: 'arg1', value: '' } }),
    -32602,
    /prompt "test_simple_prompt" has no argument "arg1"; it takes none/,
  );
}

async function subscription(client, updates) {
  await client.subscribeResource({ uri: 'test://watched-resource' });
  const changed = await client.callTool({ name: 'update_watched_resource', arguments: { text: 'second version' } });
  assert.notEqual(changed.isError, true, short(changed));
  await waitUntil(() => updates.length > 0, 5000, 'notifications/resources/updated');
  assert.deepEqual(updates, ['test://watched-resource']);
  assert.equal((await client.readResource({ uri: 'test://watched-resource' })).contents[0].text, 'second version');

  await client.unsubscribeResource({ uri: 'test://watched-resource' });
  await client.callTool({ name: 'update_watched_resource', arguments: { text: 'third version' } });
  await sleep(300);
  assert.deepEqual(updates, ['test://watched-resource'], 'no update after unsubscribing');
  await expectMcpError(assert, client.subscribeResource({ uri: 'test://nothing' }), -32002);
}

/** Calls gen_chars with `count` (offloaded over 1024 bytes) and returns the result's id. */
async function offload(client, count) {
  const result = await client.callTool({ name: 'gen_chars', arguments: { count } });
  const notice = parseOffloadNotice(textOf(result));
  assert.ok(notice, `no offload notice in ${short(result)}`);
  return notice.id;
}

test('over stdio: resources, templates, prompts, completion and a subscription through the SDK client', async (t) => {
  const { client, updates } = await connectStdio(t);
  await listsAndReads(client);
  await promptsAndCompletion(client);
  await subscription(client, updates);
});

test('over HTTP: the same, each session notified only of what it subscribed to', async (t) => {
  const url = await startExampleHttp(t);
  const { client, updates } = await connectHttp(t, url);
  const other = await connectHttp(t, url);
  await listsAndReads(client);
  await promptsAndCompletion(client);
  await subscription(client, updates);
  assert.deepEqual(other.updates, [], 'a session that did not subscribe hears nothing');
});

test('over stdio, an offloaded result is a resource of the session: listed and read whole', async (t) => {
  const { client } = await connectStdio(t, ['--catalog', OFFLOAD_SMALL]);
  const id = await offload(client, 3000);
  const { resources } = await client.listResources();
  const stored = resources.filter((r) => RESULT_URI.test(r.uri));
  assert.deepEqual(stored.map((r) => r.uri), [`toolmux://results/${id}`]);
  assert.equal(stored[0].size, Buffer.byteLength(genCharsText(3000)));
  const read = await client.readResource({ uri: `toolmux://results/${id}` });
  assert.deepEqual(read.contents, [{ uri: `toolmux://results/${id}`, mimeType: 'text/plain', text: genCharsText(3000) }]);
});

test('over HTTP, another session cannot list, read or subscribe to a stored result', async (t) => {
  const url = await startExampleHttp(t, ['--catalog', OFFLOAD_SMALL]);
  const owner = await connectHttp(t, url);
  const stranger = await connectHttp(t, url);
  const id = await offload(owner.client, 2000);
  const uri = `toolmux://results/${id}`;

  assert.equal((await owner.client.readResource({ uri })).contents[0].text, genCharsText(2000));
  assert.ok((await owner.client.listResources()).resources.some((r) => r.uri === uri));

  assert.ok(!(await stranger.client.listResources()).resources.some((r) => RESULT_URI.test(r.uri)));
  const refused = await expectMcpError(assert, stranger.client.readResource({ uri }), -32002, /Resource not found/);
  assert.deepEqual(refused.data, { uri });
  await expectMcpError(assert, stranger.client.subscribeResource({ uri }), -32002);
  // A made-up id is answered exactly the same way.
  const madeUp = `toolmux://results/${'A'.repeat(43)}`;
  const unknown = await expectMcpError(assert, stranger.client.readResource({ uri: madeUp }), -32002);
  assert.equal(unknown.message, refused.message);
  assert.deepEqual(unknown.data, { uri: madeUp });
});
