"""Tasks (MCP's long-running calls): where a task's state is kept, in memory or in a shared store."""
