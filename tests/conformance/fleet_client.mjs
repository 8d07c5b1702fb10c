// The TypeScript SDK's Streamable HTTP client against a fleet behind a round-robin proxy: node fleet_client.mjs URL N
// Runs N rounds of tools that confirm, fill a form, sample and report progress; prints one JSON line of what it saw.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, count] = process.argv.slice(2);
const client = new Client({ name: 'ts-fleet', version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {} } });
client.setRequestHandler(ElicitRequestSchema, (request) => ({
  action: 'accept', content: request.params.message.includes('name') ? { name: 'Ada' } : {},
}));
client.setRequestHandler(CreateMessageRequestSchema, () => ({
  role: 'assistant', content: { type: 'text', text: 'short' }, model: 'm', stopReason: 'endTurn',
}));
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
const text = (result) => result.content.map((block) => block.text).join('\n');
const rounds = [];
for (let i = 0; i < Number(count); i++) {
  const progress = [];
  const round = {
    purge: text(await client.callTool({ name: 'purge', arguments: {} })),
    greet: text(await client.callTool({ name: 'greet', arguments: {} })),
    summarize: text(await client.callTool({ name: 'summarize', arguments: { text: 'x' } })),
    ticks: text(await client.callTool(
      { name: 'ticks', arguments: { count: 2 } }, undefined, { onprogress: (p) => progress.push(p.progress) })),
  };
  rounds.push({ ...round, progress });
}
await transport.terminateSession();
await client.close();
console.log(JSON.stringify({ protocolVersion: transport.protocolVersion, rounds }));
