// An upstream for guarded_mutations.test.mjs: the 1.x SDK's McpServer over
// stdio with two tools.
//   remove_thing {name}  no annotations at all, so MCP's defaults hold for it
//                        (it may be destructive); appends "removed <name>" to
//                        the file $GUARDED_MARKER, so a test sees whether it ran
//   peek {}              readOnlyHint: true; answers "nothing changed"

import fs from 'node:fs';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'unannotated-fixture', version: '1.0.0' });

server.registerTool(
  'remove_thing',
  { description: 'Removes the thing with the given name.', inputSchema: { name: z.string() } },
  async ({ name }) => {
    fs.appendFileSync(process.env.GUARDED_MARKER, `removed ${name}\n`);
    return { content: [{ type: 'text', text: `removed ${name}` }] };
  },
);

server.registerTool(
  'peek',
  { description: 'Looks without changing anything.', annotations: { readOnlyHint: true } },
  async () => ({ content: [{ type: 'text', text: 'nothing changed' }] }),
);

await server.connect(new StdioServerTransport());
