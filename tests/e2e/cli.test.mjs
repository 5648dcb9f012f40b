// The command line: `toolmux check`, `--version`, `--help`.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { BROKEN_CATALOG, CATALOG, RawServer, makeTempDir, projectVersion, runCli } from './helpers.mjs';

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
