// A server written with the TypeScript SDK 1.x (`@modelcontextprotocol/sdk`, pinned in package.json: 2025-11-25
// only), for tests/gateway/test_interop_sdks.py. `node ts_sdk1_server.mjs` serves stdio; `node ts_sdk1_server.mjs
// --http [PORT]` serves Streamable HTTP (sessions) on 127.0.0.1 and a port of the system's choosing (or PORT), and
// prints its URL.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

let cancelled = 0; // calls of `slow` the client cancelled, in this process
let waiting = []; // the calls of `cancelled` that wait for one

function oneCancelled() {
  cancelled += 1;
  for (const resolve of waiting) resolve();
  waiting = [];
}

// Once a call of `slow` was cancelled (waited for up to 10 s: a cancellation reaches the server after the client
// moved on), how many were.
async function howManyCancelled() {
  if (cancelled === 0) {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 10_000);
      waiting.push(() => { clearTimeout(timer); resolve(); });
    });
  }
  return { content: [{ type: 'text', text: String(cancelled) }] };
}

function build() {
  const server = new McpServer({ name: 'ts-sdk1', version: '1.0.0' });
  server.registerTool(
    'add',
    {
      description: 'Add two integers.',
      inputSchema: { a: z.number().int(), b: z.number().int() },
      outputSchema: { sum: z.number().int() },
    },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  server.registerTool(
    'count',
    { description: 'Report progress `steps` times, then finish.', inputSchema: { steps: z.number().int() } },
    async ({ steps }, extra) => {
      const progressToken = extra._meta?.progressToken;
      for (let step = 1; step <= steps; step++) {
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: step, total: steps, message: `step ${step}` },
          });
        }
      }
      return { content: [{ type: 'text', text: `counted ${steps}` }] };
    },
  );
  server.registerTool('greet', { description: "Ask the user's name, then greet them." }, async (extra) => {
    const answer = await server.server.elicitInput(
      {
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
      { relatedRequestId: extra.requestId },
    );
    const text = answer.action === 'accept' ? `hello ${answer.content.name}` : `no name (${answer.action})`;
    return { content: [{ type: 'text', text }] };
  });
  server.registerTool(
    'slow',
    { description: 'Report that it started, then wait until cancelled.' },
    async (extra) => {
      const progressToken = extra._meta?.progressToken;
      if (progressToken !== undefined) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: 1, message: 'started' },
        });
      }
      await new Promise((resolve) => extra.signal.addEventListener('abort', resolve, { once: true }));
      oneCancelled();
      return { content: [{ type: 'text', text: 'cancelled' }] };
    },
  );
  server.registerTool(
    'cancelled',
    { description: 'Once a call of `slow` was cancelled (up to 10 s), how many were.' },
    howManyCancelled,
  );
  server.registerTool('pid', { description: 'The id of the process that serves the call.' }, async () => ({
    content: [{ type: 'text', text: String(process.pid) }],
  }));
  return server;
}

async function serveHttp() {
  const transports = new Map(); // session id -> its transport (and its server)
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const session = req.headers['mcp-session-id'];
    let transport = session ? transports.get(session) : undefined;
    if (transport === undefined && req.method === 'POST' && isInitializeRequest(body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => transports.delete(transport.sessionId);
      await build().connect(transport);
    }
    if (transport === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
      return;
    }
    await transport.handleRequest(req, res, body);
  });
  const port = Number(process.argv[process.argv.indexOf('--http') + 1] ?? 0); // `--http PORT`: that port
  http.listen(port, '127.0.0.1', () => console.log(`http://127.0.0.1:${http.address().port}/mcp`));
}

if (process.argv.includes('--http')) {
  await serveHttp();
} else {
  await build().connect(new StdioServerTransport());
}
