// The TypeScript SDK 1.32's side of `python -m benchmarks.http`: node ts_server.mjs FD PACKAGES
// Its McpServer with the same three tools as the Python sides (add, add_async, add_progress), over its Streamable
// HTTP server transport on its own express app (createMcpExpressApp), with stateful 2025-11-25 sessions as the
// SDK's README shows them: one transport and one McpServer per session, found by the Mcp-Session-Id header. It
// listens on the socket inherited as FD (bound by benchmarks.http, as the uvicorn workers are) and prints `ready`.
// The SDK (1.32) knows no revision after 2025-11-25, so this side has no 2026-07-28 rows.
// PACKAGES is the folder where benchmarks/_node.py installed benchmarks/node/package.json (`npm ci`).
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { registerTools } from './tools.mjs';

const require = createRequire(join(process.argv[3], 'package.json'));
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { createMcpExpressApp } = require('@modelcontextprotocol/sdk/server/express.js');
const { isInitializeRequest } = require('@modelcontextprotocol/sdk/types.js');
const { z } = require('zod');

const schemas = { inputSchema: { a: z.number().int(), b: z.number().int() }, outputSchema: { result: z.number().int() } };
const progress = (extra) => ({ token: extra._meta?.progressToken, notify: (message) => extra.sendNotification(message) });
const newServer = () => registerTools(new McpServer({ name: 'bench', version: '1.0.0' }), schemas, progress);

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
