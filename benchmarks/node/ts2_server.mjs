// The TypeScript SDK 2.4's side of `python -m benchmarks.http`: node ts2_server.mjs FD PACKAGES
// The same three tools as the other sides (add, add_async, add_progress) on its McpServer, served as the SDK's v2
// documentation shows for HTTP: createMcpHandler(factory), the 2026-07-28 stateless entry (a fresh McpServer from
// the factory for each request; responses JSON unless the tool notifies first, then SSE: its default `auto`),
// adapted to node:http with toNodeHandler from @modelcontextprotocol/node. It listens on the socket inherited as
// FD (bound by benchmarks.http) and prints `ready`. Measured in 2026-07-28 only: its 2025-11-25 serving is a
// stateless fallback with no sessions, not what the other sides' 2025-11-25 rows measure.
// PACKAGES is the folder where benchmarks/_node.py installed benchmarks/node/package.json (`npm ci`).
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { registerTools } from './tools.mjs';

const require = createRequire(join(process.argv[3], 'package.json'));
const { McpServer, createMcpHandler } = require('@modelcontextprotocol/server');
const { toNodeHandler } = require('@modelcontextprotocol/node');
const { z } = require('zod');

const schemas = {
  inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
  outputSchema: z.object({ result: z.number().int() }),
};
const progress = (ctx) => ({ token: ctx.mcpReq._meta?.progressToken, notify: (message) => ctx.mcpReq.notify(message) });
const newServer = () => registerTools(new McpServer({ name: 'bench', version: '1.0.0' }), schemas, progress);

const handler = toNodeHandler(createMcpHandler(newServer));
const fd = Number(process.argv[2]);
createServer(handler).listen({ fd }, () => { console.log('ready'); });
