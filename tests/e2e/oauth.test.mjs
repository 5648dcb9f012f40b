// toolmux over HTTP as an OAuth 2.1 resource server (docs/authorization.md),
// with a real authorization server: npm `oidc-provider` (oidc_issuer.mjs),
// issuing JWT access tokens for toolmux's resource URL. Through it, the 1.x
// SDK client's own OAuth support (client credentials, and authorization code
// with PKCE, a test playing the browser) and the v2 client pinned to
// 2026-07-28 connect, list and call; hostile tokens get 401 and toolmux goes
// on serving; too little scope gets 403 insufficient_scope naming the scope
// to ask for; /metrics and the status page take the same tokens; a guarded call is
// approved by the signed-in principal, whatever name is typed, and over HTTP
// without authentication it does not run at all.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { test } from 'node:test';

import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { ClientCredentialsProvider as ModernClientCredentials } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { DATA_DIR, HttpServer, makeTempDir, rawPost, runCli, short, textOf, writeTree } from './helpers.mjs';
import { followAuthorization, freePort, startIssuer } from './oidc_issuer.mjs';

const MODERN = '2026-07-28';
const SCOPES = ['tools:read', 'tools:admin'];
const GUARDED_CATALOG = path.join(DATA_DIR, 'guarded', 'catalog.json');

/**
 * An issuer and a toolmux that trusts it, serving the guarded catalog
 * (read_text_file, read_only; delete_file, destructive, confirmed by a human)
 * from a fresh folder holding notes.txt. Scopes: tools:read for reads,
 * tools:admin for destructive tools.
 */
async function setup(t, { args = [], scopes = true, upstreams } = {}) {
  const port = await freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const issuer = await startIssuer(t, { resource, scopes: SCOPES });
  const dir = makeTempDir('toolmux-oauth-');
  const catalog = JSON.parse(fs.readFileSync(GUARDED_CATALOG, 'utf8'));
  if (upstreams) catalog.upstreams = upstreams;
  fs.writeFileSync(path.join(dir, 'catalog.json'), JSON.stringify(catalog));
  writeTree(dir, { 'notes.txt': 'old notes\n' });
  const scopeArgs = scopes ? ['--auth-scope', 'tools:read=read_only', '--auth-scope', 'tools:admin=destructive'] : [];
  const server = await HttpServer.start(t, {
    listen: `127.0.0.1:${port}`,
    root: dir,
    catalog: path.join(dir, 'catalog.json'),
    args: ['--auth-issuer', issuer.issuer, '--resource-url', resource, ...scopeArgs, ...args],
  });
  assert.equal(server.url, resource);
  return { issuer, server, resource, dir };
}

const bearer = (token) => ({ authorization: `Bearer ${token}` });

async function connectWith(t, url, options) {
  const transport = new StreamableHTTPClientTransport(new URL(url), options);
  const client = new Client({ name: 'toolmux-e2e-oauth', version: '0.0.0' }, { capabilities: options.capabilities ?? {} });
  t.after(() => client.close().catch(() => {}));
  return { client, transport };
}

test('the 1.x SDK client finds the authorization server from the 401 and connects by client credentials', async (t) => {
  const { issuer, server } = await setup(t);
  assert.ok(server.logs.some((l) => l.event === 'serving' && l.auth === 'oauth'), server.stderr);

  const unauthenticated = await rawPost(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' });
  assert.equal(unauthenticated.status, 401);
  assert.equal(
    unauthenticated.headers.get('www-authenticate'),
    `Bearer resource_metadata="${server.origin}/.well-known/oauth-protected-resource/mcp", scope="tools:read"`,
  );
  await unauthenticated.text();
  const metadata = await (await fetch(`${server.origin}/.well-known/oauth-protected-resource/mcp`)).json();
  assert.deepEqual(metadata.authorization_servers, [issuer.issuer]);
  assert.equal(metadata.resource, server.url);
  assert.deepEqual(metadata.scopes_supported, SCOPES);

  const authProvider = new ClientCredentialsProvider({ clientId: 'machine', clientSecret: 'machine-secret', scope: 'tools:read', expectedIssuer: issuer.issuer });
  const { client, transport } = await connectWith(t, server.url, { authProvider });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  assert.ok(tools.includes('read_text_file'), tools.join(', '));
  const read = await client.callTool({ name: 'read_text_file', arguments: { path: 'notes.txt' } });
  assert.notEqual(read.isError, true, short(read));
  assert.match(textOf(read), /old notes/);
  // The token's subject (the client, by client credentials) is the principal in the audit.
  await client.close();
  await server.stopCleanly(assert);
  const audit = await runCli(['audit', '--json', '--data-dir', server.dataDir]);
  const records = audit.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.ok(records.some((r) => r.tool === 'read_text_file' && r.principal === 'machine'), audit.stdout);
  const used = (await authProvider.tokens()).access_token;
  assert.ok(used && !server.stderr.includes(used.split('.')[2]), 'no token in the log');
});

test('the v2 client pinned to 2026-07-28 connects through the provider, lists and calls', async (t) => {
  const { issuer, server } = await setup(t);
  const authProvider = new ModernClientCredentials({ clientId: 'machine', clientSecret: 'machine-secret', scope: 'tools:read', expectedIssuer: issuer.issuer });
  const client = new ModernClient({ name: 'toolmux-e2e-oauth', version: '0.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  t.after(() => client.close().catch(() => {}));
  await client.connect(new ModernHttpTransport(new URL(server.url), { authProvider }));
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  assert.ok(tools.includes('read_text_file'), tools.join(', '));
  const read = await client.callTool({ name: 'read_text_file', arguments: { path: 'notes.txt' } });
  assert.match(textOf(read), /old notes/);
});

test('authorization code with PKCE: the person who logs in is the principal', async (t) => {
  const { issuer, server } = await setup(t, { args: ['--status-principal', 'alice'] });
  const redirectUri = 'http://127.0.0.1/callback';
  let authorizationUrl;
  const store = {};
  // The SDK's OAuthClientProvider, kept in memory: it registers dynamically (RFC 7591).
  const authProvider = {
    redirectUrl: redirectUri,
    clientMetadata: { client_name: 'toolmux e2e', redirect_uris: [redirectUri], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', scope: 'tools:read' },
    clientInformation: () => store.client,
    saveClientInformation: (info) => { store.client = info; },
    tokens: () => store.tokens,
    saveTokens: (tokens) => { store.tokens = tokens; },
    redirectToAuthorization: (url) => { authorizationUrl = url; },
    saveCodeVerifier: (verifier) => { store.verifier = verifier; },
    codeVerifier: () => store.verifier,
  };
  issuer.login.as = 'alice';
  const first = await connectWith(t, server.url, { authProvider });
  await assert.rejects(first.client.connect(first.transport), UnauthorizedError);
  assert.ok(authorizationUrl, 'the SDK asked for a browser');
  assert.equal(authorizationUrl.searchParams.get('resource'), server.url);
  assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
  const answer = await followAuthorization(authorizationUrl, redirectUri);
  assert.equal(answer.get('iss'), issuer.issuer);
  await first.transport.finishAuth(answer.get('code'));

  const { client, transport } = await connectWith(t, server.url, { authProvider });
  await client.connect(transport);
  const read = await client.callTool({ name: 'read_text_file', arguments: { path: 'notes.txt' } });
  assert.match(textOf(read), /old notes/);
  // The status page is alice's (--status-principal), with her token.
  const status = await fetch(`${server.origin}/status.json`, { headers: bearer(store.tokens.access_token) });
  assert.equal(status.status, 200);
  await status.json();
  // Another subject's token is refused there: 403.
  const machine = await fetch(`${server.origin}/status.json`, { headers: bearer(await issuer.token('machine', 'tools:read')) });
  assert.equal(machine.status, 403);
  await machine.text();
  // /metrics takes any good token, and names the metadata when there is none.
  const metrics = await fetch(`${server.origin}/metrics`, { headers: bearer(store.tokens.access_token) });
  assert.equal(metrics.status, 200);
  await metrics.text();
  const noToken = await fetch(`${server.origin}/metrics`);
  assert.equal(noToken.status, 401);
  assert.match(noToken.headers.get('www-authenticate'), /resource_metadata=/);
  await noToken.text();
});

test('too little scope: 403 insufficient_scope naming the scope; a token with it calls', async (t) => {
  const { issuer, server } = await setup(t);
  const readOnly = await issuer.token('machine', 'tools:read');
  const call = {
    jsonrpc: '2.0', id: 7, method: 'tools/call',
    params: { name: 'delete_file', arguments: { path: 'notes.txt' } },
  };
  const init = await rawPost(server.url, {
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '0' } },
  }, bearer(readOnly));
  assert.equal(init.status, 200);
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id'), 'mcp-protocol-version': '2025-11-25' };
  await init.text();
  const refused = await rawPost(server.url, call, { ...bearer(readOnly), ...session });
  assert.equal(refused.status, 403);
  assert.equal(
    refused.headers.get('www-authenticate'),
    `Bearer resource_metadata="${server.origin}/.well-known/oauth-protected-resource/mcp", scope="tools:admin", error="insufficient_scope", error_description="Forbidden: this request needs the scope \\"tools:admin\\", which the bearer token does not have"`,
  );
  await refused.text();
  // Through call_tool too: the tool it names counts.
  const wrapped = await rawPost(server.url, { ...call, params: { name: 'call_tool', arguments: { name: 'delete_file', arguments: { path: 'notes.txt' } } } }, { ...bearer(readOnly), ...session });
  assert.equal(wrapped.status, 403);
  await wrapped.text();
  assert.ok(fs.existsSync(path.join(server.root, 'notes.txt')));

  // With the scope the 403 named, the call runs once the human confirms, as
  // the signed-in principal, whatever name they type. (The 1.x SDK's
  // ClientCredentialsProvider does not step up by itself: on a 403 it asks
  // for its own configured scope again, not the one the 403 names.)
  const authProvider = new ClientCredentialsProvider({ clientId: 'machine', clientSecret: 'machine-secret', scope: 'tools:read tools:admin', expectedIssuer: issuer.issuer });
  const { client, transport } = await connectWith(t, server.url, { authProvider, capabilities: { elicitation: {} } });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { approve: true, approver: 'Somebody Else', rationale: 'clean up' } };
  });
  await client.connect(transport);
  const deleted = await client.callTool({ name: 'delete_file', arguments: { path: 'notes.txt' } });
  assert.notEqual(deleted.isError, true, short(deleted));
  assert.ok(!fs.existsSync(path.join(server.root, 'notes.txt')));
  assert.equal(asked.length, 1);
  assert.match(asked[0].message, /You approve as machine, the signed-in caller/);
  assert.deepEqual(Object.keys(asked[0].requestedSchema.properties).sort(), ['approve', 'rationale']);
  await client.close();
  await server.stopCleanly(assert);
  const audit = await runCli(['audit', '--json', '--data-dir', server.dataDir]);
  const record = audit.stdout.trim().split('\n').map((line) => JSON.parse(line)).find((r) => r.tool === 'delete_file' && r.outcome === 'ok');
  assert.ok(record, audit.stdout);
  assert.equal(record.approver, 'machine');
  assert.equal(record.principal, 'machine');
});

test('hostile tokens get 401 with a reason that leaks nothing, and toolmux goes on serving', async (t) => {
  const { issuer, server } = await setup(t);
  const good = await issuer.token('machine', 'tools:read');
  const [header, payload, signature] = good.split('.');
  const decode = (part) => JSON.parse(Buffer.from(part, 'base64url').toString());
  const encode = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = decode(payload);
  const jwks = await (await fetch(`${issuer.issuer}/jwks`)).json();
  const hs256 = (() => {
    const input = `${encode({ alg: 'HS256', kid: decode(header).kid })}.${payload}`;
    const mac = crypto.createHmac('sha256', JSON.stringify(jwks.keys[0])).update(input).digest('base64url');
    return `${input}.${mac}`;
  })();
  const own = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signOwn = (head, body) => {
    const input = `${encode(head)}.${encode(body)}`;
    return `${input}.${crypto.sign('sha256', Buffer.from(input), own.privateKey).toString('base64url')}`;
  };
  const hostile = {
    'a wrong signature': `${header}.${payload}.${signature.slice(0, -4)}AAAA`,
    'alg none': `${encode({ alg: 'none' })}.${payload}.`,
    'HS256 keyed with the public key': hs256,
    'a wrong audience': signOwn({ alg: 'RS256', kid: decode(header).kid }, { ...claims, aud: 'https://other.example/mcp' }),
    'a wrong issuer': signOwn({ alg: 'RS256', kid: 'x' }, { ...claims, iss: 'https://evil.example' }),
    'expired': signOwn({ alg: 'RS256', kid: decode(header).kid }, { ...claims, exp: 1000 }),
    'a malformed header': `!!!.${payload}.${signature}`,
  };
  const expected = {
    'a wrong signature': "the bearer token's signature does not verify",
    'alg none': 'the bearer token is signed with an algorithm this server does not take',
    'HS256 keyed with the public key': 'the bearer token is signed with an algorithm this server does not take',
    'a wrong audience': 'the bearer token is not for this server (its audience does not name it)',
    'a wrong issuer': 'the bearer token was not issued by an authorization server this server trusts',
    'expired': 'the bearer token has expired',
    'a malformed header': 'the bearer token is malformed: its header is not base64url JSON',
  };
  for (const [what, token] of Object.entries(hostile)) {
    const response = await rawPost(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, bearer(token));
    assert.equal(response.status, 401, what);
    const challenge = response.headers.get('www-authenticate');
    assert.match(challenge, /error="invalid_token"/, what);
    assert.ok(challenge.includes(`error_description="${expected[what]}"`), `${what}: ${challenge}`);
    const body = await response.text();
    assert.ok(!body.includes(token.slice(-20)), `${what}: the token is not echoed`);
  }
  // A flood of unknown kids: refused, and the keys are fetched at most once meanwhile.
  const fetchesBefore = issuer.keyFetches();
  const flood = await Promise.all(Array.from({ length: 100 }, (_, i) =>
    rawPost(server.url, { jsonrpc: '2.0', id: i, method: 'ping' }, bearer(signOwn({ alg: 'RS256', kid: `unknown-${i}` }, claims)))
      .then(async (response) => { await response.text(); return response.status; })));
  assert.deepEqual([...new Set(flood)], [401]);
  assert.ok(issuer.keyFetches() - fetchesBefore <= 1, `${issuer.keyFetches() - fetchesBefore} key fetches`);
  // A 100 KB token: refused before it is read whole (the head limit), or 401.
  const huge = await rawPost(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, bearer('a'.repeat(100 * 1024))).catch((error) => error);
  if (!(huge instanceof Error)) {
    assert.ok([401, 431].includes(huge.status), `${huge.status}`);
    await huge.text();
  }
  // Still serving.
  const ok = await rawPost(server.url, { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }, bearer(good));
  assert.equal(ok.status, 200);
  await ok.text();
  assert.ok(!server.stderr.includes(signature), 'no token in the log');
});

test('over HTTP without authentication a guarded call does not run, and says how to make it run', async (t) => {
  const dir = makeTempDir('toolmux-oauth-');
  fs.copyFileSync(GUARDED_CATALOG, path.join(dir, 'catalog.json'));
  writeTree(dir, { 'notes.txt': 'old notes\n' });
  const server = await HttpServer.start(t, { root: dir, catalog: path.join(dir, 'catalog.json') });
  const { client, transport } = await connectWith(t, server.url, { capabilities: { elicitation: {} } });
  let asked = 0;
  client.setRequestHandler(ElicitRequestSchema, async () => {
    asked += 1;
    return { action: 'accept', content: { approve: true, approver: 'Anyone', rationale: 'why not' } };
  });
  await client.connect(transport);
  const result = await client.callTool({ name: 'delete_file', arguments: { path: 'notes.txt' } });
  assert.equal(result.isError, true);
  assert.match(textOf(result), /cannot tell who would approve it: it takes no bearer tokens.*--tokens-file or --auth-issuer/);
  assert.equal(asked, 0);
  assert.ok(fs.existsSync(path.join(dir, 'notes.txt')));
});

test("the client's token never travels to an upstream: the upstream sees only what its own entry sends", async (t) => {
  // An HTTP upstream (the 1.x SDK's server, stateless) that says which
  // Authorization header each request brought.
  const seen = [];
  const upstream = http.createServer(async (req, res) => {
    seen.push(req.headers.authorization ?? null);
    const server = new McpServer({ name: 'recorder', version: '0.0.0' });
    server.registerTool('whoami', { description: 'Says which Authorization header this request brought.', annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: 'text', text: `authorization: ${req.headers.authorization ?? 'none'}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    let body = '';
    for await (const chunk of req) body += chunk;
    await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
  });
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => { upstream.closeAllConnections(); upstream.close(resolve); }));
  const { issuer, server } = await setup(t, {
    upstreams: { recorder: { url: `http://127.0.0.1:${upstream.address().port}/mcp`, prefix: '' } },
  });
  const token = await issuer.token('machine', 'tools:read');
  const { client, transport } = await connectWith(t, server.url, { requestInit: { headers: bearer(token) } });
  await client.connect(transport);
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  assert.match(textOf(result), /authorization: none/);
  assert.ok(seen.length > 0);
  assert.ok(seen.every((header) => header === null), JSON.stringify(seen));
});
