// A server written with the TypeScript SDK 2.x (`@modelcontextprotocol/server`, pinned in package.json: 2026-07-28,
// and 2025-11-25 for clients that open with the handshake), for tests/gateway/test_interop_sdks.py. One factory serves
// both eras. `node ts_sdk2_server.mjs` serves stdio (`serveStdio`); `node ts_sdk2_server.mjs --http` serves
// Streamable HTTP (`createMcpHandler`: stateless) on 127.0.0.1 and a port of the system's choosing, and prints its URL.
import { createServer } from 'node:http';

import { localhostHostValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { acceptedContent, createMcpHandler, inputRequired, inputResponse, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
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

const NAME = z.object({ name: z.string() });

async function progress(ctx, done, total, message) {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  if (progressToken !== undefined) {
    await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: done, total, message } });
  }
}

function build() {
  const server = new McpServer({ name: 'ts-sdk2', version: '1.0.0' });
  server.registerTool(
    'add',
    {
      description: 'Add two integers.',
      inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
      outputSchema: z.object({ sum: z.number().int() }),
    },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  server.registerTool(
    'count',
    { description: 'Report progress `steps` times, then finish.', inputSchema: z.object({ steps: z.number().int() }) },
    async ({ steps }, ctx) => {
      for (let step = 1; step <= steps; step++) await progress(ctx, step, steps, `step ${step}`);
      return { content: [{ type: 'text', text: `counted ${steps}` }] };
    },
  );
  server.registerTool('greet', { description: "Ask the user's name, then greet them." }, async (ctx) => {
    const responses = ctx.mcpReq.inputResponses;
    const answer = inputResponse(responses, 'name');
    if (answer.kind === 'missing') {
      return inputRequired({
        inputRequests: { name: inputRequired.elicit({ message: 'Your name?', requestedSchema: NAME }) },
      });
    }
    const given = acceptedContent(responses, 'name', NAME);
    const text = given === undefined ? `no name (${answer.action})` : `hello ${given.name}`;
    return { content: [{ type: 'text', text }] };
  });
  server.registerTool('slow', { description: 'Report that it started, then wait until cancelled.' }, async (ctx) => {
    await progress(ctx, 1, undefined, 'started');
    await new Promise((resolve) => ctx.mcpReq.signal.addEventListener('abort', resolve, { once: true }));
    oneCancelled();
    return { content: [{ type: 'text', text: 'cancelled' }] };
  });
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

if (process.argv.includes('--http')) {
  const handle = toNodeHandler(createMcpHandler(build));
  const validHost = localhostHostValidation();
  const http = createServer((req, res) => {
    if (validHost(req, res)) handle(req, res);
  });
  http.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${http.address().port}/mcp`));
} else {
  serveStdio(build);
}
