// The three tools every side of `python -m benchmarks.http` serves, on either TypeScript SDK's McpServer:
// add (a sync handler: the SDK awaits whatever it returns, so this is the same path as the async one), add_async,
// and add_progress, which sends one progress notification when the call carries a progress token. `schemas` holds
// the SDK's inputSchema and outputSchema; `progress(extra)` gives the call's token and the SDK's way to notify.
const answer = (value) => ({ content: [{ type: 'text', text: String(value) }], structuredContent: { result: value } });

export function registerTools(server, schemas, progress) {
  const spec = (description) => ({ description, ...schemas });
  server.registerTool('add', spec('Add two integers.'), ({ a, b }) => answer(a + b));
  server.registerTool('add_async', spec('Add two integers.'), async ({ a, b }) => answer(a + b));
  server.registerTool('add_progress', spec('Add two integers, reporting progress once.'), async ({ a, b }, extra) => {
    const { token, notify } = progress(extra);
    if (token !== undefined) {
      await notify({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 1 } });
    }
    return answer(a + b);
  });
  return server;
}
