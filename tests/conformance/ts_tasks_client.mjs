// The TypeScript SDK's experimental tasks client (2025-11-25) against a toolkit server of task tools:
// node ts_tasks_client.mjs URL. Prints one JSON line with what it saw.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const [url] = process.argv.slice(2);
const client = new Client({ name: 'ts-tasks', version: '1.0.0' }, { capabilities: { tasks: {} } });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => [t.name, t.execution?.taskSupport ?? null]);
const seen = [];
let result = null;
let taskId = null;
for await (const message of client.experimental.tasks.callToolStream(
  { name: 'slow', arguments: { seconds: 0.2 } }, CallToolResultSchema, { task: { ttl: 60000 } })) {
  seen.push(message.type);
  if (message.type === 'taskCreated') taskId = message.task.taskId;
  if (message.type === 'result') result = message.result.content;
  if (message.type === 'error') result = String(message.error);
}
const task = await client.experimental.tasks.getTask(taskId);
const listed = (await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId === taskId);
const again = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
let longId = null;
for await (const message of client.experimental.tasks.callToolStream(
  { name: 'slow', arguments: { seconds: 60 } }, CallToolResultSchema, { task: { ttl: 60000 } })) {
  if (message.type === 'taskCreated') { longId = message.task.taskId; break; }
}
const cancelled = await client.experimental.tasks.cancelTask(longId);
await transport.terminateSession();
await client.close();
console.log(JSON.stringify({
  tools, first: seen[0], last: seen[seen.length - 1], result, status: task.status, listed,
  again: again.content, cancelled: cancelled.status,
}));
