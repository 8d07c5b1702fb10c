"""The wire: JSON-RPC envelopes and error codes, MCP's wire models, `_meta` keys, what each revision allows."""
