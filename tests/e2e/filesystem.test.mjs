// The built-in filesystem tools over stdio with the real SDK client, each in a
// fresh root made by the test. The SDK validates structuredContent against the
// tool's outputSchema by itself once tools/list has been read.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  OUTSIDE_ROOTS,
  expectMcpError,
  linesOf,
  makeRoot,
  makeTempDir,
  startClient,
  textOf,
  writeTree,
} from './helpers.mjs';

/** Starts toolmux on `root`, reads tools/list (one page) so the SDK caches output schemas. */
async function serve(t, root, extra = []) {
  const session = await startClient(t, { args: ['serve', '--root', root, ...extra] });
  session.tools = (await session.client.listTools()).tools;
  return session;
}

function call(client, name, args) {
  return client.callTool({ name, arguments: args });
}

function assertOk(result, what) {
  assert.notEqual(result.isError, true, `${what} failed: ${JSON.stringify(result)}`);
}

test('read_text_file: whole file and a line range', async (t) => {
  const content = 'line1\nline2\nline3\nline4\nline5\n';
  const root = makeRoot({ 'notes.txt': content, 'dir/inner.txt': 'inner\n' });
  const { client } = await serve(t, root);

  const whole = await call(client, 'read_text_file', { path: 'notes.txt' });
  assertOk(whole, 'read whole');
  const wholeText = textOf(whole);
  for (const line of ['line1', 'line2', 'line3', 'line4', 'line5']) assert.ok(wholeText.includes(line), wholeText);

  const range = await call(client, 'read_text_file', { path: 'notes.txt', start_line: 2, end_line: 4 });
  assertOk(range, 'read range');
  const text = textOf(range);
  assert.ok(text.includes('line2') && text.includes('line3') && text.includes('line4'), `range text: ${JSON.stringify(text)}`);
  assert.ok(text.indexOf('line2') < text.indexOf('line3') && text.indexOf('line3') < text.indexOf('line4'), text);
  assert.ok(!text.includes('line1'), `line 1 is outside 2..4: ${JSON.stringify(text)}`);
  assert.ok(!text.includes('line5'), `line 5 is outside 2..4: ${JSON.stringify(text)}`);

  const nested = await call(client, 'read_text_file', { path: 'dir/inner.txt' });
  assertOk(nested, 'read nested');
  assert.ok(textOf(nested).includes('inner'));

  const missing = await call(client, 'read_text_file', { path: 'no-such-file.txt' });
  assert.equal(missing.isError, true, `missing file: ${JSON.stringify(missing)}`);
});

test('list_directory: text lines and structuredContent (validated by the SDK against outputSchema)', async (t) => {
  const root = makeRoot({ 'a.txt': 'aaa', 'sub/b.md': 'bb', 'emptydir/': '' });
  const { client, tools } = await serve(t, root);
  const spec = tools.find((tool) => tool.name === 'list_directory');
  assert.ok(spec?.outputSchema, `list_directory has no outputSchema: ${JSON.stringify(spec)}`);
  assert.equal(spec.outputSchema.type, 'object');

  const result = await call(client, 'list_directory', {});
  assertOk(result, 'list_directory');
  assert.deepEqual(linesOf(textOf(result)), ['a.txt', 'emptydir/', 'sub/']);

  const sc = result.structuredContent;
  assert.ok(sc, `no structuredContent: ${JSON.stringify(result)}`);
  assert.equal(typeof sc.path, 'string');
  assert.ok(Array.isArray(sc.entries));
  const byName = Object.fromEntries(sc.entries.map((e) => [e.name.replace(/\/$/, ''), e]));
  assert.deepEqual(Object.keys(byName).sort(), ['a.txt', 'emptydir', 'sub']);
  assert.match(byName['a.txt'].type, /^file$/i);
  assert.match(byName.sub.type, /^dir(ectory)?$/i);
  assert.match(byName.emptydir.type, /^dir(ectory)?$/i);
  if ('size' in byName['a.txt']) assert.equal(byName['a.txt'].size, 3);

  const sub = await call(client, 'list_directory', { path: 'sub' });
  assertOk(sub, 'list_directory sub');
  assert.deepEqual(linesOf(textOf(sub)), ['b.md']);
  assert.equal(sub.structuredContent.path, 'sub');
  assert.deepEqual(sub.structuredContent.entries.map((e) => e.name), ['b.md']);
  if ('size' in sub.structuredContent.entries[0]) assert.equal(sub.structuredContent.entries[0].size, 2);

  const empty = await call(client, 'list_directory', { path: 'emptydir' });
  assertOk(empty, 'list_directory emptydir');
  assert.deepEqual(empty.structuredContent.entries, []);

  const notDir = await call(client, 'list_directory', { path: 'a.txt' });
  assert.equal(notDir.isError, true, `listing a file: ${JSON.stringify(notDir)}`);
});

test('get_file_info: structuredContent {path, type, size, mode, modified}', async (t) => {
  const root = makeRoot({ 'notes.txt': 'twelve bytes', 'sub/': '' });
  const { client } = await serve(t, root);

  const result = await call(client, 'get_file_info', { path: 'notes.txt' });
  assertOk(result, 'get_file_info');
  const sc = result.structuredContent;
  assert.ok(sc, `no structuredContent: ${JSON.stringify(result)}`);
  assert.equal(sc.path, 'notes.txt');
  assert.match(sc.type, /^file$/i);
  assert.equal(sc.size, 12);
  assert.ok(sc.mode !== undefined && sc.mode !== null, `mode missing: ${JSON.stringify(sc)}`);
  assert.ok(sc.modified !== undefined && sc.modified !== null, `modified missing: ${JSON.stringify(sc)}`);
  if (typeof sc.modified === 'string') assert.ok(!Number.isNaN(Date.parse(sc.modified)), `modified not a date: ${sc.modified}`);
  assert.ok(textOf(result).length > 0, 'no text content alongside structuredContent');

  const dir = await call(client, 'get_file_info', { path: 'sub' });
  assertOk(dir, 'get_file_info dir');
  assert.match(dir.structuredContent.type, /^dir(ectory)?$/i);
  assert.ok(!JSON.stringify(dir).includes(root), 'results must not hold absolute host paths');
});

test('find_files: ** glob, root-relative sorted paths, path and max_results', async (t) => {
  const root = makeRoot({
    'c.md': '',
    'x.txt': '',
    'docs/a.md': '',
    'docs/y.txt': '',
    'docs/deep/b.md': '',
    'other/z.md': '',
  });
  const { client } = await serve(t, root);

  const all = await call(client, 'find_files', { pattern: '**/*.md' });
  assertOk(all, 'find_files');
  assert.deepEqual(linesOf(textOf(all)), ['c.md', 'docs/a.md', 'docs/deep/b.md', 'other/z.md']);

  const top = await call(client, 'find_files', { pattern: '*.txt' });
  assertOk(top, 'find_files *.txt');
  assert.deepEqual(linesOf(textOf(top)), ['x.txt']);

  const under = await call(client, 'find_files', { pattern: '**/*.md', path: 'docs' });
  assertOk(under, 'find_files path=docs');
  assert.deepEqual(linesOf(textOf(under)), ['docs/a.md', 'docs/deep/b.md']);

  const limited = await call(client, 'find_files', { pattern: '**/*.md', max_results: 1 });
  assertOk(limited, 'find_files max_results');
  const mdLines = linesOf(textOf(limited)).filter((line) => line.endsWith('.md'));
  assert.equal(mdLines.length, 1, `max_results 1 gave: ${JSON.stringify(textOf(limited))}`);
});

test('search_file_contents: "rel/path:LINE: text" lines, case, regex, file_pattern, max_results', async (t) => {
  const root = makeRoot({
    'src/a.c': 'int x;\nneedle here\n',
    'b.txt': 'NEEDLE upper\nnothing\n',
    'c.h': 'needles and needle\n',
  });
  const { client } = await serve(t, root);
  const matchLines = (result) => linesOf(textOf(result)).filter((line) => /^[^:\s]+:\d+: /.test(line));

  const sensitive = await call(client, 'search_file_contents', { query: 'needle', case_sensitive: true });
  assertOk(sensitive, 'search case_sensitive');
  assert.deepEqual(matchLines(sensitive).sort(), ['c.h:1: needles and needle', 'src/a.c:2: needle here']);

  const insensitive = await call(client, 'search_file_contents', { query: 'needle', case_sensitive: false });
  assertOk(insensitive, 'search case-insensitive');
  assert.deepEqual(matchLines(insensitive).sort(), ['b.txt:1: NEEDLE upper', 'c.h:1: needles and needle', 'src/a.c:2: needle here']);

  const regex = await call(client, 'search_file_contents', { query: '^int\\s+x;$', regex: true });
  assertOk(regex, 'search regex');
  assert.deepEqual(matchLines(regex), ['src/a.c:1: int x;']);

  const literal = await call(client, 'search_file_contents', { query: '^int\\s+x;$' });
  assertOk(literal, 'search literal (no regex)');
  assert.deepEqual(matchLines(literal), [], 'without regex:true the query is literal text');

  const filtered = await call(client, 'search_file_contents', { query: 'needle', case_sensitive: true, file_pattern: '*.h' });
  assertOk(filtered, 'search file_pattern');
  assert.deepEqual(matchLines(filtered), ['c.h:1: needles and needle']);

  const underSrc = await call(client, 'search_file_contents', { query: 'needle', case_sensitive: true, path: 'src' });
  assertOk(underSrc, 'search path=src');
  assert.deepEqual(matchLines(underSrc), ['src/a.c:2: needle here']);

  const limited = await call(client, 'search_file_contents', { query: 'needle', case_sensitive: false, max_results: 1 });
  assertOk(limited, 'search max_results');
  assert.equal(matchLines(limited).length, 1, JSON.stringify(textOf(limited)));

  const badRegex = await call(client, 'search_file_contents', { query: '(unclosed', regex: true });
  assert.equal(badRegex.isError, true, `an invalid regex: ${JSON.stringify(badRegex)}`);
});

test('write_text_file: listed and working with --allow-writes', async (t) => {
  const root = makeRoot({ 'existing.txt': 'old' });
  const { client, tools } = await serve(t, root, ['--allow-writes']);
  assert.ok(tools.some((tool) => tool.name === 'write_text_file'), 'write_text_file missing with --allow-writes');

  const created = await call(client, 'write_text_file', { path: 'out/new.txt', content: 'hello\nworld\n', create_directories: true });
  assertOk(created, 'write with create_directories');
  assert.equal(fs.readFileSync(path.join(root, 'out/new.txt'), 'utf8'), 'hello\nworld\n');

  const overwritten = await call(client, 'write_text_file', { path: 'existing.txt', content: 'new' });
  assertOk(overwritten, 'overwrite');
  assert.equal(fs.readFileSync(path.join(root, 'existing.txt'), 'utf8'), 'new');

  const noDirs = await call(client, 'write_text_file', { path: 'missing/dir/f.txt', content: 'x' });
  assert.equal(noDirs.isError, true, `write into a missing directory without create_directories: ${JSON.stringify(noDirs)}`);
  assert.ok(!fs.existsSync(path.join(root, 'missing')));

  const readBack = await call(client, 'read_text_file', { path: 'out/new.txt' });
  assert.ok(textOf(readBack).includes('world'));

  const escape = await call(client, 'write_text_file', { path: '../escaped.txt', content: 'x' });
  assert.equal(escape.isError, true, `write outside the root: ${JSON.stringify(escape)}`);
  assert.match(textOf(escape), OUTSIDE_ROOTS);
  assert.ok(!fs.existsSync(path.join(root, '..', 'escaped.txt')), 'a file was written outside the root');
});

test('write_text_file: absent without --allow-writes, and calling it is unknown tool (-32602)', async (t) => {
  const root = makeRoot({});
  const { client, tools } = await serve(t, root);
  assert.ok(!tools.some((tool) => tool.name === 'write_text_file'), 'write_text_file listed without --allow-writes');
  await expectMcpError(assert, call(client, 'write_text_file', { path: 'x.txt', content: 'x' }), -32602);
  assert.ok(!fs.existsSync(path.join(root, 'x.txt')));
});

test('paths leaving the root are refused: "..", absolute elsewhere, symlinks out', async (t) => {
  const parent = makeTempDir('toolmux-escape-');
  const root = path.join(parent, 'root');
  const elsewhere = makeTempDir('toolmux-elsewhere-');
  writeTree(parent, { 'secret.txt': 'TOP-SECRET-PARENT', 'outdir/inner.txt': 'TOP-SECRET-DIR', 'root/ok.txt': 'fine' });
  writeTree(elsewhere, { 'other.txt': 'TOP-SECRET-ELSEWHERE' });
  fs.symlinkSync(path.join(parent, 'secret.txt'), path.join(root, 'link.txt'));
  fs.symlinkSync(path.join(parent, 'outdir'), path.join(root, 'linkdir'));
  fs.symlinkSync('../secret.txt', path.join(root, 'rellink.txt'));
  const { client } = await serve(t, root);

  const attempts = [
    ['read_text_file', { path: '../secret.txt' }],
    ['read_text_file', { path: 'sub/../../secret.txt' }],
    ['read_text_file', { path: path.join(elsewhere, 'other.txt') }],
    ['read_text_file', { path: 'link.txt' }],
    ['read_text_file', { path: 'rellink.txt' }],
    ['read_text_file', { path: 'linkdir/inner.txt' }],
    ['list_directory', { path: '..' }],
    ['list_directory', { path: 'linkdir' }],
    ['list_directory', { path: elsewhere }],
    ['get_file_info', { path: '../secret.txt' }],
    ['find_files', { pattern: '*', path: '..' }],
    ['search_file_contents', { query: 'TOP-SECRET', path: '..' }],
  ];
  for (const [name, args] of attempts) {
    const result = await call(client, name, args);
    const what = `${name} ${JSON.stringify(args)} -> ${JSON.stringify(result)}`;
    assert.equal(result.isError, true, what);
    assert.match(textOf(result), OUTSIDE_ROOTS, what);
    assert.ok(!JSON.stringify(result).includes('TOP-SECRET-'), `leaked content: ${what}`);
  }

  // A search or glob over the whole root must not follow the symlinks out either.
  const search = await call(client, 'search_file_contents', { query: 'TOP-SECRET' });
  assert.ok(!textOf(search).includes('TOP-SECRET-'), `search followed a symlink out: ${JSON.stringify(search)}`);
  const found = await call(client, 'find_files', { pattern: '**/inner.txt' });
  const foundPaths = linesOf(textOf(found)).filter((line) => /(^|\/)inner\.txt$/.test(line));
  assert.deepEqual(foundPaths, [], `find_files followed a symlinked dir out: ${JSON.stringify(found)}`);

  const ok = await call(client, 'read_text_file', { path: 'ok.txt' });
  assertOk(ok, 'a path inside the root still works');
  assert.ok(textOf(ok).includes('fine'));
});

test('several --root dirs: the first path segment names the root (README)', async (t) => {
  const parent = makeTempDir('toolmux-roots-');
  writeTree(parent, { 'alpha/a.txt': 'AAA\n', 'beta/sub/b.txt': 'BBB\n' });
  const session = await startClient(t, {
    args: ['serve', '--root', path.join(parent, 'alpha'), '--root', path.join(parent, 'beta')],
  });
  const { client } = session;
  await client.listTools();

  const top = await call(client, 'list_directory', {});
  assertOk(top, 'list_directory .');
  assert.deepEqual(linesOf(textOf(top)), ['alpha/', 'beta/']);
  assert.ok(textOf(await call(client, 'read_text_file', { path: 'alpha/a.txt' })).includes('AAA'));
  assert.ok(textOf(await call(client, 'read_text_file', { path: 'beta/sub/b.txt' })).includes('BBB'));
  const found = await call(client, 'find_files', { pattern: '**/*.txt' });
  assert.deepEqual(linesOf(textOf(found)), ['alpha/a.txt', 'beta/sub/b.txt']);
  const hits = await call(client, 'search_file_contents', { query: 'BBB' });
  assert.deepEqual(linesOf(textOf(hits)), ['beta/sub/b.txt:1: BBB']);
  const noRoot = await call(client, 'read_text_file', { path: 'a.txt' });
  assert.equal(noRoot.isError, true, JSON.stringify(noRoot));
});
