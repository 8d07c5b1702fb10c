"""Transports: the contract, and the built-in ones (in memory, stdio and streams, the HTTP client side)."""
