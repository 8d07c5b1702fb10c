"""The gateway: other MCP servers mounted on a toolkit server, their tools served as its own (`Server.mount`)."""
