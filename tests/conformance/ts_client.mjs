// The TypeScript SDK's Streamable HTTP client against a toolkit server: node ts_client.mjs URL [TOKEN]
// Prints one JSON line with what it saw. 2025-11-25 only: the TypeScript SDK knows no later revision.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, token] = process.argv.slice(2);
const client = new Client({ name: 'ts-check', version: '1.0.0' }, { capabilities: {} });
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => { logs.push(note.params.data); });
const headers = token ? { Authorization: `Bearer ${token}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
await client.connect(transport);
const sessionId = transport.sessionId;
await client.setLoggingLevel('info');
const tools = (await client.listTools()).tools.map((t) => t.name);
const progress = [];
const add = await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
const steps = await client.callTool(
  { name: 'steps', arguments: { count: 2 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
await transport.terminateSession();
await client.close();
console.log(JSON.stringify({
  protocolVersion: transport.protocolVersion, session: typeof sessionId === 'string', tools,
  add: add.content, steps: steps.content, progress, logs,
}));
