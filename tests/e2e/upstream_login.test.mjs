// `toolmux login UPSTREAM` (docs/upstreams.md#login): a person logs in once
// to an HTTP upstream that asks for authorization, whose catalog entry has
// "oauth": {"grant": "authorization_code"}. The upstream is a real toolmux
// over HTTP behind a real OpenID provider (npm oidc-provider,
// oidc_issuer.mjs); the test plays the browser. toolmux registers a client
// (RFC 7591), takes the redirect on a loopback port, keeps the login in the
// data directory, and a server on that directory uses it; doctor and the
// status page say when a login is missing, and so does a call of its tools.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { HttpServer, TOOLMUX_BIN, makeRoot, makeTempDir, runCli, startClient, textOf, waitUntil } from './helpers.mjs';
import { followAuthorization, freePort, startIssuer } from './oidc_issuer.mjs';

/** A toolmux over HTTP that takes the issuer's tokens, serving hello.txt; and a catalog naming it. */
async function setup(t) {
  const port = await freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const issuer = await startIssuer(t, { resource, scopes: ['tools:read'] });
  await HttpServer.start(t, {
    listen: `127.0.0.1:${port}`,
    root: makeRoot({ 'hello.txt': 'hello from the upstream\n' }),
    args: ['--auth-issuer', issuer.issuer, '--resource-url', resource, '--auth-scope', 'tools:read=read_only'],
  });
  const dir = makeTempDir('toolmux-login-');
  const catalog = path.join(dir, 'catalog.json');
  fs.writeFileSync(
    catalog,
    JSON.stringify({
      tools: [],
      // Lazy: a later run knows its tools from the last listing before it starts.
      upstreams: { up: { url: resource, start: 'lazy', oauth: { grant: 'authorization_code' } } },
      discovery: { mode: 'off' },
    }),
  );
  return { issuer, resource, dir, catalog, dataDir: path.join(dir, 'data') };
}

/** Runs `toolmux login up`, playing the browser at the URL it prints. */
async function login(catalog, dataDir) {
  const child = spawn(TOOLMUX_BIN, ['login', 'up', '--catalog', catalog, '--data-dir', dataDir, '--no-browser', '--timeout', '60'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  try {
    await waitUntil(() => /redirect to (\S+)\.\n/.test(stdout) || child.exitCode !== null, 15000, 'the authorization URL');
    const url = /open this URL in a browser:\n\n {2}(\S+)\n/.exec(stdout)?.[1];
    const redirect = /redirect to (\S+)\.\n/.exec(stdout)?.[1];
    assert.ok(url && redirect, `stdout: ${stdout}\nstderr: ${stderr}`);
    const params = await followAuthorization(url, redirect);
    const answered = await fetch(`${redirect}?${params}`);
    assert.equal(answered.status, 200);
    await answered.text();
    return { code: await exited, stdout, stderr, url: new URL(url), redirect };
  } finally {
    child.kill('SIGKILL');
  }
}

test('toolmux login registers, takes the redirect and keeps the login; serve uses it; logout forgets it', async (t) => {
  const { resource, dir, catalog, dataDir } = await setup(t);

  const before = await runCli(['doctor', '--catalog', catalog, '--data-dir', dataDir]);
  assert.equal(before.code, 1, before.stdout);
  assert.match(before.stdout, /problem: upstream "up" needs a person to log in: run `toolmux login up --catalog /);

  const done = await login(catalog, dataDir);
  assert.equal(done.code, 0, `stdout: ${done.stdout}\nstderr: ${done.stderr}`);
  assert.match(done.stdout, /Logged in to upstream "up"; the login is kept in .*logins\./);
  // The authorization request: PKCE S256, the resource, the challenged scope, a loopback redirect.
  assert.equal(done.url.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(done.url.searchParams.get('resource'), resource);
  assert.match(done.url.searchParams.get('scope'), /\btools:read\b/);
  assert.match(done.redirect, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);

  const file = path.join(dataDir, 'logins', 'up.json');
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  const kept = JSON.parse(fs.readFileSync(file, 'utf8'));
  assert.equal(kept.server_url, resource);
  assert.ok(kept.access_token.length > 20);
  assert.ok(!done.stdout.includes(kept.access_token) && !done.stderr.includes(kept.access_token), 'the token is never printed');

  const after = await runCli(['doctor', '--catalog', catalog, '--data-dir', dataDir]);
  assert.match(after.stdout, /ok: upstream "up" has a login \(kept in /);

  const { client, stderr } = await startClient(t, {
    args: ['serve', '--root', dir, '--catalog', catalog, '--data-dir', dataDir],
  });
  await waitUntil(async () => (await client.listTools()).tools.some((tool) => tool.name === 'up_read_text_file'), 10000, 'the upstream tools');
  const read = await client.callTool({ name: 'up_read_text_file', arguments: { path: 'hello.txt' } });
  assert.ok(!read.isError, textOf(read));
  assert.match(textOf(read), /hello from the upstream/);
  assert.ok(!stderr().includes(kept.access_token), 'the token is never logged');
  await client.close();

  const out = await runCli(['logout', 'up', '--data-dir', dataDir]);
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /Logged out of upstream "up"/);
  assert.ok(!fs.existsSync(file));
  const again = await runCli(['logout', 'up', '--data-dir', dataDir]);
  assert.match(again.stdout, /No login was kept for upstream "up"/);

  // Without it, a call of its tools (known from the last listing) says so,
  // and so does the status page; no client is registered meanwhile.
  const server = await HttpServer.start(t, { dataDir, root: dir, catalog });
  const transport = new StreamableHTTPClientTransport(new URL(server.url));
  const http = new Client({ name: 'toolmux-e2e-login', version: '0.0.0' });
  t.after(() => http.close().catch(() => {}));
  await http.connect(transport);
  const refused = await http.callTool({ name: 'up_read_text_file', arguments: { path: 'hello.txt' } });
  assert.equal(refused.isError, true);
  assert.match(textOf(refused), /needs a person to log in: run `toolmux login up`/);
  const status = await (await fetch(`${server.origin}/status.json`)).json();
  const up = status.upstreams.items.find((u) => u.name === 'up');
  assert.equal(up.phase, 'needs_login', JSON.stringify(up));
  assert.match(up.last_error, /needs a person to log in: run `toolmux login up`/);
});

test('login refuses an upstream that takes no login, and a name the catalog lacks', async (t) => {
  const dir = makeTempDir('toolmux-login-');
  const catalog = path.join(dir, 'catalog.json');
  fs.writeFileSync(
    catalog,
    JSON.stringify({
      tools: [],
      upstreams: {
        fixed: { url: 'http://127.0.0.1:9/mcp', bearerToken: { fromEnv: 'FIXED_TOKEN' } },
        local: { command: 'cat' },
        gone: { url: 'http://127.0.0.1:9/mcp', oauth: { grant: 'authorization_code' } },
      },
    }),
  );
  const env = { FIXED_TOKEN: 'a-fixed-token-for-the-test' };
  const fixed = await runCli(['login', 'fixed', '--catalog', catalog, '--data-dir', dir], { env });
  assert.equal(fixed.code, 1);
  assert.match(fixed.stderr, /upstream "fixed" has no "oauth" with "grant": "authorization_code"/);
  const local = await runCli(['login', 'local', '--catalog', catalog, '--data-dir', dir], { env });
  assert.match(local.stderr, /upstream "local" is a stdio server/);
  const missing = await runCli(['login', 'nope', '--catalog', catalog, '--data-dir', dir], { env });
  assert.match(missing.stderr, /the catalog has no upstream named "nope" \(it has: fixed, gone, local\)/);
  // Nothing answers there: an error at once, never a wait on the redirect.
  const gone = await runCli(['login', 'gone', '--catalog', catalog, '--data-dir', dir], { env });
  assert.equal(gone.code, 1);
  assert.match(gone.stderr, /no answer from http:\/\/127\.0\.0\.1:9\/mcp/);
  assert.ok(!gone.stdout.includes('open this URL'));
  const usage = await runCli(['login', 'fixed']);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /login needs --catalog FILE/);
});
