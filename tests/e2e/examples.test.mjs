// examples/claude_desktop_config.json must start a working server exactly as
// configured (args and env as written; started from the repository root). The
// only substitution: a command naming toolmux (relative, a placeholder such as
// "/path/to/toolmux", or the install location) is replaced by the binary under
// test, so that the test checks this build rather than whatever is installed.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { REPO_ROOT, TOOLMUX_BIN, runCli, startClient } from './helpers.mjs';

const CONFIG = path.join(REPO_ROOT, 'examples/claude_desktop_config.json');

function resolveCommand(command) {
  const name = path.basename(command.replace(/[<>{}]/g, ''));
  if (/^toolmux(\.exe)?$/i.test(name) || (/toolmux/i.test(name) && !fs.existsSync(command))) return TOOLMUX_BIN;
  return command;
}

test('examples/claude_desktop_config.json launches toolmux and lists tools', async (t) => {
  const config = JSON.parse(fs.readFileSync(CONFIG, 'utf8'));
  const servers = config.mcpServers ?? {};
  assert.ok(servers.toolmux, `no mcpServers.toolmux in ${CONFIG}: ${JSON.stringify(config)}`);
  for (const [name, server] of Object.entries(servers)) {
    await t.test(`mcpServers.${name}`, async (st) => {
      assert.equal(typeof server.command, 'string', `${name}.command`);
      const args = server.args ?? [];
      assert.ok(Array.isArray(args) && args.every((a) => typeof a === 'string'), `${name}.args must be strings`);
      const command = resolveCommand(server.command);
      if (command !== server.command) st.diagnostic(`command ${server.command} replaced by ${command}`);
      const { client } = await startClient(st, { command, args, env: server.env ?? {}, cwd: REPO_ROOT });
      assert.equal(client.getServerVersion()?.name, 'toolmux');
      const { tools } = await client.listTools();
      assert.ok(tools.length > 0, 'no tools listed');
      assert.ok(tools.some((tool) => tool.name === 'read_text_file'), `tools: ${tools.map((x) => x.name)}`);
    });
  }
});

// Every examples/*.json is either a client configuration (a top-level
// "mcpServers", tested above) or a catalog that passes toolmux check; one
// that does not parse fails the test, naming the file.
test('examples/*.json parse, and every catalog among them passes toolmux check', async () => {
  const dir = path.join(REPO_ROOT, 'examples');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
  assert.ok(files.length > 0, 'no examples/*.json');
  const catalogs = [];
  for (const file of files) {
    let value;
    try {
      value = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    } catch (error) {
      assert.fail(`examples/${file} is not valid JSON: ${error.message}`);
    }
    assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), `examples/${file} is not a JSON object`);
    if (!('mcpServers' in value)) catalogs.push(file);
  }
  assert.ok(catalogs.includes('catalog.json'), `catalogs found: ${catalogs}`);
  for (const file of catalogs) {
    const { code, stdout, stderr } = await runCli(['check', path.join(dir, file)]);
    assert.equal(code, 0, `toolmux check examples/${file} failed:\n${stdout}${stderr}`);
  }
});
