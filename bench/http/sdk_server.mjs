#!/usr/bin/env node
// The peer: a Streamable HTTP server on @modelcontextprotocol/sdk (pinned in
// package.json) serving the same `test_simple_text` tool as toolmux's
// conformance example. Stateful sessions (an McpServer and a transport per
// session, as in the SDK's own examples) and JSON responses
// (enableJsonResponse), so a tools/call is answered with one application/json
// body, like toolmux's. Served by node:http directly (no express), the
// lightest way the SDK's Node transport can be hosted.
//
// Usage: node sdk_server.mjs [--port N]   (127.0.0.1; 0 = any free port)
// Writes one JSON line {"event":"serving","url":...} to stderr when it listens.

import { randomUUID } from 'node:crypto';
import http from 'node:http';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

const portArg = process.argv.indexOf('--port');
const port = portArg > 0 ? Number.parseInt(process.argv[portArg + 1], 10) : 0;

function newServer() {
  const server = new McpServer({ name: 'sdk-peer', version: '1.0.0' });
  server.registerTool('test_simple_text', { description: 'Returns a fixed text.' }, async () => ({
    content: [{ type: 'text', text: 'This is a simple text response for testing.' }],
  }));
  return server;
}

const transports = new Map(); // Mcp-Session-Id -> transport

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function fail(res, status, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function handle(req, res) {
  if (new URL(req.url, 'http://x').pathname !== '/mcp') return fail(res, 404, 'Not Found');
  const sessionId = req.headers['mcp-session-id'];
  if (req.method !== 'POST') {
    const transport = sessionId && transports.get(sessionId);
    if (!transport) return fail(res, 400, 'Bad Request: no valid session');
    return transport.handleRequest(req, res);
  }
  let body;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    return fail(res, 400, 'Parse error');
  }
  let transport = sessionId && transports.get(sessionId);
  if (!transport) {
    if (sessionId || !isInitializeRequest(body)) return fail(res, 400, 'Bad Request: no valid session');
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
    };
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, body);
}

const httpServer = http.createServer((req, res) => {
  handle(req, res).catch((e) => {
    if (!res.headersSent) fail(res, 500, String(e?.message ?? e));
  });
});
// Like the C++ servers: no Nagle delay, keep-alive connections kept open.
httpServer.on('connection', (socket) => socket.setNoDelay(true));
httpServer.keepAliveTimeout = 30_000;
httpServer.listen(port, '127.0.0.1', 511, () => {
  const url = `http://127.0.0.1:${httpServer.address().port}/mcp`;
  process.stderr.write(`${JSON.stringify({ event: 'serving', url })}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
