// An HTTP upstream that asks for authorization (MCP authorization), reached
// through the catalog's "oauth" section: toolmux finds the protected
// resource's metadata and its authorization server's, takes a token by the
// client_credentials grant with its client secret, and sends it on every
// request (docs/upstreams.md#authorization). The upstream and its
// authorization server are one small HTTP server in this process.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';

import { makeTempDir, startClient, textOf, waitUntil } from './helpers.mjs';

const CLIENT_ID = 'toolmux-e2e';
const SECRET = 'e2e-secret-never-logged';

/** The protected MCP server (legacy, JSON answers) and its authorization server, on one port. */
async function protectedServer(t) {
  const seen = { tokenRequests: [], mcpAuthorizations: [] };
  let base = '';
  let issued = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const json = (status, value, headers = {}) => {
        res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
        res.end(JSON.stringify(value));
      };
      if (req.method === 'GET' && req.url === '/.well-known/oauth-protected-resource/mcp') {
        return json(200, { resource: `${base}/mcp`, authorization_servers: [base], scopes_supported: ['tools'] });
      }
      if (req.method === 'GET' && req.url === '/.well-known/oauth-authorization-server') {
        return json(200, {
          issuer: base,
          token_endpoint: `${base}/token`,
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_basic'],
          response_types_supported: ['token'],
        });
      }
      if (req.method === 'POST' && req.url === '/token') {
        const form = Object.fromEntries(new URLSearchParams(body));
        const basic = (req.headers.authorization ?? '').replace(/^Basic /, '');
        const [id, secret] = Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent);
        seen.tokenRequests.push({ form, id });
        if (id !== CLIENT_ID || secret !== SECRET) {
          return json(401, { error: 'invalid_client', error_description: 'unknown client or wrong secret' });
        }
        issued += 1;
        return json(200, { access_token: `token-${issued}`, token_type: 'Bearer', expires_in: 3600 });
      }
      if (req.url === '/mcp') {
        if (req.method !== 'POST') {
          res.writeHead(405);
          return res.end();
        }
        seen.mcpAuthorizations.push(req.headers.authorization ?? '');
        if (!/^Bearer token-\d+$/.test(req.headers.authorization ?? '')) {
          return json(401, { error: 'invalid_token' }, {
            'WWW-Authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="tools"`,
          });
        }
        const message = JSON.parse(body);
        if (message.id === undefined) {
          res.writeHead(202);
          return res.end();
        }
        const reply = (result) => json(200, { jsonrpc: '2.0', id: message.id, result });
        switch (message.method) {
          case 'initialize':
            return reply({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'protected', version: '1.0.0' } });
          case 'tools/list':
            return reply({ tools: [{ name: 'whoami', description: 'Says who is calling.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true, openWorldHint: false } }] });
          case 'tools/call':
            return reply({ content: [{ type: 'text', text: `called with ${req.headers.authorization.replace('Bearer ', '')}` }] });
          default:
            return json(200, { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
        }
      }
      res.writeHead(404);
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `${base}/mcp`, seen };
}

function catalogFor(url) {
  const dir = makeTempDir('toolmux-oauth-');
  const catalog = path.join(dir, 'catalog.json');
  fs.writeFileSync(
    catalog,
    JSON.stringify({
      tools: [],
      upstreams: {
        secured: {
          url,
          oauth: { grant: 'client_credentials', clientId: CLIENT_ID, clientSecret: { fromEnv: 'SECURED_SECRET' } },
        },
      },
      discovery: { mode: 'off' },
    }),
  );
  return { dir, catalog };
}

test('an upstream behind OAuth is served with a token taken by the client_credentials grant', async (t) => {
  const upstream = await protectedServer(t);
  const { dir, catalog } = catalogFor(upstream.url);
  const { client, stderr } = await startClient(t, {
    args: ['serve', '--root', dir, '--catalog', catalog, '--data-dir', path.join(dir, 'data')],
    env: { SECURED_SECRET: SECRET },
  });
  const { tools } = await client.listTools();
  assert.ok(tools.some((tool) => tool.name === 'secured_whoami'), JSON.stringify(tools.map((tool) => tool.name)));
  const result = await client.callTool({ name: 'secured_whoami', arguments: {} });
  assert.equal(textOf(result), 'called with token-1');

  // One token, asked for with the resource it is for and the challenged scope.
  assert.equal(upstream.seen.tokenRequests.length, 1);
  assert.deepEqual(upstream.seen.tokenRequests[0].form, {
    grant_type: 'client_credentials',
    resource: upstream.url,
    scope: 'tools',
  });
  // Only the first request went without it.
  assert.equal(upstream.seen.mcpAuthorizations[0], '');
  assert.ok(upstream.seen.mcpAuthorizations.slice(1).every((value) => value === 'Bearer token-1'));
  assert.ok(!stderr().includes(SECRET), 'the secret is never logged');
  assert.ok(!stderr().includes('token-1'), 'the token is never logged');
});

test('a refused client secret leaves the upstream out, saying why, and serves the rest', async (t) => {
  const upstream = await protectedServer(t);
  const { dir, catalog } = catalogFor(upstream.url);
  const { client, stderr } = await startClient(t, {
    args: ['serve', '--root', dir, '--catalog', catalog, '--data-dir', path.join(dir, 'data')],
    env: { SECURED_SECRET: 'not-the-secret' },
  });
  await waitUntil(() => /"event":"upstream_failed"/.test(stderr()), 10000, 'the upstream fails');
  const failed = stderr().split('\n').find((line) => line.includes('"event":"upstream_failed"'));
  assert.match(failed, /refused the client_credentials grant: HTTP 401, invalid_client \(unknown client or wrong secret\)/);
  assert.ok(!stderr().includes('not-the-secret'), 'the secret is never logged');
  const { tools } = await client.listTools();
  assert.ok(!tools.some((tool) => tool.name.startsWith('secured_')));
  assert.ok(tools.some((tool) => tool.name === 'read_text_file'), 'the built-in tools are served');
});
