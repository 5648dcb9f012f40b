// The command line: `toolmux check`, `--version`, `--help`.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { BROKEN_CATALOG, CATALOG, DATA_DIR, REPO_ROOT, RawServer, makeTempDir, projectVersion, runCli } from './helpers.mjs';

test('toolmux check on a valid catalog: exit 0 and an "ok" summary', async () => {
  const { code, stdout, stderr } = await runCli(['check', CATALOG]);
  assert.equal(code, 0, `exit ${code}; stdout: ${stdout}; stderr: ${stderr}`);
  assert.match(stdout + stderr, /\bok\b/i, `no "ok" summary: ${stdout}${stderr}`);
});

test('toolmux check on a broken catalog: non-zero, every problem listed as "  /pointer: message"', async () => {
  const { code, stdout, stderr } = await runCli(['check', BROKEN_CATALOG]);
  const output = stdout + stderr;
  assert.notEqual(code, 0, `a broken catalog passed the check: ${output}`);
  const problemLines = output.split('\n').filter((line) => /^ {2}\/\S*: \S/.test(line));
  const show = `\n--- output ---\n${output}`;
  const expectLine = (pointer, pattern) => {
    const hit = problemLines.find((line) => line.startsWith(`  ${pointer}`) && (!pattern || pattern.test(line)));
    assert.ok(hit, `no problem line for ${pointer}${pattern ? ` matching ${pattern}` : ''}${show}`);
  };
  expectLine('/tools/0/name: ');
  expectLine('/tools/1/sideEffect: ');
  expectLine('/tools/2/timeoutMs: ');
  expectLine('/tools/3/command/argv/1: ', /missing/);
  expectLine('/tools/4', /bogusField/);
  expectLine('/tools/5/inputSchema');
  for (const ok of ['/tools/0/', '/tools/1/', '/tools/2/', '/tools/3/', '/tools/4/', '/tools/5/']) {
    assert.ok(problemLines.some((line) => line.startsWith(`  ${ok}`)), `${ok} not reported${show}`);
  }
});

test('toolmux check: a file that is not JSON, and a missing file, are refused', async () => {
  const dir = makeTempDir('toolmux-check-');
  const notJson = path.join(dir, 'not.json');
  fs.writeFileSync(notJson, '{"tools": [ this is not json');
  const bad = await runCli(['check', notJson]);
  assert.notEqual(bad.code, 0, `not JSON passed: ${bad.stdout}${bad.stderr}`);
  assert.ok((bad.stdout + bad.stderr).trim().length > 0, 'no message');

  const dup = path.join(dir, 'dup.json');
  fs.writeFileSync(dup, '{"tools": [], "tools": []}');
  const dupResult = await runCli(['check', dup]);
  assert.notEqual(dupResult.code, 0, `a repeated key passed: ${dupResult.stdout}${dupResult.stderr}`);
  assert.match(dupResult.stdout + dupResult.stderr, /tools/);

  const missing = await runCli(['check', path.join(dir, 'does-not-exist.json')]);
  assert.notEqual(missing.code, 0, 'a missing file passed');
});

test('check, serve --catalog and --tokens-file refuse a FIFO at once, naming it, instead of waiting on it', async () => {
  const dir = makeTempDir('toolmux-fifo-');
  const fifo = path.join(dir, 'catalog.json');
  execFileSync('mkfifo', [fifo]);
  const why = `cannot read ${fifo}: it is a FIFO (named pipe), not a regular file`;
  // A regression would wait for a writer forever: runCli's timeout fails it instead.
  const check = await runCli(['check', fifo], { timeoutMs: 5000 });
  assert.equal(check.code, 1, check.stdout + check.stderr);
  assert.ok(check.stdout.includes(`  : ${why}\n`), check.stdout);
  const serve = await runCli(['serve', '--root', dir, '--catalog', fifo], { timeoutMs: 5000 });
  assert.equal(serve.code, 2, serve.stderr);
  assert.ok(serve.stderr.includes(why), serve.stderr);
  // The same for a tokens file: a server that waited there would not even stop on SIGTERM.
  const tokens = await runCli(['serve', '--root', dir, '--http', '127.0.0.1:0', '--tokens-file', fifo], { timeoutMs: 5000 });
  assert.notEqual(tokens.code, 0, tokens.stderr);
  assert.ok(tokens.stderr.includes(`the tokens file: ${why}`), tokens.stderr);
});

test('serve refuses to start with a broken catalog, listing its problems', async () => {
  const root = makeTempDir('toolmux-root-');
  const server = new RawServer(['serve', '--root', root, '--catalog', BROKEN_CATALOG]);
  server.closeStdin();
  const exit = await Promise.race([server.exited, new Promise((resolve) => setTimeout(() => resolve(null), 5000))]);
  if (!exit) await server.kill();
  assert.ok(exit, 'serve kept running with a broken catalog');
  assert.notEqual(exit.code, 0, `serve exited 0 with a broken catalog; stderr: ${server.stderr}`);
  assert.match(server.stderr, /\/tools\/1\/sideEffect/, `stderr: ${server.stderr}`);
});

test('toolmux --version prints the project version', async () => {
  const { code, stdout, stderr } = await runCli(['--version']);
  assert.equal(code, 0, `exit ${code}; ${stdout}${stderr}`);
  const version = projectVersion();
  assert.ok(version, 'could not read the version from CMakeLists.txt');
  assert.ok(stdout.includes(version), `--version printed ${JSON.stringify(stdout)}, expected it to include ${version}`);
  assert.ok(stdout.split('\n').filter(Boolean).length <= 2, `--version should be short: ${stdout}`);
});

test('toolmux --help describes the commands and options', async () => {
  const { code, stdout, stderr } = await runCli(['--help']);
  assert.equal(code, 0, `exit ${code}; ${stdout}${stderr}`);
  for (const word of ['serve', 'check', '--catalog', '--root', '--allow-writes', '--page-size', '--version']) {
    assert.ok(stdout.includes(word), `--help does not mention ${word}:\n${stdout}`);
  }
});

test('an unknown command or option exits non-zero with a message', async () => {
  const unknownCommand = await runCli(['frobnicate']);
  assert.notEqual(unknownCommand.code, 0);
  assert.ok(unknownCommand.stderr.trim().length > 0, 'no message on stderr');
  const unknownOption = await runCli(['serve', '--no-such-option']);
  assert.notEqual(unknownOption.code, 0);
  assert.ok(unknownOption.stderr.trim().length > 0, 'no message on stderr');
});

test('toolmux check warns on stderr of each tool whose schema lets undeclared arguments through, unless the policy refuses them', async () => {
  const dir = makeTempDir('toolmux-open-');
  const tool = (name, schema) => ({
    name, description: `The ${name} tool.`, inputSchema: schema, sideEffect: 'read_only', timeoutMs: 1000,
    command: { argv: ['true'] },
  });
  const catalog = {
    tools: [
      tool('open_tool', { type: 'object', properties: { path: { type: 'string', description: 'A path.' } } }),
      tool('closed_tool', { type: 'object', properties: {}, additionalProperties: false }),
    ],
  };
  const file = path.join(dir, 'catalog.json');
  fs.writeFileSync(file, JSON.stringify(catalog));
  const warned = await runCli(['check', file]);
  assert.equal(warned.code, 0, warned.stdout + warned.stderr);
  assert.match(warned.stdout, /: ok, 2 command tools/);
  assert.equal(warned.stderr,
    'warning: tool "open_tool": its inputSchema does not set "additionalProperties": false, so arguments it does not ' +
    'declare reach it; set it, or refuse such arguments for every such tool with "policy": {"unknownArguments": "reject"}\n');

  fs.writeFileSync(file, JSON.stringify({ ...catalog, policy: { unknownArguments: 'reject' } }));
  const quiet = await runCli(['check', file]);
  assert.equal(quiet.code, 0, quiet.stdout + quiet.stderr);
  assert.equal(quiet.stderr, '');
});

// `toolmux check --fuzz`: schema fuzzing of every tool, through the argument checks only.
const EXAMPLE_CATALOG = path.join(REPO_ROOT, 'examples/catalog.json');
const FUZZ_MISTAKES = path.join(DATA_DIR, 'fuzz_mistakes_catalog.json');

test('toolmux check --fuzz on examples/catalog.json: exit 0, every tool fuzzed, every case passed', async () => {
  const { code, stdout, stderr } = await runCli(['check', '--fuzz', EXAMPLE_CATALOG, '--cases', '10'], { timeoutMs: 60000 });
  assert.equal(code, 0, `exit ${code}; stdout: ${stdout}; stderr: ${stderr}`);
  for (const tool of ['count_lines', 'checksum_files', 'head_of_file', 'file_size', 'read_text_file', 'search_file_contents', 'call_tool']) {
    const line = stdout.split('\n').find((l) => l.startsWith(`  ${tool}: `));
    assert.ok(line, `no report line for ${tool}:\n${stdout}`);
    const [, cases, passed] = line.match(/: (\d+) cases, (\d+) passed$/) ?? [];
    assert.ok(Number(cases) > 0 && cases === passed, `${tool}: ${line}`);
  }
  assert.match(stdout, /examples\/catalog\.json: ok, all \d+ cases passed/);
  assert.doesNotMatch(stdout, /FAIL/);
});

test('toolmux check --fuzz finds schema mistakes: exit 1, each named with the case and the answer, and no command runs', async () => {
  const dir = makeTempDir('toolmux-fuzz-');
  const catalog = path.join(dir, 'catalog.json');
  fs.copyFileSync(FUZZ_MISTAKES, catalog);
  const { code, stdout, stderr } = await runCli(['check', '--fuzz', catalog, '--seed', '3'], { timeoutMs: 60000 });
  const show = `\n--- output ---\n${stdout}${stderr}`;
  assert.equal(code, 1, `exit ${code}${show}`);
  const section = (tool) => {
    const lines = stdout.split('\n');
    const start = lines.findIndex((l) => l.startsWith(`  ${tool}: `));
    assert.ok(start >= 0, `no report for ${tool}${show}`);
    const end = lines.findIndex((l, i) => i > start && /^ {2}\S/.test(l));
    return lines.slice(start, end < 0 ? undefined : end).join('\n');
  };
  // deploy's example "release-2" breaks its own pattern: that valid case is refused.
  const deploy = section('deploy');
  assert.match(deploy, /FAILED/, deploy);
  assert.match(deploy, /FAIL valid case refused/, deploy);
  assert.match(deploy, /call: (deploy|ship) \{"branch":"release-2"/, deploy);
  assert.match(deploy, /answer: Invalid arguments for tool "deploy": argument \/branch: does not match the pattern "\^\[a-z\]\+\$"/, deploy);
  // The fixed "environment" is the operator's: no near miss sets it.
  assert.match(deploy, /note: near misses of "environment" left out/, deploy);
  // archive requires "path" but allows only "file": no call can pass.
  const archive = section('archive');
  assert.match(archive, /FAIL no valid arguments can be built: \/: required property "path" is not in "properties" and "additionalProperties" is false/, archive);
  // status is right, through its alias "name" and its default "lines" too.
  const status = section('status');
  assert.match(status, /^ {2}status: (\d+) cases, \1 passed$/m, status);
  // "lines" is required, but the policy's default fills it in: leaving it out is no near miss.
  assert.match(status, /note: a missing "lines" is not a near miss: the operator's policy gives it a default/, status);
  assert.match(stdout, /catalog\.json: \d+ failures? in \d+ tools \(\d+ cases\)/, show);
  assert.deepEqual(fs.readdirSync(dir), ['catalog.json'], 'a command tool ran during check --fuzz');
});

// `toolmux check --fuzz --run`: the valid cases run the real tools.
const FUZZ_RUN = path.join(REPO_ROOT, 'tests/data/catalogs/fuzz_run.json');

test('toolmux check --fuzz --run: exit 1 naming the crash, the bad results and the timeout; mutations only in a throwaway root', async () => {
  const dir = makeTempDir('toolmux-fuzz-run-');
  const catalog = path.join(dir, 'catalog.json');
  // The catalog's relative cwd ("workdir") is resolved from its own folder.
  fs.copyFileSync(FUZZ_RUN, catalog);
  fs.mkdirSync(path.join(dir, 'workdir'));
  for (const mutating of [false, true]) {
    const args = ['check', '--fuzz', '--run', catalog, '--cases', '4', ...(mutating ? ['--fuzz-mutating'] : [])];
    const { code, stdout, stderr } = await runCli(args, { timeoutMs: 60000, cwd: dir });
    const show = `\n--- output ---\n${stdout}${stderr}`;
    assert.equal(code, 1, `exit ${code}${show}`);
    assert.match(stdout, /^ {2}echo_word \(read_only\): 4 run, 4 passed$/m, show);
    assert.match(stdout, /^ {4}FAIL crashed\n {6}call: crash_on_boom \{"mode":"boom"\}\n {6}answer: command was killed by signal 11 \(SIGSEGV\)/m, show);
    assert.match(stdout, /^ {2}not_utf8 \(read_only\): 4 run, 0 passed, 4 FAILED$/m, show);
    assert.match(stdout, /answer: Tool "no_structured_output" returned no structuredContent although it declares an outputSchema/, show);
    assert.match(stdout, /^ {2}too_slow \(read_only\): 4 run, 0 passed, 4 FAILED\n {4}FAIL timed out$/m, show);
    assert.match(stdout, /^ {2}says_no \(read_only\): 4 run, 0 passed, 4 answered isError\n {4}warning: error answer$/m, show);
    assert.match(stdout, /^ {2}wipe \(destructive\): not run: destructive: never run$/m, show);
    assert.match(stdout, /^ {2}post_message \(remote_mutation\): not run: remote_mutation/m, show);
    assert.match(stdout, /catalog\.json: run: \d+ failures in 4 tools \(/, show);
    if (mutating) {
      assert.match(stdout, /^ {2}write_note \(local_mutation\): 4 run in a throwaway root, 0 passed, 4 answered isError$/m, show);
      assert.match(stdout, /^ {2}write_in_workdir \(local_mutation\): not run: local_mutation with its own cwd ".*workdir": it would write outside the throwaway root$/m, show);
      const ranIn = stdout.match(/ran in ([^\s\\]+) home ([^\s\\]+)/);
      assert.ok(ranIn, show);
      assert.equal(ranIn[1], ranIn[2]);
      assert.ok(!fs.existsSync(ranIn[1]), `the throwaway root ${ranIn[1]} is still there`);
    } else {
      assert.match(stdout, /^ {2}write_note \(local_mutation\): not run: local_mutation: runs only with --fuzz-mutating, in a throwaway root$/m, show);
    }
    // Nothing was written where check ran, nor in the catalog's workdir.
    assert.deepEqual(fs.readdirSync(dir).sort(), ['catalog.json', 'workdir'], show);
    assert.deepEqual(fs.readdirSync(path.join(dir, 'workdir')), [], show);
  }
});

test('toolmux check: --run needs --fuzz, --fuzz-mutating needs --run', async () => {
  for (const [args, message] of [[['check', FUZZ_RUN, '--run'], /--run goes with --fuzz/], [['check', '--fuzz', FUZZ_RUN, '--fuzz-mutating'], /--fuzz-mutating goes with --fuzz --run/]]) {
    const { code, stderr } = await runCli(args);
    assert.equal(code, 2, `${args.join(' ')}: exit ${code}; ${stderr}`);
    assert.match(stderr, message, stderr);
  }
});

test('toolmux check: --cases and --seed need --fuzz and a number', async () => {
  for (const args of [['check', FUZZ_MISTAKES, '--cases', '5'], ['check', '--fuzz', FUZZ_MISTAKES, '--cases', '0'], ['check', '--fuzz', FUZZ_MISTAKES, '--seed', 'x']]) {
    const { code, stderr } = await runCli(args);
    assert.equal(code, 2, `${args.join(' ')}: exit ${code}; ${stderr}`);
    assert.match(stderr, /--cases|--seed/, stderr);
  }
});
