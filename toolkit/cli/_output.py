"""What the `toolkit` command prints: aligned tables, tool results and a progress bar."""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from toolkit import CallToolResult, Problem
from toolkit._lint import Finding

__all__ = [
    "ProgressBar",
    "findings_json",
    "format_findings",
    "format_problems",
    "print_result",
    "print_table",
    "problems_json",
]


def print_table(rows: Sequence[Sequence[str]], columns: Sequence[int], *, out: TextIO) -> None:
    """Print the `columns` of `rows` aligned, two spaces apart; the last column is not padded."""
    *padded, last = columns
    widths = {i: max(len(row[i]) for row in rows) for i in padded}
    for row in rows:
        print("  ".join(row[i].ljust(widths[i]) for i in padded) + "  " + row[last], file=out)


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
    """Progress notifications drawn on one line of a terminal, or as lines when stderr is a file or a pipe.

    Other lines (log messages) are printed above the bar, which is drawn again below them. Lines are throttled
    to one each `interval` seconds (a tool reporting a million steps would otherwise write a million lines);
    the last update is always written, when the next log line comes or when the bar is closed.
    """

    width = 30
    interval = 0.25

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.drawn = False
        self._last = ""
        self._pending = False  # an update not written yet (throttled)
        self._written_at = -math.inf

    def line(self, text: str) -> None:
        self._flush_pending()
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
        self.drawn = True
        if self.tty:
            self.stream.write(f"\r\x1b[K{line}")
            self.stream.flush()
            return
        now = time.monotonic()
        if now - self._written_at < self.interval:
            self._pending = True
            return
        self._written_at = now
        self._pending = False
        self.stream.write(line + "\n")
        self.stream.flush()

    def _flush_pending(self) -> None:
        if self._pending:
            self._pending = False
            self.stream.write(self._last + "\n")
            self.stream.flush()

    def close(self) -> None:
        self._flush_pending()
        if self.drawn and self.tty:
            self.stream.write("\n")
            self.stream.flush()


# `toolkit check --profile` and `toolkit lint` report alike: one line a finding, `WHERE: WHAT [LEVEL, ...] (MORE)`,
# then one summary line; in JSON, the counts and then the findings.


def _report(lines: Sequence[str], summary: str) -> str:
    return "\n".join([*lines, summary]) + "\n"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def format_findings(findings: Sequence[Finding], tools: int) -> str:
    """The `toolkit lint` report: `path:line: CODE message [level]` for a local tool, the tool's name and the fix
    for a remote one; then a summary line."""
    lines = [f"{f} [{f.rule.level}]" + ("" if f.location else f" (fix: {f.rule.hint})") for f in findings]
    errors = sum(f.rule.level == "error" for f in findings)
    summary = f"{_plural(len(findings), 'finding')} in {_plural(tools, 'tool')}"
    if findings:
        summary += f": {_plural(errors, 'error')}, {_plural(len(findings) - errors, 'warning')}"
    return _report(lines, summary)


def findings_json(findings: Sequence[Finding], tools: int) -> str:
    """The `toolkit lint --format json` report."""
    errors = sum(f.rule.level == "error" for f in findings)
    report = {
        "tools": tools,
        "errors": errors,
        "warnings": len(findings) - errors,
        "findings": [f.to_json() for f in findings],
    }
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


def format_problems(problems: Sequence[Problem], tools: int, profiles: Sequence[str]) -> str:
    """The `toolkit check --profile` report: one line a problem, then a summary line."""
    lines = [str(p) for p in problems]
    rejected = _rejected(problems)
    fixable = sum(p.fixable for p in problems)
    plural = "" if len(problems) == 1 else "s"
    summary = f"{len(problems)} problem{plural} in {tools} tool{'' if tools == 1 else 's'} for {', '.join(profiles)}"
    if problems:
        summary += f"; {fixable} auto-fixable (Server(schema_profile=...), tool.definition_for(...))"
    if rejected:
        pairs = ", ".join(f"{tool} ({profile})" for profile, tool in rejected)
        summary += f"; {len(rejected)} rejected as served: {pairs}"
    return _report(lines, summary)


def problems_json(problems: Sequence[Problem]) -> str:
    """The `--format json` report: `rejected` counts tool/profile pairs, as the text summary does."""
    rejected = _rejected(problems)
    report = {
        "rejected": len(rejected),
        "rejected_tools": [{"tool": tool, "profile": profile} for profile, tool in rejected],
        "problems": [p.to_json() for p in problems],
    }
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


def _rejected(problems: Sequence[Problem]) -> list[tuple[str, str]]:
    """(profile, tool) for each tool a profile's provider would reject as served, sorted."""
    return sorted({(p.profile, p.tool) for p in problems if p.rejects})
