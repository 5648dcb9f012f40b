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
  if (!fs.existsSync(CONFIG)) {
    t.skip(`${path.relative(REPO_ROOT, CONFIG)} does not exist yet`);
    return;
  }
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

function isCatalog(file) {
  try {
    const value = JSON.parse(fs.readFileSync(file, 'utf8'));
    return value !== null && typeof value === 'object' && 'tools' in value;
  } catch {
    return false;
  }
}

test('examples/*.json catalogs (files with a top-level "tools") pass toolmux check', async (t) => {
  const dir = path.join(REPO_ROOT, 'examples');
  const catalogs = fs.existsSync(dir)
    ? fs.readdirSync(dir).filter((f) => f.endsWith('.json') && isCatalog(path.join(dir, f)))
    : [];
  if (catalogs.length === 0) {
    t.skip('no example catalogs yet');
    return;
  }
  for (const file of catalogs) {
    const { code, stdout, stderr } = await runCli(['check', path.join(dir, file)]);
    assert.equal(code, 0, `toolmux check examples/${file} failed:\n${stdout}${stderr}`);
  }
});
