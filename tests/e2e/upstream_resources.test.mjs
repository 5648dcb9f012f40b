// Resources, resource templates, prompts, completion and resource
// subscriptions of an upstream (server-everything from npm, over stdio),
// served through the real toolmux binary to the SDK client: what the client
// gets through toolmux is what the upstream gives directly, prompts carry the
// upstream's prefix, and the upstream's resource updates reach the subscribed
// client.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { makeTempDir, startClient, waitUntil } from './helpers.mjs';

const EVERYTHING = path.resolve('node_modules/@modelcontextprotocol/server-everything/dist/index.js');

async function throughToolmux(t) {
  const dir = makeTempDir('toolmux-upstream-resources-');
  const catalog = path.join(dir, 'catalog.json');
  fs.writeFileSync(
    catalog,
    JSON.stringify({ tools: [], upstreams: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
  );
  return startClient(t, { args: ['serve', '--root', dir, '--catalog', catalog, '--data-dir', path.join(dir, 'data')] });
}

async function direct(t) {
  const client = new Client({ name: 'toolmux-e2e-direct', version: '0.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'pipe' }));
  t.after(() => client.close());
  return client;
}

test("an upstream's resources and templates are listed and read through toolmux as the upstream serves them", async (t) => {
  const [{ client }, original] = await Promise.all([throughToolmux(t), direct(t)]);
  const relayed = await client.listResources();
  const own = await original.listResources();
  assert.ok(own.resources.length > 0);
  assert.deepEqual(relayed.resources, own.resources);

  const templates = (await client.listResourceTemplates()).resourceTemplates.map((entry) => entry.uriTemplate);
  for (const entry of (await original.listResourceTemplates()).resourceTemplates) {
    assert.ok(templates.includes(entry.uriTemplate), entry.uriTemplate);
  }
  assert.ok(templates.includes('toolmux://results/{id}'), 'toolmux adds its stored results');

  // The dynamic resources say when they were made ("created at 12:05:28 AM"): that part
  // may differ between two reads a second apart, the rest may not.
  const timeless = (result) =>
    result.contents.map(({ blob, text, ...rest }) => ({
      ...rest,
      body: (text ?? Buffer.from(blob, 'base64').toString('utf8')).replace(/created at [^\n]*/g, 'created at <time>'),
      binary: blob !== undefined,
    }));
  assert.deepEqual(await client.readResource({ uri: own.resources[0].uri }), await original.readResource({ uri: own.resources[0].uri }));
  for (const uri of ['demo://resource/dynamic/text/7', 'demo://resource/dynamic/blob/7']) {
    assert.deepEqual(timeless(await client.readResource({ uri })), timeless(await original.readResource({ uri })), uri);
  }
  const blob = await client.readResource({ uri: 'demo://resource/dynamic/blob/7' });
  assert.ok(blob.contents[0].blob, 'binary contents stay base64');
  await assert.rejects(client.readResource({ uri: 'demo://resource/no-such-thing' }));
});

test("an upstream's prompts carry its prefix, and get and completion relay to it", async (t) => {
  const [{ client }, original] = await Promise.all([throughToolmux(t), direct(t)]);
  const names = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
  for (const prompt of (await original.listPrompts()).prompts) {
    assert.ok(names.includes(`everything_${prompt.name}`), `${prompt.name} as everything_${prompt.name}`);
  }
  assert.deepEqual(
    await client.getPrompt({ name: 'everything_args-prompt', arguments: { city: 'Lyon' } }),
    await original.getPrompt({ name: 'args-prompt', arguments: { city: 'Lyon' } }),
  );
  const completed = await client.complete({
    ref: { type: 'ref/prompt', name: 'everything_completable-prompt' },
    argument: { name: 'department', value: 'E' },
  });
  const expected = await original.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'E' } });
  assert.ok(expected.completion.values.length > 0);
  assert.deepEqual(completed.completion.values, expected.completion.values);
  await assert.rejects(client.getPrompt({ name: 'everything_args-prompt', arguments: {} }), /city/);
});

test("a subscription reaches the upstream, and the upstream's updates reach the subscribed client", async (t) => {
  const { client } = await throughToolmux(t);
  const updates = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => updates.push(notification.params.uri));
  const uri = (await client.listResources()).resources[0].uri;
  await client.subscribeResource({ uri });
  // server-everything sends updates for its subscriptions every 5 s once toggled on.
  const toggled = await client.callTool({ name: 'everything_toggle-subscriber-updates', arguments: {} });
  assert.notEqual(toggled.isError, true, JSON.stringify(toggled));
  await waitUntil(() => updates.includes(uri), 15000, `notifications/resources/updated for ${uri}`);
  await client.unsubscribeResource({ uri });
});
