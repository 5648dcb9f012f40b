// An upstream for cluster.test.mjs whose tool list lives in a file that every
// copy of it shares ($SHARED_LIST_FILE, one tool name a line): the 1.x SDK's
// low-level Server over stdio, legacy era. Each toolmux instance runs its own
// copy; only the copy that changed the list says so
// (notifications/tools/list_changed), as an upstream with state in a shared
// file would. The others list the new tool only when asked to list again.
//   grow {name}  adds the tool `name` to the file, then tells its client that
//                the list changed; answers "grew <name>"
//   <name> {}    each tool of the file, readOnlyHint: true; answers "<name> here"

import fs from 'node:fs';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const file = process.env.SHARED_LIST_FILE;
if (!file) {
  process.stderr.write('shared_list_upstream: SHARED_LIST_FILE is not set\n');
  process.exit(2);
}

const NAME = /^[a-z][a-z0-9_]{0,40}$/;
const grown = () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((name) => NAME.test(name)) : []);
const text = (value, isError = false) => ({ content: [{ type: 'text', text: value }], ...(isError ? { isError } : {}) });

const server = new Server({ name: 'shared-list-fixture', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'grow',
      description: 'Adds a tool to the shared list.',
      inputSchema: { type: 'object', properties: { name: { type: 'string', pattern: NAME.source } }, required: ['name'] },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    ...grown().map((name) => ({ name, description: `A tool added to the shared list: ${name}.`, inputSchema: { type: 'object' }, annotations: { readOnlyHint: true, openWorldHint: false } })),
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
  if (params.name === 'grow') {
    const name = params.arguments?.name;
    if (typeof name !== 'string' || !NAME.test(name)) return text(`not a tool name: ${JSON.stringify(name)}`, true);
    fs.appendFileSync(file, `${name}\n`);
    await server.sendToolListChanged();
    return text(`grew ${name}`);
  }
  if (grown().includes(params.name)) return text(`${params.name} here`);
  return text(`no tool ${params.name}`, true);
});

await server.connect(new StdioServerTransport());
