// The operator's status page (GET /status, /status.json) of the real toolmux
// binary over HTTP, rendered by headless Chromium (Debian's chromium, driven
// by playwright-core): the catalog by source, an upstream serving, a call made
// through the SDK client among the latest calls, and the upstream killed with
// SIGKILL shown restarting and then serving again, and the write freeze
// switched on, all without a reload. The screenshots (status_page.png, and
// status_page_restarting.png) are kept in $TOOLMUX_TEST_ARTIFACTS
// (tests/CMakeLists.txt sets it to build/test-artifacts). And the page's admission: Host, Origin and tokens
// refused exactly as at the MCP endpoint, and the principals that may see it.
// And secrets, redacted in /status.json, /metrics, `toolmux audit` and
// `toolmux freeze status` as in the log: an upstream's error quoting its
// fromEnv value, a token and a password; a freeze reason holding a token; a
// token a client sent as a tool's name.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';

import { chromium } from 'playwright-core';

import { HttpServer, REPO_ROOT, connectHttp, initializeRequest, makeTempDir, mcpHeaders, runCli, textOf, waitUntil } from './helpers.mjs';

const CHROMIUM = process.env.TOOLMUX_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = process.env.TOOLMUX_TEST_ARTIFACTS ?? path.join(REPO_ROOT, 'build', 'test-artifacts');
const FIXTURE = path.resolve('status_upstream.mjs');
const HOSTILE_DESCRIPTION = 'Echoes the text. <img src=x onerror="window.__pwned=1"><b>bold?</b>';
const chromiumMissing = fs.existsSync(CHROMIUM)
  ? false
  : `chromium is not installed at ${CHROMIUM} (scripts/setup.sh --tests installs Debian's chromium)`;

/**
 * A catalog with one stdio upstream, the fixture, named `name` with `env`, restarted
 * `restartMs` after it dies (by default 3 s: long enough for the page to show it).
 */
function writeCatalog(dir, { name = 'fixture', env = { STATUS_UPSTREAM_PID_FILE: { fromEnv: 'STATUS_UPSTREAM_PID_FILE' } }, restartMs = 3000 } = {}) {
  const file = path.join(dir, 'catalog.json');
  fs.writeFileSync(file, JSON.stringify({
    tools: [],
    upstreams: {
      [name]: {
        command: process.execPath,
        args: [FIXTURE],
        cwd: path.dirname(FIXTURE),
        env,
        restart: { initialDelayMs: restartMs, maxDelayMs: restartMs },
      },
    },
  }));
  return file;
}

/** A raw GET or POST with exactly these headers (fetch cannot set Host). Resolves { status, headers, body }. */
function request(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, setHost: !('host' in headers) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

test('the status page shows the catalog, an upstream restarting and serving again, and the latest calls', { skip: chromiumMissing, timeout: 60000 }, async (t) => {
  const dir = makeTempDir('toolmux-status-');
  const pidFile = path.join(dir, 'upstream.pid');
  const server = await HttpServer.start(t, { catalog: writeCatalog(dir), env: { STATUS_UPSTREAM_PID_FILE: pidFile } });
  await waitUntil(() => fs.existsSync(pidFile), 10000, 'the upstream wrote its pid');
  const firstPid = Number(fs.readFileSync(pidFile, 'utf8'));

  // A call through the SDK client, which the audit trail records.
  const { client } = await connectHttp(t, server.url);
  const echoed = await client.callTool({ name: 'fixture_echo', arguments: { text: 'hello status' } });
  assert.match(textOf(echoed), /\nhello status\n/);

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Chromium's sandbox cannot start as root (CI containers).
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const problems = [];
  const elsewhere = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/favicon/.test(message.text()) && !/404/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('request', (req) => {
    if (new URL(req.url()).origin !== server.origin) elsewhere.push(req.url());
  });

  const response = await page.goto(`${server.origin}/status`);
  assert.equal(response.status(), 200);
  const upstreamRow = page.locator('#upstreams tr[data-upstream="fixture"]');
  await upstreamRow.locator('.phase', { hasText: 'serving' }).waitFor({ timeout: 10000 });

  // The sources, each with its tool count.
  const summaries = await page.locator('#sources summary').allTextContents();
  assert.ok(summaries.some((s) => /^toolmux: \d+ tools$/.test(s)), summaries.join(' | '));
  assert.ok(summaries.includes('catalog file: 0 tools'), summaries.join(' | '));
  assert.ok(summaries.includes('upstream fixture: 2 tools'), summaries.join(' | '));

  // A tool and its class; its description (markup from the upstream) as text.
  await page.locator('#sources details[data-source="fixture"] summary').click();
  const echoRow = page.locator('#sources details[data-source="fixture"] tr[data-tool="fixture_echo"]');
  assert.equal(await echoRow.locator('.class').textContent(), 'read_only');
  assert.equal(await echoRow.locator('.description').textContent(), HOSTILE_DESCRIPTION);
  assert.equal(await echoRow.locator('img, b').count(), 0, 'no markup from the upstream became elements');
  assert.equal(
    await page.locator('#sources details[data-source="fixture"] tr[data-tool="fixture_wipe"] .class').textContent(),
    'destructive',
  );

  // The call among the latest calls; the session among the open ones.
  const callRow = page.locator('#calls tr[data-call-tool="fixture_echo"]').first();
  await callRow.waitFor({ timeout: 5000 });
  const callCells = await callRow.locator('td').allTextContents();
  assert.equal(callCells[1], 'local');
  assert.equal(callCells[3], 'read_only');
  assert.equal(callCells[4], 'ok');
  assert.match(await page.locator('#sessions-summary').textContent(), /^1 open session;/);
  assert.match(await page.locator('#sessions tr[data-session]').first().textContent(), /^http-\d+local/);
  assert.equal(await page.locator('#freeze').textContent(), 'Writes are not frozen.');

  // Kill the upstream: the page, not reloaded, shows it restarting, then serving again.
  await page.evaluate(() => { window.__sameDocument = true; });
  process.kill(firstPid, 'SIGKILL');
  await upstreamRow.locator('.phase', { hasText: 'restarting' }).waitFor({ timeout: 10000 });
  assert.match(await upstreamRow.locator('.state').textContent(), /^restarting: .*next attempt in/);
  assert.match(await upstreamRow.locator('.last-error').textContent(), /\S/);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'status_page_restarting.png'), fullPage: true });
  await upstreamRow.locator('.phase', { hasText: 'serving' }).waitFor({ timeout: 15000 });
  await waitUntil(async () => (await upstreamRow.locator('.restarts').textContent()) === '1', 5000, 'one restart shown');
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the page was not reloaded');
  assert.notEqual(Number(fs.readFileSync(pidFile, 'utf8')), firstPid, 'a new upstream process');

  // The write freeze, switched on while the page is open.
  const frozen = await runCli(['freeze', 'on', '--reason', 'maintenance <b>window</b>', '--data-dir', server.dataDir]);
  assert.equal(frozen.code, 0, frozen.stderr);
  await page.locator('#freeze.on').waitFor({ timeout: 10000 });
  assert.match(await page.locator('#freeze').textContent(), /^Writes are frozen since \d{4}-\d\d-\d\dT[\d:.]+Z: maintenance <b>window<\/b>$/);
  await waitUntil(
    async () => (await page.locator('tr[data-tool="fixture_wipe"] .class').textContent()) === 'destructive (frozen)',
    5000,
    'the destructive tool marked frozen',
  );
  assert.equal(await page.locator('tr[data-tool="fixture_echo"] .class').textContent(), 'read_only');
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the page was not reloaded');

  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'no script from the upstream ran');
  assert.doesNotMatch(await page.locator('body').innerText(), /\b(null|undefined|NaN)\b/, 'no missing value shown');
  assert.deepEqual(elsewhere, [], 'the page fetched nothing from anywhere else');
  assert.deepEqual(problems, []);

  await page.screenshot({ path: path.join(ARTIFACTS, 'status_page.png'), fullPage: true });
  await server.stopCleanly(assert);
});

test('/status and /status.json are admitted as the MCP endpoint is, and only for the named principals', async (t) => {
  const alice = 'alice-token-0123456789abcdef';
  const bob = 'bob-token-0123456789abcdef';
  const server = await HttpServer.start(t, {
    args: ['--status-principal', 'alice'],
    env: { TOOLMUX_TOKENS: `alice=${alice},bob=${bob}` },
  });
  const status = `${server.origin}/status`;
  const endpoint = server.url;
  const post = (headers) => request(endpoint, { method: 'POST', headers: { ...mcpHeaders(), ...headers }, body: JSON.stringify(initializeRequest()) });

  // The same refusals, with the same status, headers and message, as /mcp.
  const cases = [
    ['a wrong Origin', { origin: 'http://evil.example', authorization: `Bearer ${alice}` }],
    ['a wrong Host', { host: 'evil.example', authorization: `Bearer ${alice}` }],
    ['no token', {}],
    ['an unknown token', { authorization: 'Bearer not-a-token-0123456789' }],
  ];
  for (const [what, headers] of cases) {
    const atEndpoint = await post(headers);
    assert.ok([401, 403].includes(atEndpoint.status), `${what}: /mcp answers ${atEndpoint.status}`);
    for (const url of [status, `${status}.json`]) {
      const got = await request(url, { headers });
      assert.equal(got.status, atEndpoint.status, `${what}: ${url}`);
      assert.deepEqual(JSON.parse(got.body), JSON.parse(atEndpoint.body), `${what}: ${url}`);
      assert.equal(got.headers['www-authenticate'], atEndpoint.headers['www-authenticate'], `${what}: ${url}`);
    }
  }

  // bob has a valid token but is not named: 403, saying why.
  const asBob = await request(status, { headers: { authorization: `Bearer ${bob}` } });
  assert.equal(asBob.status, 403);
  assert.match(JSON.parse(asBob.body).error.message, /principal "bob" may not see the status page \(serve --status-principal\)/);

  // alice sees the page: self-contained, under a strict policy.
  const page = await request(status, { headers: { authorization: `Bearer ${alice}` } });
  assert.equal(page.status, 200);
  assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  const policy = page.headers['content-security-policy'];
  const nonce = /script-src 'nonce-([A-Za-z0-9_-]+)'/.exec(policy)?.[1];
  assert.ok(nonce, policy);
  assert.match(policy, /^default-src 'none'; /);
  assert.doesNotMatch(policy, /unsafe|\*|https?:/);
  assert.ok(page.body.includes(`<script nonce="${nonce}">`) && page.body.includes(`<style nonce="${nonce}">`));
  assert.doesNotMatch(page.body, /(src|href)\s*=|https?:\/\/|@import|url\(/i, 'no external URL of any kind');
  assert.equal(page.headers['cache-control'], 'no-store');
  assert.equal(page.headers['x-frame-options'], 'DENY');
  const again = await request(status, { headers: { authorization: `Bearer ${alice}` } });
  assert.notEqual(again.headers['content-security-policy'], policy, 'a new nonce each time');

  const data = await request(`${status}.json`, { headers: { authorization: `Bearer ${alice}` } });
  assert.equal(data.status, 200);
  assert.equal(data.headers['content-type'], 'application/json');
  const snapshot = JSON.parse(data.body);
  assert.deepEqual(Object.keys(snapshot).sort(), ['calls', 'freeze', 'server', 'sessions', 'sources', 'upstreams']);
  assert.ok(!data.body.includes(alice) && !data.body.includes(bob), 'no token in the snapshot');
  await server.stopCleanly(assert);
});

test('/status.json, /metrics, toolmux audit and toolmux freeze status show secrets redacted, as the log does', async (t) => {
  const apiKey = 'status-e2e-api-key-Zq81wX';
  const token = `ghp_${'aB3dE6gH9j'.repeat(3)}K2mN5p`;
  const catalog = writeCatalog(makeTempDir('toolmux-status-'), {
    name: 'vault',
    env: { API_KEY: { fromEnv: 'STATUS_E2E_API_KEY' }, STATUS_UPSTREAM_REFUSE: '1' },
    restartMs: 60000,
  });
  const server = await HttpServer.start(t, { catalog, env: { STATUS_E2E_API_KEY: apiKey } });
  const snapshot = async () => {
    const got = await request(`${server.origin}/status.json`);
    assert.equal(got.status, 200, got.body);
    return { text: got.body, json: JSON.parse(got.body) };
  };
  const secrets = [apiKey, 'ghp_', 'hunter2'];
  const assertNoSecret = (text, where) => {
    for (const secret of secrets) assert.ok(!text.includes(secret), `${where} shows ${secret}: ${text}`);
  };

  // A client sends a token as a tool's name; the operator freezes writes with a token in the reason.
  const { client } = await connectHttp(t, server.url);
  const unknown = await client.callTool({ name: token, arguments: {} }).catch((error) => ({ isError: true, error }));
  assert.equal(unknown.isError, true, JSON.stringify(unknown));
  const frozen = await runCli(['freeze', 'on', '--reason', `token ${token}`, '--data-dir', server.dataDir]);
  assert.equal(frozen.code, 0, frozen.stderr);

  let shown;
  await waitUntil(async () => {
    shown = await snapshot();
    const vault = shown.json.upstreams.items.find((u) => u.name === 'vault');
    return vault?.last_error && shown.json.freeze.on && shown.json.calls.items.some((c) => c.outcome === 'unknown_tool');
  }, 10000, 'the upstream\'s error, the freeze and the unknown tool on /status.json');
  assertNoSecret(shown.text, '/status.json');
  const vault = shown.json.upstreams.items.find((u) => u.name === 'vault');
  assert.match(vault.last_error, /API key \[REDACTED\] was refused; token \[REDACTED:github_token\]; password=\[REDACTED:secret_value\]/);
  assert.equal(shown.json.freeze.reason, 'token [REDACTED:github_token]');
  assert.equal(shown.json.calls.items.find((c) => c.outcome === 'unknown_tool').tool, '[REDACTED:github_token]');

  const metrics = await request(`${server.origin}/metrics`);
  assert.equal(metrics.status, 200);
  assertNoSecret(metrics.body, '/metrics');
  assert.match(metrics.body, /toolmux_tool_calls_total\{tool="\(unknown tool\)",outcome="unknown_tool"\} 1/);

  const [status, audit, table] = await Promise.all([
    runCli(['freeze', 'status', '--data-dir', server.dataDir]),
    runCli(['audit', '--json', '--data-dir', server.dataDir]),
    runCli(['audit', '--data-dir', server.dataDir]),
  ]);
  assert.equal(status.stdout, `Write freeze on in ${server.dataDir}: token [REDACTED:github_token].\n`);
  assert.equal(audit.code, 0, audit.stderr);
  assertNoSecret(audit.stdout, 'toolmux audit --json');
  const records = audit.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.equal(records.find((r) => r.outcome === 'unknown_tool')?.tool, '[REDACTED:github_token]', audit.stdout);
  assert.equal(table.code, 0, table.stderr);
  assertNoSecret(table.stdout, 'toolmux audit');
  assertNoSecret(server.stderr, 'the log');
  await server.stopCleanly(assert);
});
