// The Node floor of `python -m benchmarks.http`: node floor.mjs FD
// Bare node:http, no MCP: read the POST, JSON.parse it, answer the JSON-RPC result a tools/call of `add` returns
// (the same text and structured result as every side's), `{}` to any other request, 202 to a notification. What
// any MCP server on Node pays at least for one call. It listens on the socket inherited as FD and prints `ready`.
import { createServer } from 'node:http';

function reply(message) {
  if (message.id === undefined) return undefined;
  if (message.method !== 'tools/call') return { jsonrpc: '2.0', id: message.id, result: {} };
  const { a, b } = message.params.arguments;
  const value = a + b;
  const result = { content: [{ type: 'text', text: String(value) }], structuredContent: { result: value }, isError: false };
  return { jsonrpc: '2.0', id: message.id, result };
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const answer = reply(JSON.parse(Buffer.concat(chunks)));
    if (answer === undefined) {
      res.writeHead(202).end();
      return;
    }
    const body = JSON.stringify(answer);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen({ fd: Number(process.argv[2]) }, () => { console.log('ready'); });
