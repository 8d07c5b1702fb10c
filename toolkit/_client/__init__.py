"""The client: talk to any MCP server over any transport, in either era."""
