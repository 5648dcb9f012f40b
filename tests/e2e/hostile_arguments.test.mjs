// Arguments built to crash or stall the server (issue 11's adversarial
// findings): each must be answered, and the server must go on serving.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { HttpServer, REPO_ROOT, connectHttp, makeRoot, startClient, textOf } from './helpers.mjs';

const EXAMPLE_CATALOG = path.join(REPO_ROOT, 'examples/catalog.json');

// std::regex recursed once per character of the text: a 40,000-character path
// to count_lines (whose schema has a pattern with lookaheads) killed the server
// with SIGSEGV.
test('a 40,000-character path to a pattern-checked argument is answered, over stdio', async (t) => {
  const { client } = await startClient(t, {
    args: ['serve', '--catalog', EXAMPLE_CATALOG, '--root', makeRoot({})],
    cwd: REPO_ROOT,
  });
  const long = 'a'.repeat(40000);
  const result = await client.callTool({ name: 'count_lines', arguments: { path: long } });
  assert.equal(result.isError, true);
  assert.match(textOf(result), /wc/); // the schema let it through; wc could not open it

  const refused = await client.callTool({ name: 'count_lines', arguments: { path: `${long}/../etc/passwd` } });
  assert.equal(refused.isError, true);
  assert.match(textOf(refused), /\/path: does not match the pattern/);
  assert.ok(textOf(refused).length < 2000, `error text repeats the argument: ${textOf(refused).length} chars`);

  await client.ping(); // still serving
});

// Error texts quoted the caller's text whole: a 15 MB argument came back in the error.
test('error texts quote only the start of a huge argument, tool name or property name', async (t) => {
  const { client } = await startClient(t, { args: ['serve', '--root', makeRoot({})] });
  const huge = 'é'.repeat(1_000_000); // 2 MB
  const short = (text) => {
    assert.ok(text.length < 1000, `${text.length} characters: ${text.slice(0, 120)}...`);
    assert.match(text, /…" \(200000[01] bytes\)/);
  };
  short(textOf(await client.callTool({ name: 'read_text_file', arguments: { path: huge } })));
  short(textOf(await client.callTool({ name: 'read_text_file', arguments: { path: 'a', [huge]: 1 } })));
  // A query past its 1,024-character limit is refused by its length alone.
  assert.equal(
    textOf(await client.callTool({ name: 'search_file_contents', arguments: { query: `(${huge}`, regex: true } })),
    'Invalid arguments for tool "search_file_contents": argument /query: must be at most 1024 characters long, got 1000001',
  );
  const unknown = await client.callTool({ name: huge, arguments: {} }).then(
    () => assert.fail('an unknown tool was answered'),
    (error) => error,
  );
  assert.ok(unknown.message.length < 1000, unknown.message.slice(0, 200));
  assert.match(unknown.message, /Unknown tool: "éé+…" \(2000000 bytes\)/);
});

test('a 40,000-character path over HTTP leaves every other session serving', async (t) => {
  const server = await HttpServer.start(t, { catalog: EXAMPLE_CATALOG });
  const other = await connectHttp(t, server.url);
  const { client } = await connectHttp(t, server.url);
  const result = await client.callTool({ name: 'count_lines', arguments: { path: 'b/'.repeat(20000) } });
  assert.equal(result.isError, true);
  await other.client.ping();
  const { tools } = await other.client.listTools();
  assert.ok(tools.some((tool) => tool.name === 'count_lines'));
  assert.equal(server.exit, null, `server exited: ${server.stderr}`);
});

test('search_file_contents: a catastrophic regex is stopped per line and reported, not run on', async (t) => {
  const root = makeRoot({ 'a.txt': `${'a'.repeat(5000)}b\nplain aab line\n` });
  const { client } = await startClient(t, { args: ['serve', '--root', root] });
  const started = Date.now();
  const result = await client.callTool({
    name: 'search_file_contents',
    arguments: { query: '^(a+)+$', regex: true, path: '.' },
  });
  assert.ok(Date.now() - started < 20000, 'the search ran for too long');
  assert.equal(result.isError ?? false, false, textOf(result));
  assert.match(textOf(result), /1 line could not be checked: the regex needed more than the matching limit/);

  const found = await client.callTool({ name: 'search_file_contents', arguments: { query: 'a{2}b\\s', regex: true } });
  assert.match(textOf(found), /a\.txt:2: plain aab line/);

  const invalid = await client.callTool({ name: 'search_file_contents', arguments: { query: '(x', regex: true } });
  assert.equal(invalid.isError, true);
  assert.match(textOf(invalid), /invalid regex "\(x": missing closing parenthesis/);
});

test('a schema pattern that backtracks catastrophically answers at once with the reason', async (t) => {
  const dir = makeRoot({});
  const catalog = path.join(dir, 'catalog.json');
  fs.writeFileSync(
    catalog,
    JSON.stringify({
      tools: [
        {
          name: 'echo_word',
          description: 'Echoes a word.',
          inputSchema: {
            type: 'object',
            properties: { word: { type: 'string', pattern: '^(a|aa)+$', description: 'The word.' } },
            required: ['word'],
          },
          sideEffect: 'read_only',
          timeoutMs: 5000,
          command: { argv: ['echo', '{word}'] },
        },
      ],
    }),
  );
  const { client } = await startClient(t, { args: ['serve', '--catalog', catalog, '--root', dir] });
  const result = await client.callTool({ name: 'echo_word', arguments: { word: `${'a'.repeat(3000)}b` } });
  assert.equal(result.isError, true);
  assert.match(textOf(result), /\/word: could not be matched against the pattern "\^\(a\|aa\)\+\$" within toolmux's matching limits/);
  const ok = await client.callTool({ name: 'echo_word', arguments: { word: 'aaa' } });
  assert.equal(textOf(ok).trim(), 'aaa');
});
