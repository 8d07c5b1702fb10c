"""Context: what a running tool can ask of the request it serves (placeholder until the server lands)."""

from __future__ import annotations

__all__ = ["Context"]


class Context:
    """Injected into a tool parameter annotated `Context`; never part of the tool's schema."""
