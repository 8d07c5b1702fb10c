"""Exceptions users raise or catch."""

from __future__ import annotations

__all__ = ["ToolDefinitionError", "ToolError"]


class ToolDefinitionError(TypeError):
    """A function cannot become a tool. Raised at decoration time, listing every problem at once.

    Attributes:
        qualname: The qualified name of the function.
        problems: One sentence per problem.
    """

    def __init__(self, qualname: str, problems: list[str]) -> None:
        self.qualname = qualname
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"cannot make a tool of {qualname}:\n{lines}")


class ToolError(Exception):
    """Raise inside a tool to fail the call with this message.

    The client receives a result with `isError: true` and the message as its text, so the model can read
    it and react. Any other exception is reported without details unless the tool or server opts in.
    """
