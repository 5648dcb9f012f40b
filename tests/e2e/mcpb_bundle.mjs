// toolmux's Claude Desktop extension (scripts/package-mcpb.sh), as a client
// of MCP Bundles runs it: unpacked with the MCP Bundle tool, its server started
// as the manifest's mcp_config says once the tool's own getMcpConfigForManifest
// (the function desktop clients use) has put the user's settings in, and
// spoken to with the SDK's client. Run by tests/packaging/mcpb.sh (CTest
// package_mcpb), which builds the bundle: MCPB_BUNDLE names it and
// MCPB_SERVER_JSON the server.json written beside it. Not a *.test.mjs: the
// e2e entry does not build bundles.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { BUILTIN_READ_TOOLS, listAllTools, makeRoot, makeTempDir, projectVersion, REPO_ROOT, startClient, textOf } from './helpers.mjs';
import { registryValidator } from './registry_schema.mjs';

const MCPB_DIR = path.join(REPO_ROOT, 'packaging/mcpb');
const MCPB = path.join(MCPB_DIR, 'node_modules/.bin/mcpb');
const { getMcpConfigForManifest } = await import(
  pathToFileURL(path.join(MCPB_DIR, 'node_modules/@anthropic-ai/mcpb/dist/index.js')).href
);
const EXAMPLE_CATALOG = path.join(REPO_ROOT, 'examples/catalog.json');

const bundle = process.env.MCPB_BUNDLE;
if (!bundle || !fs.existsSync(bundle)) throw new Error(`MCPB_BUNDLE (${bundle}) names no bundle: run tests/packaging/mcpb.sh`);

const mcpb = (...args) => execFileSync(MCPB, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const unpacked = makeTempDir('toolmux-mcpb-');
mcpb('unpack', bundle, unpacked);
const manifest = JSON.parse(fs.readFileSync(path.join(unpacked, 'manifest.json'), 'utf8'));

/** The command a desktop client runs for these settings (undefined: settings missing). */
function launchFor(userConfig) {
  const home = os.homedir();
  return getMcpConfigForManifest({
    manifest,
    extensionPath: unpacked,
    systemDirs: { HOME: home, DESKTOP: path.join(home, 'Desktop'), DOCUMENTS: path.join(home, 'Documents'), DOWNLOADS: path.join(home, 'Downloads') },
    userConfig,
    pathSeparator: path.sep,
  });
}

test('the unpacked bundle holds the manifest (0.4, binary server) and an executable server/toolmux', () => {
  assert.equal(manifest.manifest_version, '0.4');
  assert.equal(manifest.version, projectVersion());
  assert.equal(manifest.server.type, 'binary');
  assert.deepEqual(manifest.compatibility.platforms, ['linux']);
  assert.deepEqual(Object.keys(manifest.user_config).sort(), ['catalog', 'roots']);
  const binary = path.join(unpacked, manifest.server.entry_point);
  fs.accessSync(binary, fs.constants.X_OK);
  const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  assert.ok(version.endsWith(projectVersion()), version);
  assert.equal(mcpb('validate', path.join(unpacked, 'manifest.json')).trim(), 'Manifest schema validation passes!');
});

test('mcpb validate refuses a manifest that breaks the 0.4 schema', () => {
  const dir = makeTempDir('toolmux-mcpb-bad-');
  const bad = structuredClone(manifest);
  bad.user_config.roots.type = 'folder';
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(bad));
  assert.throws(() => mcpb('validate', path.join(dir, 'manifest.json')), (error) => /user_config/.test(`${error.stdout}${error.stderr}`));
});

test('without folders the client has nothing to run (roots is required)', async () => {
  assert.equal(await launchFor({}), undefined);
  assert.equal(await launchFor({ roots: [] }), undefined);
});

test('two folders and a catalog: the built-in tools in both, and the catalog tools', async (t) => {
  const docs = makeRoot({ 'notes.txt': 'first line\nsecond line\n' });
  const code = makeRoot({ 'src/main.c': 'int main(void) { return 0; }\n' });
  const launch = await launchFor({ roots: [docs, code], catalog: EXAMPLE_CATALOG });
  assert.equal(launch.command, path.join(unpacked, 'server/toolmux'));
  assert.deepEqual(launch.args, ['serve', `--catalog=${EXAMPLE_CATALOG}`, '--root', docs, code]);

  const { client } = await startClient(t, { command: launch.command, args: launch.args, env: launch.env ?? {} });
  const names = (await listAllTools(client)).map((tool) => tool.name);
  for (const name of [...BUILTIN_READ_TOOLS, 'tool_search', 'count_lines']) assert.ok(names.includes(name), `${name} not in ${names}`);
  assert.ok(!names.includes('write_text_file'), 'write_text_file is offered');
  for (const tool of manifest.tools) assert.ok(names.includes(tool.name), `the manifest lists ${tool.name}, the server does not offer it`);

  // With two roots a path starts with its root's folder name.
  const top = textOf(await client.callTool({ name: 'list_directory', arguments: { path: '.' } }));
  assert.deepEqual(top.split('\n').filter(Boolean).sort(), [`${path.basename(code)}/`, `${path.basename(docs)}/`].sort());
  const read = await client.callTool({ name: 'read_text_file', arguments: { path: `${path.basename(docs)}/notes.txt` } });
  assert.ok(!read.isError, textOf(read));
  assert.match(textOf(read), /second line/);
  const found = await client.callTool({ name: 'find_files', arguments: { pattern: '**/*.c' } });
  assert.match(textOf(found), new RegExp(`${path.basename(code)}/src/main\\.c`));
  const outside = await client.callTool({ name: 'read_text_file', arguments: { path: '/etc/hostname' } });
  assert.equal(outside.isError, true);
});

test('an empty catalog setting: the built-in tools only', async (t) => {
  const docs = makeRoot({ 'a.txt': 'alpha\n' });
  const launch = await launchFor({ roots: [docs] });
  assert.deepEqual(launch.args, ['serve', '--catalog=', '--root', docs]);
  const { client } = await startClient(t, { command: launch.command, args: launch.args });
  const names = (await listAllTools(client)).map((tool) => tool.name);
  assert.ok(!names.includes('count_lines'), `${names}`);
  const read = await client.callTool({ name: 'read_text_file', arguments: { path: 'a.txt' } });
  assert.match(textOf(read), /alpha/);
});

test("the server.json written beside the bundle is valid and holds the bundle's SHA-256", () => {
  const file = process.env.MCPB_SERVER_JSON;
  const server = JSON.parse(fs.readFileSync(file, 'utf8'));
  const validate = registryValidator();
  assert.ok(validate(server), JSON.stringify(validate.errors, null, 2));
  const entry = server.packages.find((p) => p.registryType === 'mcpb');
  const sha = execFileSync('sha256sum', [bundle], { encoding: 'utf8' }).split(' ')[0];
  assert.equal(entry.fileSha256, sha);
  assert.ok(entry.identifier.endsWith(`/${path.basename(bundle)}`), `${entry.identifier} is not ${path.basename(bundle)}`);
});
