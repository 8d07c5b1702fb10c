// The TypeScript SDK's side of `python -m benchmarks.http`: node ts_server.mjs FD
// Its McpServer with the same three tools as the Python sides (add, add_async, add_progress), over its Streamable
// HTTP server transport on its own express app (createMcpExpressApp), with stateful 2025-11-25 sessions as the
// SDK's README shows them: one transport and one McpServer per session, found by the Mcp-Session-Id header. It
// listens on the socket inherited as FD (bound by benchmarks.http, as the uvicorn workers are) and prints `ready`.
// The SDK (1.32) knows no revision after 2025-11-25, so this side has no 2026-07-28 rows.
// The packages are the ones tests/conformance pins (`npm ci --prefix tests/conformance`).
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../tests/conformance/package.json', import.meta.url));
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { createMcpExpressApp } = require('@modelcontextprotocol/sdk/server/express.js');
const { isInitializeRequest } = require('@modelcontextprotocol/sdk/types.js');
const { z } = require('zod');

const input = { a: z.number().int(), b: z.number().int() };
const output = { result: z.number().int() };
const answer = (value) => ({ content: [{ type: 'text', text: String(value) }], structuredContent: { result: value } });

function newServer() {
  const server = new McpServer({ name: 'bench', version: '1.0.0' });
  const spec = (description) => ({ description, inputSchema: input, outputSchema: output });
  // A sync handler: the SDK awaits whatever it returns, so this is the same path as the async one.
  server.registerTool('add', spec('Add two integers.'), ({ a, b }) => answer(a + b));
  server.registerTool('add_async', spec('Add two integers.'), async ({ a, b }) => answer(a + b));
  server.registerTool('add_progress', spec('Add two integers, reporting progress once.'), async ({ a, b }, extra) => {
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: 1, total: 1 } });
    }
    return answer(a + b);
  });
  return server;
}

const transports = new Map();
const app = createMcpExpressApp();

app.post('/mcp', async (req, res) => {
  const id = req.headers['mcp-session-id'];
  let transport = id === undefined ? undefined : transports.get(id);
  if (transport === undefined) {
    if (id !== undefined || !isInitializeRequest(req.body)) {
      res.status(id === undefined ? 400 : 404).json({
        jsonrpc: '2.0', error: { code: -32000, message: 'no valid session' }, id: null });
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => { transports.set(sessionId, transport); },
    });
    transport.onclose = () => { transports.delete(transport.sessionId); };
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, req.body);
});

app.delete('/mcp', async (req, res) => {
  const transport = transports.get(req.headers['mcp-session-id']);
  if (transport === undefined) {
    res.status(404).end();
    return;
  }
  await transport.handleRequest(req, res);
});

const fd = Number(process.argv[2]);
app.listen({ fd }, () => { console.log('ready'); });
