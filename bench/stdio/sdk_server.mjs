#!/usr/bin/env node
// The peer: an MCP server on @modelcontextprotocol/sdk (pinned in package.json)
// over stdio, serving the same `test_simple_text` tool as toolmux's conformance
// example, with the same text. The SDK's own McpServer and StdioServerTransport,
// as its examples use them.
//
// Usage: node sdk_server.mjs

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer({ name: 'sdk-peer', version: '1.0.0' });
server.registerTool('test_simple_text', { description: 'Returns a fixed text.' }, async () => ({
  content: [{ type: 'text', text: 'This is a simple text response for testing.' }],
}));
await server.connect(new StdioServerTransport());
