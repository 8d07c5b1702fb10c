"""Weather tools for MCP clients, built with toolkit."""
