"""What the `toolkit` command prints: aligned tables, tool results and a progress bar."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TextIO

from toolkit import CallToolResult, Problem

__all__ = ["ProgressBar", "format_problems", "print_result", "print_table", "problems_json"]


def print_table(rows: Sequence[Sequence[str]], columns: Sequence[int]) -> None:
    """Print the `columns` of `rows` aligned, two spaces apart; the last column is not padded."""
    *padded, last = columns
    widths = {i: max(len(row[i]) for row in rows) for i in padded}
    for row in rows:
        print("  ".join(row[i].ljust(widths[i]) for i in padded) + "  " + row[last])


def print_result(result: CallToolResult, *, raw: bool, out: TextIO) -> int:
    """Print a tool's result (its structured content as JSON, else its content as text) and return the exit status.

    An error result goes to standard error, with status 1. With `raw`, the whole result is printed as JSON.
    """
    if raw:
        wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        print(json.dumps(wire, indent=2, ensure_ascii=False), file=out)
        return 1 if result.is_error else 0
    if result.is_error:
        print(_content_text(result) or "the tool reported an error", file=sys.stderr)
        return 1
    if result.structured_content is not None:
        print(json.dumps(result.structured_content, indent=2, ensure_ascii=False), file=out)
    else:
        text = _content_text(result)
        if text:
            print(text, file=out)
    return 0


def _content_text(result: CallToolResult) -> str:
    lines = []
    for block in result.content:
        wire = block.model_dump(mode="json", by_alias=True, exclude_none=True)
        kind = wire.get("type")
        if kind == "text":
            lines.append(wire["text"])
        elif kind in ("image", "audio"):
            lines.append(f"[{kind}: {wire.get('mimeType')}, {len(wire.get('data', '')) * 3 // 4:,} bytes]")
        elif kind == "resource_link":
            lines.append(f"[resource link: {wire.get('uri')}]")
        else:
            resource = wire.get("resource") or {}
            lines.append(resource.get("text") or f"[resource: {resource.get('uri')}]")
    return "\n".join(lines)


class ProgressBar:
    """Progress notifications drawn on one line of a terminal, or one line each when stderr is a file.

    Other lines (log messages) are printed above the bar, which is drawn again below them.
    """

    width = 30

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.drawn = False
        self._last = ""

    def line(self, text: str) -> None:
        if self.drawn and self.tty:
            self.stream.write(f"\r\x1b[K{text}\n{self._last}")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def update(self, progress: float, total: float | None, message: str | None) -> None:
        if total:
            done = max(0, min(self.width, round(self.width * progress / total)))
            line = f"[{'#' * done}{'-' * (self.width - done)}] {progress:g}/{total:g}"
        else:
            line = f"[{progress:g}]"
        if message:
            line += f" {message}"
        self._last = line
        if self.tty:
            self.stream.write(f"\r\x1b[K{line}")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def format_problems(problems: Sequence[Problem], tools: int, profiles: Sequence[str]) -> str:
    """The `toolkit check --profile` report: one line a problem, then a summary line."""
    lines = [str(p) for p in problems]
    rejecting = {(p.profile, p.tool) for p in problems if p.rejects}
    fixable = sum(p.fixable for p in problems)
    plural = "" if len(problems) == 1 else "s"
    summary = f"{len(problems)} problem{plural} in {tools} tool{'' if tools == 1 else 's'} for {', '.join(profiles)}"
    if problems:
        summary += f"; {fixable} auto-fixable (Server(schema_profile=...), tool.definition_for(...))"
    if rejecting:
        pairs = ", ".join(f"{tool} ({profile})" for profile, tool in sorted(rejecting))
        summary += f"; rejected as served: {pairs}"
    return "\n".join([*lines, summary]) + "\n"


def problems_json(problems: Sequence[Problem]) -> str:
    """The `--format json` report."""
    report = {"rejected": sum(p.rejects for p in problems), "problems": [p.to_json() for p in problems]}
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
