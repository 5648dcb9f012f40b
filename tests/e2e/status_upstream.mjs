// An upstream for status_page.test.mjs: the 1.x SDK's McpServer over stdio
// with two tools, which writes its process id to the file
// $STATUS_UPSTREAM_PID_FILE when it starts (written whole, then renamed into
// place), so that a test can kill this very process.
//   echo {text}  readOnlyHint: true; answers the text. Its description holds
//                markup, which the status page must show as text.
//   wipe {}      destructiveHint: true; answers "wiped" (never called)
// With $STATUS_UPSTREAM_REFUSE set it serves nothing: it answers every request
// with an error whose message quotes its $API_KEY, a GitHub token and a
// password, as a careless server's error would.

import fs from 'node:fs';
import readline from 'node:readline';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

if (process.env.STATUS_UPSTREAM_REFUSE) {
  const message = `cannot start: API key ${process.env.API_KEY} was refused; token ghp_${'aB3dE6gH9j'.repeat(3)}K2mN5p; password=hunter2-Xy9`;
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const request = JSON.parse(line);
    if (request.id !== undefined) {
      process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: -32603, message } })}\n`);
    }
  }
  process.exit(0);
}

const HOSTILE_DESCRIPTION = 'Echoes the text. <img src=x onerror="window.__pwned=1"><b>bold?</b>';

const server = new McpServer({ name: 'status-fixture', version: '1.0.0' });

server.registerTool(
  'echo',
  { description: HOSTILE_DESCRIPTION, inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
  async ({ text }) => ({ content: [{ type: 'text', text }] }),
);

server.registerTool(
  'wipe',
  { description: 'Wipes everything.', annotations: { readOnlyHint: false, destructiveHint: true } },
  async () => ({ content: [{ type: 'text', text: 'wiped' }] }),
);

await server.connect(new StdioServerTransport());
const pidFile = process.env.STATUS_UPSTREAM_PID_FILE;
if (pidFile) {
  fs.writeFileSync(`${pidFile}.tmp`, String(process.pid));
  fs.renameSync(`${pidFile}.tmp`, pidFile);
}
