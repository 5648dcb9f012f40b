// Where users meet toolmux: `toolmux import` of a client's configuration
// naming real stdio servers (server-everything and server-memory from npm),
// served by the real binary as the printed client configuration says, and
// compared tool by tool with the servers listed directly; `toolmux doctor` on
// a broken setup and a good one; serve's first-run guidance in a terminal
// (a pseudo-terminal from util-linux's `script`), and its silence otherwise.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { DATA_DIR, REPO_ROOT, TOOLMUX_BIN, listAllTools, makeTempDir, requireBinary, runCli, startClient, waitUntil } from './helpers.mjs';

const MODULES = path.resolve('node_modules/@modelcontextprotocol');
const EVERYTHING = path.join(MODULES, 'server-everything/dist/index.js');
const MEMORY = path.join(MODULES, 'server-memory/dist/index.js');
const DOCTOR_DATA = path.join(DATA_DIR, '..', 'doctor');
// What toolmux declares to its upstreams: a server may list tools by them.
const UPSTREAM_CAPABILITIES = { elicitation: {}, sampling: {} };

/** The JSON object printed after `heading` to the end of the output. */
function printedJsonAfter(text, heading) {
  const at = text.indexOf(heading);
  assert.ok(at >= 0, `"${heading}" in:\n${text}`);
  return JSON.parse(text.slice(at + heading.length));
}

/** A server's tools, listed by the SDK client directly (no toolmux between). */
async function toolsListedDirectly(t, command, args, env = {}) {
  const client = new Client({ name: 'toolmux-e2e-direct', version: '0.0.0' }, { capabilities: UPSTREAM_CAPABILITIES });
  await client.connect(new StdioClientTransport({ command, args, env: { PATH: process.env.PATH, ...env }, stderr: 'pipe' }));
  t.after(() => client.close());
  return listAllTools(client);
}

test('import: a Claude Desktop configuration of real servers, served by toolmux with the same tools', async (t) => {
  const dir = makeTempDir('toolmux-import-');
  const memoryFile = path.join(dir, 'memory.jsonl');
  const config = path.join(dir, 'claude_desktop_config.json');
  fs.writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
        memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: memoryFile } },
        retired: { command: process.execPath, args: [MEMORY], disabled: true },
      },
    }),
  );
  const catalogFile = path.join(dir, 'toolmux-catalog.json');

  const imported = await runCli(['import', config], { cwd: dir });
  assert.equal(imported.code, 0, imported.stderr);
  const out = imported.stdout;
  assert.match(out, /as Claude Desktop's configuration \(claude_desktop_config\.json\): 2 of 3 servers imported\./);
  assert.match(out, /^ {2}skipped: retired \(disabled in the client's configuration\)$/m);
  assert.match(out, /^ {2}TOOLMUX_MEMORY_MEMORY_FILE_PATH {2}\/mcpServers\/memory\/env\/MEMORY_FILE_PATH$/m);
  assert.ok(!out.includes(memoryFile), 'the value of env is never printed');

  // The catalog: written where --out defaults to, naming the schema, with the secret by reference.
  const catalog = JSON.parse(fs.readFileSync(catalogFile, 'utf8'));
  assert.equal(fs.realpathSync(catalog.$schema), path.join(REPO_ROOT, 'schema/catalog.schema.json'));
  assert.deepEqual(Object.keys(catalog.upstreams).sort(), ['everything', 'memory']);
  assert.deepEqual(catalog.upstreams.memory.env, { MEMORY_FILE_PATH: { fromEnv: 'TOOLMUX_MEMORY_MEMORY_FILE_PATH' } });
  assert.ok(!fs.readFileSync(catalogFile, 'utf8').includes(memoryFile));

  const env = { TOOLMUX_MEMORY_MEMORY_FILE_PATH: memoryFile };
  const checked = await runCli(['check', catalogFile], { env });
  assert.equal(checked.code, 0, checked.stdout + checked.stderr);
  assert.match(checked.stdout, /ok, .* 2 upstream MCP servers \(not started\)/);

  // The printed client configuration, as a client would run it.
  const client = printedJsonAfter(out, "replaces the servers imported:\n");
  const entry = client.mcpServers.toolmux;
  assert.deepEqual(Object.keys(client.mcpServers), ['toolmux']);
  assert.equal(entry.command, fs.realpathSync(TOOLMUX_BIN));
  assert.deepEqual(entry.args, ['serve', '--catalog', catalogFile]);
  const { client: viaToolmux } = await startClient(t, {
    command: entry.command,
    args: [...entry.args, '--data-dir', path.join(dir, 'data')],
    env,
  });
  const served = await listAllTools(viaToolmux);
  const servedByName = new Map(served.map((tool) => [tool.name, tool]));

  for (const [name, args, serverEnv] of [
    ['everything', [EVERYTHING, 'stdio'], {}],
    ['memory', [MEMORY], { MEMORY_FILE_PATH: memoryFile }],
  ]) {
    const direct = await toolsListedDirectly(t, process.execPath, args, serverEnv);
    assert.ok(direct.length > 0, `${name} lists tools`);
    const prefix = `${name}_`;
    assert.deepEqual(
      served.filter((tool) => tool.name.startsWith(prefix)).map((tool) => tool.name).sort(),
      direct.map((tool) => prefix + tool.name).sort(),
      `toolmux serves every tool of ${name}, under its prefix`,
    );
    for (const tool of direct) {
      const via = servedByName.get(prefix + tool.name);
      assert.deepEqual(via.inputSchema, tool.inputSchema, `${prefix}${tool.name}: the same input schema`);
      assert.equal(via.description, tool.description, `${prefix}${tool.name}: the same description`);
    }
  }

  // The secret reached the server: what memory writes lands in the file the old configuration named.
  const created = await viaToolmux.callTool({
    name: 'memory_create_entities',
    arguments: { entities: [{ name: 'toolmux', entityType: 'program', observations: ['imported'] }] },
  });
  assert.equal(created.isError, false, JSON.stringify(created));
  await waitUntil(() => fs.existsSync(memoryFile) && fs.readFileSync(memoryFile, 'utf8').includes('toolmux'), 5000, 'memory writes its file');
});

test('import: VS Code JSON with comments; --dry-run writes nothing; an existing catalog is kept', async () => {
  const dir = makeTempDir('toolmux-import-');
  const vscode = path.join(DATA_DIR, '..', 'import', 'vscode_mcp.json');
  const out = path.join(dir, 'catalog.json');

  const dry = await runCli(['import', vscode, '--out', out, '--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.ok(!fs.existsSync(out), '--dry-run writes nothing');
  assert.match(dry.stdout, /as VS Code's configuration \(mcp\.json\): 3 of 4 servers imported\./);
  assert.match(dry.stdout, /^ {2}not imported: legacy-sse: its "type" is "sse" .*Streamable HTTP only$/m);
  assert.match(dry.stdout, /^ {2}TOOLMUX_PERPLEXITY_PERPLEXITY_API_KEY {2}\/servers\/perplexity\/env\/PERPLEXITY_API_KEY \(the client asked for it: "Perplexity API Key"\)$/m);
  assert.ok(!dry.stdout.includes('github-token-value'), 'header values are never printed');
  const client = printedJsonAfter(dry.stdout, "replaces the servers imported:\n");
  assert.equal(client.servers.toolmux.type, 'stdio');
  assert.deepEqual(client.servers.toolmux.args, ['serve', '--catalog', out]);

  fs.writeFileSync(out, '{"tools": []}\n');
  const refused = await runCli(['import', vscode, '--out', out]);
  assert.equal(refused.code, 1);
  assert.equal(refused.stderr, `toolmux: ${out} exists; give --force to replace it, or --out another file\n`);
  assert.equal(fs.readFileSync(out, 'utf8'), '{"tools": []}\n');

  const forced = await runCli(['import', vscode, '--out', out, '--force']);
  assert.equal(forced.code, 0, forced.stderr);
  assert.deepEqual(Object.keys(JSON.parse(fs.readFileSync(out, 'utf8')).upstreams).sort(), ['github', 'perplexity', 'playwright']);

  const broken = await runCli(['import', path.join(DATA_DIR, '..', 'import', 'wrong_shapes.json'), '--out', path.join(dir, 'x.json')]);
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /: 4 problems, nothing imported\n {2}\/mcpServers\/args-not-strings\/args\/1: an argument must be a string\n/);
});

test('doctor: a broken setup gets one line per problem and exit 1; a good one exits 0', async () => {
  const dir = makeTempDir('toolmux-doctor-');
  const notADir = path.join(dir, 'state');
  fs.writeFileSync(notADir, 'x');
  const broken = await runCli(['doctor', '--catalog', path.join(DOCTOR_DATA, 'broken_setup.json'), '--data-dir', notADir], {
    env: { TOOLMUX_DOCTOR_TEST_SET: 'doctor-secret-value' },
  });
  assert.equal(broken.code, 1, broken.stdout);
  const lines = broken.stdout.split('\n');
  assert.ok(lines.includes('problem: upstream "missing": command "toolmux-doctor-no-such-program" is not found in PATH; install it, or give its absolute path at /upstreams/missing/command'), broken.stdout);
  assert.ok(lines.some((line) => line.startsWith('problem: variable TOOLMUX_DOCTOR_TEST_UNSET is not set')), broken.stdout);
  assert.ok(lines.includes('ok: variable TOOLMUX_DOCTOR_TEST_SET is set (/upstreams/shell/env/TOKEN)'), broken.stdout);
  assert.ok(lines.includes(`problem: data directory ${notADir} is not a directory; remove it or give --data-dir another folder`), broken.stdout);
  assert.ok(!broken.stdout.includes('doctor-secret-value'));
  assert.equal(lines.at(-2), '5 problems to fix.');

  const good = await runCli(['doctor', '--catalog', path.join(DOCTOR_DATA, 'good_setup.json'), '--data-dir', path.join(dir, 'data'), '--http', '127.0.0.1:0'], {
    env: { TOOLMUX_DOCTOR_TEST_SET: 'doctor-secret-value' },
  });
  assert.equal(good.code, 0, good.stdout);
  assert.ok(good.stdout.split('\n').slice(0, -2).every((line) => line.startsWith('ok: ')), good.stdout);
  assert.ok(good.stdout.endsWith('All checks passed.\n'));
});

test('doctor: a fromFile naming a FIFO is a problem at once, never waited on', async () => {
  const dir = makeTempDir('toolmux-doctor-fifo-');
  const catalog = path.join(dir, 'catalog.json');
  fs.copyFileSync(path.join(DOCTOR_DATA, 'fifo_secret.json'), catalog);
  execFileSync('mkfifo', [path.join(dir, 'secret.fifo')]);
  const result = await runCli(['doctor', '--catalog', catalog, '--data-dir', path.join(dir, 'data')], { timeoutMs: 5000 });
  assert.equal(result.code, 1, result.stdout);
  assert.ok(result.stdout.includes(`problem: cannot read ${path.join(dir, 'secret.fifo')}: it is a FIFO (named pipe), not a regular file (/upstreams/shell/env/TOKEN); `), result.stdout);
});

test('import and doctor show a hostile configuration\'s names escaped: nothing clears the screen or forges a line', async () => {
  const dir = makeTempDir('toolmux-import-hostile-');
  const out = path.join(dir, 'catalog.json');
  const imported = await runCli(['import', path.join(DATA_DIR, '..', 'import', 'hostile_names.json'), '--out', out]);
  assert.equal(imported.code, 0, imported.stderr);
  const doctor = await runCli(['doctor', '--catalog', path.join(DOCTOR_DATA, 'hostile_names.json'), '--data-dir', path.join(dir, 'data')]);
  for (const printed of [imported.stdout, doctor.stdout]) {
    assert.ok(!/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/.test(printed), printed);
    assert.ok(!printed.split('\n').some((line) => /^ok: (forged|program|variable)|^All checks passed/.test(line)), printed);
  }
  assert.ok(imported.stdout.includes('  imported: evil\\u001b[2J\\u001b[H\\nok: forged\n'), imported.stdout);
  assert.ok(doctor.stdout.includes('problem: upstream "evil\\u001b[2J\\r\\nAll checks passed.": command'), doctor.stdout);
  const entry = printedJsonAfter(imported.stdout, 'replaces the servers imported:\n');
  assert.deepEqual(entry.mcpServers.toolmux.args, ['serve', '--catalog', out]);
});

test('serve in a terminal says how to connect a client, on stderr only; stdout stays empty', async () => {
  requireBinary();
  const dir = makeTempDir('toolmux-first-run-');
  const stdoutFile = path.join(dir, 'stdout');
  const stderrFile = path.join(dir, 'stderr');
  const quote = (text) => `'${text.replaceAll("'", "'\\''")}'`;
  // `script` gives toolmux a pseudo-terminal as stdin; its stdout and stderr go to files.
  const command = `${quote(TOOLMUX_BIN)} serve --data-dir ${quote(path.join(dir, 'data'))} --root ${quote(dir)} >${quote(stdoutFile)} 2>${quote(stderrFile)}`;
  const child = spawn('script', ['-qec', command, '/dev/null'], { stdio: ['pipe', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.on('close', resolve));
  try {
    await waitUntil(() => fs.existsSync(stderrFile) && fs.readFileSync(stderrFile, 'utf8').includes('Ctrl-D ends it.'), 15000, 'the guidance');
    child.stdin.write('\x04'); // Ctrl-D: the terminal's end of input
    const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('timeout'), 15000))]);
    assert.equal(code, 0, 'toolmux ends at Ctrl-D');
  } finally {
    child.kill('SIGKILL');
  }
  const stderr = fs.readFileSync(stderrFile, 'utf8');
  const guidance = stderr.slice(stderr.indexOf('toolmux is an MCP server'));
  assert.equal(guidance.split('toolmux is now waiting for an MCP client on stdin').length, 2, 'said once');
  const claudeAt = guidance.indexOf('Cursor (~/.cursor/mcp.json):\n');
  const snippet = JSON.parse(guidance.slice(claudeAt + 'Cursor (~/.cursor/mcp.json):\n'.length, guidance.indexOf('\n}\n', claudeAt) + 2));
  assert.deepEqual(snippet.mcpServers.toolmux, {
    command: fs.realpathSync(TOOLMUX_BIN),
    args: ['serve', '--root', dir, '--data-dir', path.join(dir, 'data')],
  });
  assert.equal(fs.readFileSync(stdoutFile, 'utf8'), '', 'nothing on stdout, MCP’s channel');
});

test('serve whose stdin is not a terminal prints no guidance', async (t) => {
  const { client, stderr } = await startClient(t, { args: ['serve'] });
  await client.ping();
  assert.ok(!stderr().includes('waiting for an MCP client'), stderr());
});
