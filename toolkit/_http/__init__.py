"""Streamable HTTP, the server side: the ASGI app, its sessions, authentication, and serving it on uvicorn."""
