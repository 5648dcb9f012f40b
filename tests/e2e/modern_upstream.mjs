// A real 2026-07-28 upstream for tests/e2e/upstreams_modern.test.mjs: the
// TypeScript SDK v2 server (@modelcontextprotocol/server, pinned in
// package.json) over stdio, through serveStdio (dual-era: server/discover
// selects the 2026-07-28 protocol); with --http, over Streamable HTTP through
// createMcpHandler (modern only, one server instance per request), its port
// printed on stdout. Its questions go back in input_required results (MRTR);
// it never sends a request of its own.
//
// Tools:
//   confirm {what}  asks "Do <what>?" (elicitation "confirm"); with the
//                   answer, says what was answered and the requestState it got
//   add {a, b}      the sum, no question
//   slow {}         reports progress, then waits until cancelled
//   grow {}         registers the tool "grown" (a list change, told on the
//                   subscriptions/listen stream)

import http from 'node:http';
import { Readable } from 'node:stream';

import { acceptedContent, createMcpHandler, fromJsonSchema, inputRequired, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const object = (properties = {}, required = []) => fromJsonSchema({ type: 'object', properties, required });

function makeServer() {
  const server = new McpServer({ name: 'modern-fixture', version: '2.4.0' }, { capabilities: { tools: { listChanged: true } } });

  server.registerTool(
    'confirm',
    { description: 'Asks the user to confirm something, then says what they answered.', inputSchema: object({ what: { type: 'string' } }, ['what']) },
    async ({ what }, ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm');
      if (!answer) {
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: `Do ${what}?`,
              requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
            }),
          },
          requestState: `asked-about-${what}`,
        });
      }
      return { content: [{ type: 'text', text: `confirmed ${JSON.stringify(answer)} (state ${ctx.mcpReq.requestState?.() ?? 'none'})` }] };
    },
  );

  server.registerTool(
    'add',
    { description: 'Adds two numbers.', inputSchema: object({ a: { type: 'number' }, b: { type: 'number' } }, ['a', 'b']) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );

  server.registerTool('slow', { description: 'Reports progress, then runs until cancelled.', inputSchema: object() }, async (_args, ctx) => {
    await ctx.mcpReq.notify?.({ method: 'notifications/progress', params: { progressToken: ctx.mcpReq._meta?.progressToken, progress: 1, total: 2 } });
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 30000);
      ctx.mcpReq.signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        process.stderr.write('slow: cancelled\n');
        resolve();
      });
    });
    return { content: [{ type: 'text', text: 'slow ended' }] };
  });

  server.registerTool('grow', { description: 'Adds the tool "grown".', inputSchema: object() }, async () => {
    server.registerTool('grown', { description: 'Grown at run time.', inputSchema: object() }, async () => ({ content: [{ type: 'text', text: 'grown' }] }));
    return { content: [{ type: 'text', text: 'grew' }] };
  });

  return server;
}

if (process.argv[2] === '--http') {
  // Streamable HTTP on 127.0.0.1 and a free port (printed on stdout), through
  // the SDK's web-standard handler; closing a response stream aborts its request.
  const handler = createMcpHandler(makeServer, { legacy: 'reject', onerror: (e) => process.stderr.write(`${e}\n`) });
  const server = http.createServer(async (req, res) => {
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers: req.headers,
      body: req.method === 'POST' ? Readable.toWeb(req) : undefined,
      duplex: 'half',
      signal: abort.signal,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) return res.end();
    Readable.fromWeb(response.body).on('error', () => res.destroy()).pipe(res);
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
} else {
  serveStdio(makeServer);
}
