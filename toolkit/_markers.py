"""Markers: what a lower floor recognises a higher one's types by, without importing them.

Reading a tool's signature must spot the parameter that receives the call's `Context`, but `Context` lives in the
engine, which loads the asking code. `Context` derives from `ContextMarker`, so `issubclass(annotation,
ContextMarker)` is the whole test and reading a signature loads nothing above the definition wing.
"""

from __future__ import annotations

__all__ = ["ContextMarker"]


class ContextMarker:
    """The base of [`Context`][toolkit.Context]: a parameter annotated with a subclass receives the call's context
    and is left out of the tool's input schema."""

    __slots__ = ()
