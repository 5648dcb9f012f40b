// The catalog file's "aliases" and "policy" sections, seen by the real SDK
// client over stdio: calls by tool and argument aliases, aliases hidden from
// tools/list, alias problems refusing the catalog (serve exits 2, check exits
// 1), unknown-tool suggestions (as a JSON-RPC error and as a result), argument
// defaults and fixed values, and access rules.
// Catalogs: tests/data/e2e/limits/.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { McpError } from '@modelcontextprotocol/sdk/types.js';

import {
  BUILTIN_READ_TOOLS,
  expectMcpError,
  genCharsText,
  limitsCatalog,
  linesOf,
  makeTempDir,
  runCli,
  serveStore,
  short,
  textOf,
} from './helpers.mjs';

const ALIASES_POLICY = limitsCatalog('aliases_policy.catalog.json');
const ACCESS_LOCAL = limitsCatalog('access_local.catalog.json');
const ALIAS_PROBLEMS = limitsCatalog('alias_problems.catalog.json');

const FILES = {
  'notes.txt': 'first line\nsecond line\n',
  'todo.txt': 'TODO: upper\ntodo: lower\nnothing here\n',
  'sub/inner.txt': 'inner\n',
};

function serve(t, { catalog = ALIASES_POLICY, args = [] } = {}) {
  return serveStore(t, { catalog, files: FILES, args });
}

const names = (tools) => tools.map((tool) => tool.name).sort();

test('aliases: a call by a tool alias is served by its tool (command and built-in tools)', async (t) => {
  const { client } = await serve(t);

  const byAlias = await client.callTool({ name: 'chars', arguments: { count: 9, start: 1 } });
  assert.notEqual(byAlias.isError, true, short(byAlias));
  assert.equal(textOf(byAlias), genCharsText(9, 1));

  const cat = await client.callTool({ name: 'cat', arguments: { path: 'notes.txt' } });
  const direct = await client.callTool({ name: 'read_text_file', arguments: { path: 'notes.txt' } });
  assert.notEqual(cat.isError, true, short(cat));
  assert.deepEqual(cat, direct, 'cat (an alias of read_text_file) answered differently from read_text_file');
  assert.match(textOf(cat), /second line/);

  // list_directory has an outputSchema; its alias carries the same structuredContent.
  const ls = await client.callTool({ name: 'ls', arguments: { path: 'sub' } });
  const listed = await client.callTool({ name: 'list_directory', arguments: { path: 'sub' } });
  assert.notEqual(ls.isError, true, short(ls));
  assert.deepEqual(ls, listed);
  assert.deepEqual(ls.structuredContent.entries.map((e) => e.name), ['inner.txt']);
});

test('aliases: an argument alias is renamed before the schema check, by tool name and by tool alias', async (t) => {
  const { client } = await serve(t);

  const byName = await client.callTool({ name: 'gen_chars', arguments: { n: 6 } });
  assert.notEqual(byName.isError, true, short(byName));
  assert.equal(textOf(byName), genCharsText(6, 0));

  const both = await client.callTool({ name: 'chars', arguments: { num: 5, start: 3 } });
  assert.notEqual(both.isError, true, short(both));
  assert.equal(textOf(both), genCharsText(5, 3));

  // Built-in tool with an argument alias, called by a tool alias.
  const cat = await client.callTool({ name: 'cat', arguments: { file: 'notes.txt' } });
  assert.notEqual(cat.isError, true, short(cat));
  assert.match(textOf(cat), /first line/);

  // The schema checks the renamed argument: a wrong type given through the alias is refused, naming the argument.
  const wrongType = await client.callTool({ name: 'gen_chars', arguments: { n: 'six' } });
  assert.equal(wrongType.isError, true, short(wrongType));
  assert.ok(textOf(wrongType).startsWith('Invalid arguments for tool "gen_chars":'), short(wrongType));
  assert.match(textOf(wrongType), /count/, `the error does not name "count": ${short(wrongType)}`);
  // The alias satisfies "required": no "missing count" error.
  const required = await client.callTool({ name: 'show_args', arguments: { message: 'via alias' } });
  assert.notEqual(required.isError, true, short(required));
  assert.ok(linesOf(textOf(required)).includes('text=via alias'), short(required));
});

test('aliases: giving an alias and its argument, or two aliases of one argument, is an argument error', async (t) => {
  const { client } = await serve(t);

  const aliasAndArgument = await client.callTool({ name: 'gen_chars', arguments: { n: 3, count: 3 } });
  assert.equal(aliasAndArgument.isError, true, short(aliasAndArgument));
  assert.equal(
    textOf(aliasAndArgument),
    'Invalid arguments for tool "gen_chars": argument "n" is an alias of "count", which is also given',
  );

  const viaToolAlias = await client.callTool({ name: 'cat', arguments: { file: 'notes.txt', path: 'notes.txt' } });
  assert.equal(viaToolAlias.isError, true, short(viaToolAlias));
  assert.match(textOf(viaToolAlias), /argument "file" is an alias of "path", which is also given/);

  const twoAliases = await client.callTool({ name: 'chars', arguments: { n: 3, num: 3 } });
  assert.equal(twoAliases.isError, true, short(twoAliases));
  assert.match(textOf(twoAliases), /arguments "n" and "num" are both aliases of "count": give one/);

  // The session goes on.
  const ok = await client.callTool({ name: 'chars', arguments: { n: 2 } });
  assert.equal(textOf(ok), genCharsText(2));
});

test('aliases are not advertised: tools/list shows each tool once, under its own name', async (t) => {
  const { client, tools } = await serve(t);
  const listed = names(tools);
  for (const alias of ['chars', 'cat', 'ls', 'grep', 'info']) {
    assert.ok(!listed.includes(alias), `alias ${alias} is in tools/list: ${listed}`);
  }
  // get_file_info is denied by the catalog's access rule, so it is not listed either.
  const expected = [...BUILTIN_READ_TOOLS.filter((n) => n !== 'get_file_info'), 'read_tool_result', 'call_tool', 'tool_search', 'gen_chars', 'show_args'].sort();
  assert.deepEqual(listed, expected);
  assert.equal(new Set(listed).size, listed.length, `a tool is listed twice: ${listed}`);
  // No advertised schema mentions an argument alias.
  const genChars = tools.find((tool) => tool.name === 'gen_chars');
  assert.deepEqual(Object.keys(genChars.inputSchema.properties).sort(), ['count', 'start']);
  // A second listing (fresh, not the SDK's cache) agrees.
  assert.deepEqual(names((await client.listTools()).tools), expected);
});

test('alias problems: serve refuses to start (exit 2) and check reports them (exit 1), each at its pointer', async () => {
  const expected = [
    ['/aliases/tools/c', 'alias "c" points at "gen", which is an alias, not a tool (aliases do not chain)'],
    ['/aliases/tools/cat', 'alias "cat" points at tool "read_txt_file", which does not exist (did you mean "read_text_file"?)'],
    ['/aliases/tools/list_directory', 'alias "list_directory" collides with tool "list_directory"'],
    ['/aliases/arguments/gen', 'argument aliases for "gen", which is an alias of "gen_chars": list them under the tool\'s own name'],
    ['/aliases/arguments/gen_chars/n', 'argument alias "n" points at argument "cuont", which tool "gen_chars" does not declare (did you mean "count"?)'],
    ['/aliases/arguments/gen_chars/start', 'argument alias "start" collides with argument "start" of tool "gen_chars"'],
    ['/aliases/arguments/no_such_tool', 'argument aliases for tool "no_such_tool", which does not exist'],
  ];
  const root = makeTempDir('toolmux-root-');
  const data = makeTempDir('toolmux-data-');
  const [serve, check] = await Promise.all([
    // stdin is /dev/null: a server that started would see end of input and exit 0.
    runCli(['serve', '--root', root, '--data-dir', data, '--catalog', ALIAS_PROBLEMS]),
    runCli(['check', ALIAS_PROBLEMS]),
  ]);
  assert.equal(serve.code, 2, `serve exit ${serve.code}; stdout: ${serve.stdout}; stderr: ${serve.stderr}`);
  assert.equal(serve.stdout, '', 'serve wrote to stdout (the protocol channel) while refusing to start');
  assert.equal(check.code, 1, `check exit ${check.code}; stdout: ${check.stdout}; stderr: ${check.stderr}`);
  for (const [what, output] of [
    ['serve stderr', serve.stderr],
    ['check output', check.stdout + check.stderr],
  ]) {
    const lines = output.split('\n');
    for (const [pointer, message] of expected) {
      assert.ok(lines.includes(`  ${pointer}: ${message}`), `${what} lacks "  ${pointer}: ${message}":\n${output}`);
    }
    assert.match(output, /7 problems/, `${what} does not count the problems:\n${output}`);
  }
  assert.deepEqual(fs.readdirSync(data), [], 'the refused server wrote to its data dir');
});

test('unknown tool (policy "error", the default): -32602 with "Did you mean" and data.suggestions', async (t) => {
  const { client } = await serve(t);
  const error = await expectMcpError(assert, client.callTool({ name: 'gen_chras', arguments: { count: 1 } }), -32602);
  assert.ok(error instanceof McpError);
  assert.ok(error.message.includes('Unknown tool: "gen_chras".'), error.message);
  assert.ok(error.message.includes('Did you mean "gen_chars"'), `the closest name is not first: ${error.message}`);
  assert.ok(Array.isArray(error.data?.suggestions), `data: ${JSON.stringify(error.data)}`);
  assert.equal(error.data.suggestions[0], 'gen_chars', `data: ${JSON.stringify(error.data)}`);
  assert.ok(error.data.suggestions.length <= 3, `data: ${JSON.stringify(error.data)}`);
  for (const name of error.data.suggestions) assert.ok(error.message.includes(JSON.stringify(name)), `${name} not in the message`);

  const builtin = await expectMcpError(assert, client.callTool({ name: 'read_txt_file', arguments: {} }), -32602);
  assert.ok(builtin.message.includes('Did you mean "read_text_file"'), builtin.message);
  assert.ok(builtin.data.suggestions.includes('read_text_file'), JSON.stringify(builtin.data));

  // The session goes on.
  assert.equal(textOf(await client.callTool({ name: 'chars', arguments: { n: 1 } })), 'a');
});

test('unknown tool (policy "result"): an isError result with the same text, no JSON-RPC error', async (t) => {
  const { client, received } = await serve(t, { catalog: ACCESS_LOCAL });
  const result = await client.callTool({ name: 'read_txt_file', arguments: { path: 'notes.txt' } });
  assert.equal(result.isError, true, short(result));
  const text = textOf(result);
  assert.ok(text.startsWith('Unknown tool: "read_txt_file".'), text);
  assert.ok(text.includes('Did you mean "read_text_file"'), text);
  const errors = received.filter((m) => m.error);
  assert.deepEqual(errors, [], `a JSON-RPC error was sent: ${short(errors)}`);
});

test('policy: a fixed argument is hidden from the advertised schema and refused from the caller; defaults apply when absent', async (t) => {
  const { client, tools } = await serve(t);
  const showArgs = tools.find((tool) => tool.name === 'show_args');
  assert.ok(showArgs, 'show_args is not listed');
  assert.deepEqual(Object.keys(showArgs.inputSchema.properties).sort(), ['limit', 'text'], short(showArgs.inputSchema));
  assert.deepEqual(showArgs.inputSchema.required, ['text'], short(showArgs.inputSchema));
  const search = tools.find((tool) => tool.name === 'search_file_contents');
  assert.ok(!('case_sensitive' in search.inputSchema.properties), `case_sensitive is advertised: ${short(search.inputSchema)}`);
  assert.ok('max_results' in search.inputSchema.properties, 'a defaulted argument must stay advertised');

  // Fixed value used, default applied.
  const plain = await client.callTool({ name: 'show_args', arguments: { text: 'hi' } });
  assert.notEqual(plain.isError, true, short(plain));
  assert.deepEqual(linesOf(textOf(plain)), ['mode=safe', 'limit=10', 'text=hi']);
  // A given value wins over the default.
  const given = await client.callTool({ name: 'show_args', arguments: { text: 'hi', limit: 3 } });
  assert.deepEqual(linesOf(textOf(given)), ['mode=safe', 'limit=3', 'text=hi']);

  // Giving a fixed argument, even with its fixed value, is refused and names it.
  for (const mode of ['fast', 'safe']) {
    const refused = await client.callTool({ name: 'show_args', arguments: { text: 'hi', mode } });
    assert.equal(refused.isError, true, short(refused));
    assert.equal(
      textOf(refused),
      'Invalid arguments for tool "show_args": argument "mode" is fixed by the operator and cannot be set',
    );
  }

  // Built-in tool: fixed case_sensitive false, default max_results 1, called by its alias with an argument alias.
  const grep = await client.callTool({ name: 'grep', arguments: { q: 'todo', path: 'todo.txt' } });
  assert.notEqual(grep.isError, true, short(grep));
  const matches = linesOf(textOf(grep)).filter((line) => /^todo\.txt:\d+:/.test(line));
  assert.deepEqual(matches, ['todo.txt:1: TODO: upper'], `expected one case-insensitive match: ${short(textOf(grep))}`);
  const all = await client.callTool({ name: 'search_file_contents', arguments: { query: 'todo', path: 'todo.txt', max_results: 5 } });
  assert.deepEqual(
    linesOf(textOf(all)).filter((line) => /^todo\.txt:\d+:/.test(line)),
    ['todo.txt:1: TODO: upper', 'todo.txt:2: todo: lower'],
    short(textOf(all)),
  );
  const setFixed = await client.callTool({ name: 'grep', arguments: { q: 'todo', case_sensitive: true } });
  assert.equal(setFixed.isError, true, short(setFixed));
  assert.match(textOf(setFixed), /argument "case_sensitive" is fixed by the operator and cannot be set/);
});

test('policy: a denied tool is not listed and a call is an isError naming the rule (by name and by alias)', async (t) => {
  const { client, root, tools } = await serve(t, { args: ['--allow-writes'] });
  const listed = names(tools);
  assert.ok(!listed.includes('write_text_file'), `write_text_file is listed: ${listed}`);
  assert.ok(!listed.includes('get_file_info'), `get_file_info is listed: ${listed}`);

  const write = await client.callTool({ name: 'write_text_file', arguments: { path: 'new.txt', content: 'x' } });
  assert.equal(write.isError, true, short(write));
  assert.ok(textOf(write).includes('denied by /policy/access/*/deny/0 ("write_*")'), textOf(write));
  assert.ok(textOf(write).includes('"local"'), `the refusal does not name the principal: ${textOf(write)}`);
  assert.ok(!fs.existsSync(path.join(root, 'new.txt')), 'the denied write happened');

  // A call by alias is decided on the tool it names.
  const info = await client.callTool({ name: 'info', arguments: { path: 'notes.txt' } });
  assert.equal(info.isError, true, short(info));
  assert.ok(textOf(info).includes('denied by /policy/access/*/deny/1 ("get_file_*")'), textOf(info));
  const direct = await client.callTool({ name: 'get_file_info', arguments: { path: 'notes.txt' } });
  assert.equal(direct.isError, true, short(direct));
  assert.ok(textOf(direct).includes('denied by /policy/access/*/deny/1 ("get_file_*")'), textOf(direct));

  // Allowed tools still work.
  const read = await client.callTool({ name: 'read_text_file', arguments: { path: 'notes.txt' } });
  assert.notEqual(read.isError, true, short(read));
});

test('policy: the "local" principal gets its own access rule, not "*"\'s', async (t) => {
  const { client, tools } = await serve(t, { catalog: ACCESS_LOCAL });
  // allow ["read_*", "list_directory"]: read_text_file, read_tool_result, list_directory.
  assert.deepEqual(names(tools), ['list_directory', 'read_text_file', 'read_tool_result']);
  const read = await client.callTool({ name: 'read_text_file', arguments: { path: 'notes.txt' } });
  assert.notEqual(read.isError, true, short(read));
  const ls = await client.callTool({ name: 'list_directory', arguments: {} });
  assert.notEqual(ls.isError, true, short(ls));
  for (const name of ['get_file_info', 'find_files']) {
    const refused = await client.callTool({ name, arguments: { path: 'notes.txt', pattern: '*' } });
    assert.equal(refused.isError, true, short(refused));
    assert.ok(textOf(refused).includes('not in /policy/access/local/allow'), textOf(refused));
  }
});
