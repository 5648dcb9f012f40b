// tool_search's re-ranking by the client's model (catalog "search"."rerank"):
// the real binary, the real SDK clients, a sampling handler that is scripted.
// An unsure answer's first candidates go to the client's model as names and
// one-line descriptions; its numbers reorder the answer. Nothing is sent when
// the switch is off or the client did not declare sampling; a failing or
// silent client leaves the search's own order, without an error.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  DATA_DIR, HttpServer, TOOLMUX_BIN, connectHttp, makeRoot, makeTempDir, requireBinary, startClient,
} from './helpers.mjs';

const RERANK_CATALOG = path.join(DATA_DIR, 'rerank', 'catalog.json');
// Only "report" is a tool's word: the answer is unsure, so the model is asked.
const UNSURE = { query: 'weekly report summary overview', limit: 3 };

/** The rerank catalog with its "search"."rerank" changed by `rerank`, in a temp file. */
function rerankCatalog(rerank) {
  const catalog = JSON.parse(fs.readFileSync(RERANK_CATALOG, 'utf8'));
  catalog.search.rerank = { ...catalog.search.rerank, ...rerank };
  const file = path.join(makeTempDir(), 'catalog.json');
  fs.writeFileSync(file, JSON.stringify(catalog));
  return file;
}

/** A legacy (1.x SDK) client over stdio; with `answer`, it declares sampling and answers with it. */
async function legacyClient(t, catalog, answer) {
  const root = makeRoot({ 'notes.txt': 'one\n' });
  const started = await startClient(t, {
    args: ['serve', '--root', root, '--catalog', catalog],
    clientCapabilities: answer ? { sampling: {} } : {},
  });
  const asked = [];
  if (answer) {
    started.client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(request.params);
      return answer(request.params);
    });
  }
  return { ...started, asked };
}

const says = (text) => ({ role: 'assistant', model: 'scripted', content: { type: 'text', text } });

/** The candidates' names as the client's model saw them, in its numbering. */
function candidatesOf(params) {
  const text = params.messages[0].content.text;
  return [...text.matchAll(/^(\d+)\. ([^:\n]+): /gm)].map((m) => m[2]);
}

async function search(client, args = UNSURE) {
  const result = await client.callTool({ name: 'tool_search', arguments: args });
  assert.equal(result.isError, false, JSON.stringify(result));
  return result.structuredContent;
}

/** The search's own order: the same catalog with the switch off. */
async function lexicalOrder(t, args = UNSURE) {
  const { client, asked } = await legacyClient(t, rerankCatalog({ enabled: false }), () => says('[1]'));
  const answer = await search(client, args);
  assert.equal(asked.length, 0);
  assert.equal(answer.reranked, undefined);
  return answer.tools.map((tool) => tool.name);
}

test("rerank: the client's model puts the 3rd candidate first; it sees only names and one-line descriptions", async (t) => {
  const lexical = await lexicalOrder(t);
  assert.equal(lexical.length, 3);
  const { client, asked } = await legacyClient(t, RERANK_CATALOG, () => says('The best fit is [3].'));
  const answer = await search(client);
  assert.notEqual(answer.confidence, 'high');
  assert.equal(answer.reranked, true);
  assert.equal(asked.length, 1);

  const params = asked[0];
  const candidates = candidatesOf(params);
  assert.equal(candidates.length, 5, params.messages[0].content.text);
  assert.deepEqual(candidates.slice(0, 3), lexical);
  const names = answer.tools.map((tool) => tool.name);
  assert.deepEqual(names, [candidates[2], lexical[0], lexical[1]]);
  // Names and descriptions only: no schema, and never a tool the caller may not call.
  const text = params.messages[0].content.text;
  assert.match(text, /^Need: "weekly report summary overview"\n/);
  assert.doesNotMatch(text, /inputSchema|"type"|properties/);
  assert.ok(!candidates.includes('board_report'), candidates.join(', '));
  assert.doesNotMatch(text, /board/);
  assert.equal(params.includeContext, 'none');
  assert.equal(params.maxTokens, 100);
  assert.ok(params.modelPreferences.speedPriority > params.modelPreferences.intelligencePriority);
  assert.match(params.systemPrompt, /JSON array/);
});

test('rerank: a sure answer is not sent to the client', async (t) => {
  const { client, asked } = await legacyClient(t, RERANK_CATALOG, () => says('[2]'));
  const answer = await search(client, { query: 'widget log' });
  assert.equal(answer.confidence, 'high');
  assert.equal(answer.tools[0].name, 'widget_log');
  assert.equal(answer.reranked, undefined);
  assert.equal(asked.length, 0);
});

test('rerank: with the switch off the sampling handler is never called', async (t) => {
  const { client, asked } = await legacyClient(t, rerankCatalog({ enabled: false }), () => says('[3]'));
  const answer = await search(client);
  assert.equal(answer.reranked, undefined);
  assert.equal(asked.length, 0);
});

test('rerank: a client that did not declare sampling is never asked', async (t) => {
  const lexical = await lexicalOrder(t);
  const { client, received } = await legacyClient(t, RERANK_CATALOG, null);
  const answer = await search(client);
  assert.equal(answer.reranked, undefined);
  assert.deepEqual(answer.tools.map((tool) => tool.name), lexical);
  assert.ok(!received.some((message) => message.method === 'sampling/createMessage'));
});

test("rerank: a handler that throws, or answers no list, leaves the search's order without an error", async (t) => {
  const lexical = await lexicalOrder(t);
  const throwing = await legacyClient(t, RERANK_CATALOG, () => {
    throw new Error('no model today');
  });
  const refused = await search(throwing.client);
  assert.equal(throwing.asked.length, 1);
  assert.equal(refused.reranked, false);
  assert.match(refused.rerankProblem, /the client answered with an error: .*no model today/);
  assert.deepEqual(refused.tools.map((tool) => tool.name), lexical);

  const chatty = await legacyClient(t, RERANK_CATALOG, () => says('I would pick the sales one.'));
  const unread = await search(chatty.client);
  assert.equal(unread.reranked, false);
  assert.equal(unread.rerankProblem, "the client's model answered no list of tool numbers");
  assert.deepEqual(unread.tools.map((tool) => tool.name), lexical);
});

test('rerank: a client that does not answer in time leaves the search\'s order', async (t) => {
  const lexical = await lexicalOrder(t);
  const { client, asked } = await legacyClient(t, rerankCatalog({ timeoutMs: 300 }),
    () => new Promise(() => {}));
  const started = Date.now();
  const answer = await search(client);
  assert.ok(Date.now() - started < 5000);
  assert.equal(asked.length, 1);
  assert.equal(answer.reranked, false);
  assert.equal(answer.rerankProblem, "the client's model did not answer within 300 ms");
  assert.deepEqual(answer.tools.map((tool) => tool.name), lexical);
});

test('rerank over Streamable HTTP: the question goes on the call\'s stream and its answer reorders', async (t) => {
  const lexical = await lexicalOrder(t);
  const server = await HttpServer.start(t, { catalog: RERANK_CATALOG });
  const { client } = await connectHttp(t, server.url, { clientCapabilities: { sampling: {} } });
  const asked = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.push(request.params);
    return says('[2]');
  });
  const answer = await search(client);
  assert.equal(asked.length, 1);
  assert.equal(answer.reranked, true);
  assert.deepEqual(answer.tools.map((tool) => tool.name), [lexical[1], lexical[0], lexical[2]]);
});

/** The v2 client pinned to 2026-07-28 over stdio; its sampling handler answers with `answer`. */
async function modernClient(t, catalog, capabilities, answer) {
  requireBinary();
  const root = makeRoot({ 'notes.txt': 'one\n' });
  const transport = new ModernStdioTransport({
    command: TOOLMUX_BIN, args: ['serve', '--root', root, '--catalog', catalog], stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => { stderr += chunk.toString(); });
  const client = new ModernClient(
    { name: 'toolmux-e2e-rerank', version: '0.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  const asked = [];
  if (answer) {
    client.setRequestHandler('sampling/createMessage', async (request) => {
      asked.push(request.params);
      return answer(request.params);
    });
  }
  t.after(async () => {
    await client.close().catch(() => {});
    if (process.env.TOOLMUX_E2E_STDERR && stderr) t.diagnostic(`stderr:\n${stderr}`);
  });
  await client.connect(transport);
  return { client, asked };
}

test('rerank (2026-07-28): the question comes back as input_required and the retry is reordered', async (t) => {
  const lexical = await lexicalOrder(t);
  const { client, asked } = await modernClient(t, RERANK_CATALOG, { sampling: {} }, () => says('[3, 1]'));
  const answer = await search(client);
  assert.equal(asked.length, 1);
  assert.equal(answer.reranked, true);
  const candidates = candidatesOf(asked[0]);
  assert.deepEqual(answer.tools.map((tool) => tool.name), [candidates[2], lexical[0], lexical[1]]);
});

test('rerank (2026-07-28): a request that declares no sampling gets no question', async (t) => {
  const lexical = await lexicalOrder(t);
  const { client } = await modernClient(t, RERANK_CATALOG, {}, null);
  const answer = await search(client);
  assert.equal(answer.reranked, undefined);
  assert.deepEqual(answer.tools.map((tool) => tool.name), lexical);
});
