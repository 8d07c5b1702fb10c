"""Human-readable reference of tools, rendered from a `tools/list` payload.

Everything here works on the wire form (a list of tool objects as JSON dicts), so the same code documents a
toolkit server in memory or any MCP server over stdio. Output is deterministic: the same tools give the same
bytes, so a generated file can be checked in and compared in CI.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from toolkit import PROFILES, Problem
from toolkit._definition.tool import Tool
from toolkit._lint import Finding, lint_definitions
from toolkit._profiles.adapter import adapt
from toolkit._profiles.function_calling import envelope

from ._schema_text import code_span, constraints, describe_type, example_arguments

__all__ = [
    "LARGE_TOOL_TOKENS",
    "badges",
    "definition_size",
    "hints",
    "render_definitions",
    "render_json",
    "render_markdown",
    "served_badges",
]

#: A tool whose definition is estimated above this many tokens gets a warning.
LARGE_TOOL_TOKENS = 2000

# The spec's defaults for each hint, used when a server leaves one unset (schema.ts, `ToolAnnotations`).
_HINTS: tuple[tuple[str, str, bool], ...] = (
    ("readOnlyHint", "read-only", False),
    ("destructiveHint", "destructive", True),
    ("idempotentHint", "idempotent", False),
    ("openWorldHint", "open-world", True),
)
_OPPOSITE = {
    "read-only": "not read-only",
    "destructive": "non-destructive",
    "idempotent": "not idempotent",
    "open-world": "closed-world",
}


def render_json(tools: Sequence[Mapping[str, Any]]) -> str:
    """The `tools/list` payload, `{"tools": [...]}`, as indented JSON ending in a newline."""
    return json.dumps({"tools": list(tools)}, indent=2, ensure_ascii=False) + "\n"


def render_definitions(tools: Sequence[Mapping[str, Any]], profile: str) -> str:
    """Every tool as the function definition the profile's provider takes: a JSON array, indented, ending in a
    newline (what `toolkit docs --format openai|anthropic|gemini` writes).

    Each tool is first adapted to the profile, as `Tool.definition_for(profile)` adapts a toolkit tool.

    Args:
        tools: Tool objects in wire form, as `tools/list` returns them.
        profile: A profile name such as `"openai-strict"`, `"anthropic"` or `"gemini"` (see `toolkit.PROFILES`).

    Raises:
        ValueError: an unknown profile name.
    """
    return json.dumps([envelope(adapt(tool, profile)) for tool in tools], indent=2, ensure_ascii=False) + "\n"


def definition_size(tool: Mapping[str, Any]) -> tuple[int, int]:
    """Characters of the tool's compact wire JSON, and an estimate of its tokens (characters / 4, rounded up)."""
    chars = len(json.dumps(tool, separators=(",", ":"), ensure_ascii=False))
    return chars, math.ceil(chars / 4)


class Hint(NamedTuple):
    """One behaviour hint with its effective value."""

    label: str
    value: bool
    explicit: bool
    """False when the server left the hint unset and the spec default applies."""


def hints(tool: Mapping[str, Any]) -> list[Hint]:
    """The effective hints of a tool; destructive and idempotent are left out for read-only tools.

    The spec gives them meaning only when `readOnlyHint` is false.
    """
    annotations = tool.get("annotations") or {}
    result: list[Hint] = []
    read_only = annotations.get("readOnlyHint")
    for key, label, default in _HINTS:
        if read_only is True and key in ("destructiveHint", "idempotentHint"):
            continue
        value = annotations.get(key)
        result.append(Hint(label, default if value is None else bool(value), value is not None))
    return result


def badges(tool: Mapping[str, Any], *, mark_defaults: bool = True) -> list[str]:
    """Short labels for the tool's hints, such as `read-only` or `destructive (default)`, then whether a call may run
    as a task (2025-11-25's `execution.taskSupport`: `task: optional`, `task: required`).

    `mark_defaults=False` gives the compact form for tables: no `(default)` marks, no `not read-only`.
    """
    out: list[str] = []
    for hint in hints(tool):
        if not mark_defaults and hint.label == "read-only" and not hint.value:
            continue  # implied by the destructive and idempotent badges that follow
        label = hint.label if hint.value else _OPPOSITE[hint.label]
        out.append(f"{label} (default)" if mark_defaults and not hint.explicit else label)
    return out + _task_badges(tool)


def _task_badges(tool: Mapping[str, Any]) -> list[str]:
    """`task: optional` or `task: required` when a call may run as a task (`execution.taskSupport`); else none."""
    execution = tool.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, Mapping) else None
    if support in ("optional", "required"):
        return [f"task: {support}"]
    return []


def served_badges(tool: Tool[Any, Any] | None) -> list[str]:
    """What a toolkit tool's server does around each call that no definition says: `confirm` (`confirm=`: the user
    is asked first) and `timeout 5 s` (`timeout=`). None (a tool of another server) has none to show."""
    if tool is None:
        return []
    out = ["confirm"] if tool.confirms else []
    return out + ([f"timeout {tool.timeout:g} s"] if tool.timeout is not None else [])


# -- Markdown --------------------------------------------------------------------------------------------------


class Row(NamedTuple):
    """One line of a parameter or field table."""

    path: str
    schema: Mapping[str, Any]
    required: bool


def rows(schema: Mapping[str, Any], prefix: str = "") -> list[Row]:
    """The fields of an object schema, with nested objects flattened to `parent.child` and `list[].child`."""
    out: list[Row] = []
    required = set(schema.get("required") or ())
    for name, sub in (schema.get("properties") or {}).items():
        sub_schema = sub if isinstance(sub, Mapping) else {}
        path = f"{prefix}{name}"
        out.append(Row(path, sub_schema, name in required))
        out += _nested(sub_schema, path)
    return out


def _nested(schema: Mapping[str, Any], path: str) -> list[Row]:
    if schema.get("properties"):
        return rows(schema, f"{path}.")
    out: list[Row] = []
    items = schema.get("items")
    if isinstance(items, Mapping):
        out += _nested(items, f"{path}[]")
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        out += _nested(extra, f"{path}.<key>")
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key) or ():
            if isinstance(branch, Mapping):
                out += _nested(branch, path)
    return out


def _cell(text: str) -> str:
    """Text for a table cell: pipes escaped, line breaks as `<br>`."""
    return "<br>".join(line.strip() for line in text.strip().splitlines()).replace("|", "\\|")


def _table(header: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(cell or " " for cell in row) + " |" for row in body]
    return lines


def _field_table(fields: Sequence[Row], *, defaults: bool) -> list[str]:
    header = ["Name", "Type", "Required", "Default", "Constraints", "Description"]
    if not defaults:
        header.remove("Default")
    body: list[list[str]] = []
    for row in fields:
        cells = [
            code_span(row.path),
            code_span(describe_type(row.schema, bounds=False)),
            "yes" if row.required else "no",
        ]
        if defaults:
            default = row.schema.get("default")
            cells.append(code_span(json.dumps(default, ensure_ascii=False)) if "default" in row.schema else "")
        cells.append(_cell(", ".join(constraints(row.schema))))
        cells.append(_cell(str(row.schema.get("description", ""))))
        body.append(cells)
    return _table(header, body)


def _is_wrapped(schema: Mapping[str, Any]) -> bool:
    """toolkit (and the official SDK) send a non-object result as `{"result": value}`."""
    props = schema.get("properties") or {}
    return (
        list(props) == ["result"]
        and schema.get("required") == ["result"]
        and set(schema)
        <= {
            "type",
            "properties",
            "required",
            "$defs",
        }
    )


def _display_title(tool: Mapping[str, Any]) -> str | None:
    annotations = tool.get("annotations") or {}
    title = tool.get("title") or annotations.get("title")
    return str(title) if title and title != tool.get("name") else None


def warnings(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """What a reviewer should look at that lint does not say: very large definitions (a missing description is a
    lint finding, TK101 or TK105, shown once, in the tool's lint line)."""
    out: list[str] = []
    for tool in tools:
        name = tool.get("name", "?")
        chars, tokens = definition_size(tool)
        if tokens > LARGE_TOOL_TOKENS:
            out.append(
                f"`{name}`: definition is {chars:,} characters, ≈ {tokens:,} tokens (over {LARGE_TOOL_TOKENS:,})."
            )
    return out


def render_markdown(
    tools: Sequence[Mapping[str, Any]],
    *,
    title: str | None = "Tools",
    heading_level: int = 1,
    findings: Sequence[Finding] | None = None,
    local: Mapping[str, Tool[Any, Any]] | None = None,
) -> str:
    """A Markdown reference of `tools`: a summary, warnings, then one section per tool.

    Args:
        tools: Tool objects in wire form, as `tools/list` returns them.
        title: The document's top heading; `None` leaves it out (for embedding in a page).
        heading_level: The level of the top heading, whose tools get the next level; without a title, the
            level of each tool's heading.
        findings: The tools' `toolkit lint` findings, shown beside each tool; by default, those of the rules
            that read definitions (toolkit's own tools pass theirs, with what their code says and silences).
        local: The toolkit tools by name, when the tools are this process's: what their server does around a
            call that no definition says (`confirm=`, `timeout=`) is shown beside their hints.
    """
    found = _findings_by_tool(lint_definitions(tools) if findings is None else findings)
    level = "#" * heading_level
    sub = "#" * (heading_level + 1) if title is not None else level
    out: list[str] = [f"{level} {title}", ""] if title is not None else []
    out += [_size_line(tools), ""]
    served = {str(tool.get("name")): served_badges((local or {}).get(str(tool.get("name")))) for tool in tools}
    if tools:
        out += [*_summary_table(tools, found, served), ""]
    out += _warnings_section(tools)
    for tool in tools:
        name = str(tool.get("name"))
        out += _tool_section(tool, sub, found.get(name, []), served[name])
    return "\n".join(out).rstrip("\n") + "\n"


def _findings_by_tool(findings: Sequence[Finding]) -> dict[str, list[Finding]]:
    """The findings grouped by the tool they are about, in their order."""
    found: dict[str, list[Finding]] = {}
    for finding in findings:
        found.setdefault(finding.tool, []).append(finding)
    return found


def _size_line(tools: Sequence[Mapping[str, Any]]) -> str:
    """How many tools, and how large their definitions are together."""
    total = sum(definition_size(t)[0] for t in tools)
    plural = "" if len(tools) == 1 else "s"
    return (
        f"{len(tools)} tool{plural}, {total:,} characters of definitions in total "
        f"(≈ {math.ceil(total / 4):,} tokens, estimated as characters / 4)."
    )


def _warnings_section(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """The `warnings` of the tools as a list under a bold heading; nothing when there are none."""
    notes = warnings(tools)
    if not notes:
        return []
    return ["**Warnings**", "", *(f"- {note}" for note in notes), ""]


def _lint_badge(findings: Sequence[Finding]) -> str:
    """`lint: TK204 TK301`, the codes of a tool's findings (empty when it has none)."""
    return code_span("lint: " + " ".join(sorted({f.rule.code for f in findings}))) if findings else ""


def _summary_table(
    tools: Sequence[Mapping[str, Any]], found: Mapping[str, Sequence[Finding]], served: Mapping[str, Sequence[str]]
) -> list[str]:
    titled = any(_display_title(tool) for tool in tools)
    body = [_summary_row(tool, found, served, titled=titled) for tool in tools]
    return _table(["Tool", *(["Title"] if titled else []), "Hints", "Parameters"], body)


def _summary_row(
    tool: Mapping[str, Any],
    found: Mapping[str, Sequence[Finding]],
    served: Mapping[str, Sequence[str]],
    *,
    titled: bool,
) -> list[str]:
    """One tool's row of the summary table: its name, its title (when the table has titles), its badges and lint
    codes, its parameters."""
    name = str(tool.get("name"))
    params = ", ".join(code_span(param) for param in (tool.get("inputSchema") or {}).get("properties") or {})
    label = " ".join(
        [
            *(code_span(b) for b in [*badges(tool, mark_defaults=False), *served[name]]),
            _lint_badge(found.get(name, [])),
        ]
    ).strip()
    title = [_cell(_display_title(tool) or "")] if titled else []
    return [code_span(name), *title, label, params or "none"]


def _tool_section(tool: Mapping[str, Any], level: str, findings: Sequence[Finding], served: Sequence[str]) -> list[str]:
    name = str(tool.get("name"))
    title = _display_title(tool)
    out = [f"{level} `{name}`" + (f": {title}" if title else ""), ""]
    if tool.get("description"):
        out += [str(tool["description"]).strip(), ""]
    out += ["**Hints:** " + " · ".join(code_span(b) for b in [*badges(tool), *served]), ""]
    if findings:
        out += ["**Lint:** " + " · ".join(f"{code_span(f.rule.code)} {_cell(f.message)}" for f in findings), ""]
    schema = tool.get("inputSchema") or {}
    if schema.get("properties"):
        out += ["**Parameters**", "", *_field_table(rows(schema), defaults=True), ""]
    else:
        out += ["**Parameters:** none.", ""]
    out += _defs_section(schema, "Types used by the parameters")
    output = tool.get("outputSchema")
    if isinstance(output, Mapping):
        out += _output_section(output)
    else:
        out += ["**Output:** content blocks only (no output schema).", ""]
    call = {"name": name, "arguments": example_arguments(schema)}
    out += ["**Example call** (`tools/call` params)", "", "```json", json.dumps(call, indent=2), "```", ""]
    chars, tokens = definition_size(tool)
    out += [f"Definition size: {chars:,} characters, ≈ {tokens:,} tokens (characters / 4).", ""]
    out += [_compatibility(tool), ""]
    return out


def _output_section(output: Mapping[str, Any]) -> list[str]:
    if _is_wrapped(output):
        inner, prefix, where = output["properties"]["result"], "result", ', sent as `{"result": ...}`'
    else:
        inner, prefix, where = output, "", ""
    if isinstance(inner, Mapping) and inner.get("properties"):
        out = [f"**Output** (`structuredContent`{where})", "", *_field_table(rows(inner), defaults=False), ""]
    else:
        out = [f"**Output:** {code_span(describe_type(inner))} (`structuredContent`{where}).", ""]
        nested = _nested(inner, prefix) if isinstance(inner, Mapping) else []
        out += [*_field_table(nested, defaults=False), ""] if nested else []
    return out + _defs_section(output, "Types used by the output")


def _defs_section(schema: Mapping[str, Any], heading: str) -> list[str]:
    defs = schema.get("$defs") or {}
    out: list[str] = []
    for name, sub in sorted(defs.items()):
        if not isinstance(sub, Mapping):
            continue
        text = f"**{heading}: `{name}`**" + (f": {sub['description']}" if sub.get("description") else "")
        if sub.get("properties"):
            out += [text, "", *_field_table(rows(sub), defaults=True), ""]
        else:
            out += [f"{text} is {code_span(describe_type(sub))}.", ""]
    return out


def _compatibility(tool: Mapping[str, Any]) -> str:
    """One line for the docs: how the tool fares under each profile, e.g. `gemini` ok after 2 fixes."""
    parts = [f"`{name}` {_profile_state(adapt(tool, name).problems)}" for name in PROFILES]
    return "**Providers:** " + " · ".join(parts)


def _profile_state(problems: Sequence[Problem]) -> str:
    """How a tool fares under one profile, given the problems its adaptation met: `ok`, `ok after 2 fixes`, or
    `rejected: <rules>` / `warning: <rules>` for what adaptation cannot fix."""
    if not problems:
        return "ok"
    left = [p for p in problems if not p.fixable]
    if not left:
        return f"ok after {len(problems)} fix{'' if len(problems) == 1 else 'es'}"
    rules = ", ".join(sorted({p.rule.id for p in left}))
    return f"{'rejected' if any(p.rejects for p in left) else 'warning'}: {rules}"
