"""Human-readable reference of tools, rendered from a `tools/list` payload.

Everything here works on the wire form (a list of tool objects as JSON dicts), so the same code documents a
toolkit server in memory or any MCP server over stdio. Output is deterministic: the same tools give the same
bytes, so a generated file can be checked in and compared in CI.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

__all__ = [
    "LARGE_TOOL_TOKENS",
    "badges",
    "definition_size",
    "describe_type",
    "example_arguments",
    "hints",
    "render_json",
    "render_markdown",
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
    """Short labels for the tool's hints, such as `read-only` or `destructive (default)`.

    `mark_defaults=False` gives the compact form for tables: no `(default)` marks, no `not read-only`.
    """
    out: list[str] = []
    for hint in hints(tool):
        if not mark_defaults and hint.label == "read-only" and not hint.value:
            continue  # implied by the destructive and idempotent badges that follow
        label = hint.label if hint.value else _OPPOSITE[hint.label]
        out.append(f"{label} (default)" if mark_defaults and not hint.explicit else label)
    return out


# -- readable types --------------------------------------------------------------------------------------------


def _bound(value: Any) -> str:
    return json.dumps(value)


def constraints(schema: Mapping[str, Any]) -> list[str]:
    """The schema's own constraints in words: bounds, lengths, pattern, format, item counts."""
    out: list[str] = []
    low = [f"≥ {_bound(schema['minimum'])}"] if "minimum" in schema else []
    low += [f"> {_bound(schema['exclusiveMinimum'])}"] if "exclusiveMinimum" in schema else []
    high = [f"≤ {_bound(schema['maximum'])}"] if "maximum" in schema else []
    high += [f"< {_bound(schema['exclusiveMaximum'])}"] if "exclusiveMaximum" in schema else []
    out += low + high
    if "multipleOf" in schema:
        out.append(f"multiple of {_bound(schema['multipleOf'])}")
    out += _range(schema, "minLength", "maxLength", "characters")
    if "pattern" in schema:
        out.append(f"pattern {_code(str(schema['pattern']))}")
    if "format" in schema:
        out.append(f"format {_code(str(schema['format']))}")
    out += _range(schema, "minItems", "maxItems", "items")
    if schema.get("uniqueItems"):
        out.append("unique items")
    out += _range(schema, "minProperties", "maxProperties", "properties")
    if schema.get("deprecated"):
        out.append("deprecated")
    return out


def _range(schema: Mapping[str, Any], low_key: str, high_key: str, unit: str) -> list[str]:
    low, high = schema.get(low_key), schema.get(high_key)
    if low is not None and high is not None:
        return [f"exactly {_count(low, unit)}" if low == high else f"{low}-{high} {unit}"]
    if low is not None:
        return [f"at least {_count(low, unit)}"] if low else []
    if high is not None:
        return [f"at most {_count(high, unit)}"]
    return []


def _count(n: Any, unit: str) -> str:
    singular = {"characters": "character", "items": "item", "properties": "property"}
    return f"{n} {singular[unit] if n == 1 else unit}"


def _inline_bounds(schema: Mapping[str, Any]) -> str:
    """Constraints short enough to sit inside a type: `integer ≥ 0`, `string (date-time)`."""
    parts = [c for c in constraints(schema) if c[0] in "≥>≤<"]
    if "format" in schema:
        parts.append(f"({schema['format']})")
    return " " + ", ".join(parts).replace(", (", " (") if parts else ""


def describe_type(schema: Any, *, bounds: bool = True) -> str:
    """A readable type: `list[string]`, `integer ≥ 0`, `"a" | "b"`, `dict[string, number]`, `Node | null`.

    Objects with properties read as `object`; their fields are listed separately. `bounds=False` leaves out
    the top level's own constraints (a table shows them in their own column).
    """
    if not isinstance(schema, Mapping):
        return "nothing" if schema is False else "any"
    combined = _describe_combination(schema, bounds=bounds)
    if combined is not None:
        return combined
    kind = schema.get("type")
    if kind is None and "properties" in schema:
        kind = "object"
    if not isinstance(kind, str):
        return "any"
    if kind == "array":
        prefix = schema.get("prefixItems")
        items = f"tuple[{', '.join(describe_type(item) for item in prefix)}]" if isinstance(prefix, list) else ""
        return items or f"list[{describe_type(schema.get('items', True))}]"
    extra = schema.get("additionalProperties")
    if kind == "object" and not schema.get("properties") and isinstance(extra, Mapping) and extra:
        return f"dict[string, {describe_type(extra)}]"
    return kind + (_inline_bounds(schema) if bounds and kind != "object" else "")


def _describe_combination(schema: Mapping[str, Any], *, bounds: bool) -> str | None:
    """The readable form of `$ref`, `const`, `enum`, `anyOf`/`oneOf`, one-item `allOf` and type lists."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return ref.rsplit("/", 1)[-1]
    values = [schema["const"]] if "const" in schema else schema.get("enum")
    if isinstance(values, list):
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in values) or "nothing"
    branches = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(branches, list):
        return " | ".join(_dedupe(describe_type(branch) for branch in branches))
    if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        return describe_type({**schema["allOf"][0], **merged}, bounds=bounds)
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(describe_type({**schema, "type": k}, bounds=bounds) for k in kind)
    return None


def _dedupe(items: Any) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


# -- example call ----------------------------------------------------------------------------------------------

_FORMAT_EXAMPLES = {
    "date-time": "2025-01-01T12:00:00Z",
    "date": "2025-01-01",
    "time": "12:00:00",
    "duration": "PT1H",
    "email": "user@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
}


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments for an example `tools/call`: every required parameter, and optional ones that have examples.

    Values come from the schema's `examples`, then `default`, `const` or the first `enum` value, then a value
    of the right type that respects the bounds.
    """
    value = _example_object(schema, schema.get("$defs") or {}, depth=0)
    return value if isinstance(value, dict) else {}


def _example_object(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> dict[str, Any]:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    out: dict[str, Any] = {}
    for name, sub in properties.items():
        if name in required or (isinstance(sub, Mapping) and sub.get("examples")):
            out[name] = _example(sub, defs, depth + 1)
    return out


_NO_VALUE = object()


def _example(schema: Any, defs: Mapping[str, Any], depth: int) -> Any:
    if not isinstance(schema, Mapping) or depth > 8:
        return None
    given = _given_example(schema, defs, depth)
    if given is not _NO_VALUE:
        return given
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "properties" in schema:
        kind = "object"
    make = _EXAMPLES_BY_TYPE.get(kind) if isinstance(kind, str) else None
    return make(schema, defs, depth) if make is not None else None


def _example_string(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> str:
    text = _FORMAT_EXAMPLES.get(schema.get("format", ""), "example").ljust(schema.get("minLength", 0), "x")
    return text[: schema["maxLength"]] if "maxLength" in schema else text


def _example_array(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> list[Any]:
    if isinstance(schema.get("prefixItems"), list):
        return [_example(item, defs, depth + 1) for item in schema["prefixItems"]]
    return [_example(schema.get("items", {}), defs, depth + 1)] * max(1, schema.get("minItems", 1))


_EXAMPLES_BY_TYPE: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any], int], Any]] = {
    "integer": lambda schema, _defs, _depth: _example_number(schema, integer=True),
    "number": lambda schema, _defs, _depth: _example_number(schema, integer=False),
    "string": _example_string,
    "boolean": lambda _schema, _defs, _depth: True,
    "array": _example_array,
    "object": _example_object,
}


def _given_example(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> Any:
    """A value the schema spells out (`examples`, `default`, `const`, `enum`), or one of a `$ref`/`anyOf`."""
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _example(defs.get(ref.rsplit("/", 1)[-1], {}), defs, depth + 1)
    for key in ("anyOf", "oneOf"):
        branches = [b for b in schema.get(key) or () if isinstance(b, Mapping) and b.get("type") != "null"]
        if branches:
            return _example(branches[0], defs, depth + 1)
    return _NO_VALUE


def _example_number(schema: Mapping[str, Any], *, integer: bool) -> float | int:
    step = 1 if integer else 0.5
    value: float = 1
    if "minimum" in schema:
        value = schema["minimum"]
    elif "exclusiveMinimum" in schema:
        value = schema["exclusiveMinimum"] + step
    if "maximum" in schema and value > schema["maximum"]:
        value = schema["maximum"]
    elif "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        value = schema["exclusiveMaximum"] - step
    return int(value) if integer else value


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


def _code(text: str) -> str:
    """Inline code that survives a table cell in both GitHub Markdown and Python-Markdown."""
    if "|" not in text and "`" not in text:
        return f"`{text}`"
    escaped = html.escape(text, quote=False)
    for char in "|*_`[\\":
        escaped = escaped.replace(char, f"&#{ord(char)};")
    return f"<code>{escaped}</code>"


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
        cells = [_code(row.path), _code(describe_type(row.schema, bounds=False)), "yes" if row.required else "no"]
        if defaults:
            default = row.schema.get("default")
            cells.append(_code(json.dumps(default, ensure_ascii=False)) if "default" in row.schema else "")
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
    """What a reviewer should look at: undocumented tools and parameters, very large definitions."""
    out: list[str] = []
    for tool in tools:
        name = tool.get("name", "?")
        if not tool.get("description"):
            out.append(f"`{name}` has no description.")
        for row in rows(tool.get("inputSchema") or {}):
            if not row.schema.get("description") and "." not in row.path and "[]" not in row.path:
                out.append(f"`{name}`: parameter `{row.path}` has no description.")
        chars, tokens = definition_size(tool)
        if tokens > LARGE_TOOL_TOKENS:
            out.append(
                f"`{name}`: definition is {chars:,} characters, ≈ {tokens:,} tokens (over {LARGE_TOOL_TOKENS:,})."
            )
    return out


def render_markdown(tools: Sequence[Mapping[str, Any]], *, title: str | None = "Tools", heading_level: int = 1) -> str:
    """A Markdown reference of `tools`: a summary, warnings, then one section per tool.

    Args:
        tools: Tool objects in wire form, as `tools/list` returns them.
        title: The document's top heading; `None` leaves it out (for embedding in a page).
        heading_level: The level of the top heading, whose tools get the next level; without a title, the
            level of each tool's heading.
    """
    level = "#" * heading_level
    sub = "#" * (heading_level + 1) if title is not None else level
    out: list[str] = [f"{level} {title}", ""] if title is not None else []
    total = sum(definition_size(t)[0] for t in tools)
    plural = "" if len(tools) == 1 else "s"
    out.append(
        f"{len(tools)} tool{plural}, {total:,} characters of definitions in total "
        f"(≈ {math.ceil(total / 4):,} tokens, estimated as characters / 4)."
    )
    out.append("")
    if tools:
        out += [*_summary_table(tools), ""]
    notes = warnings(tools)
    if notes:
        out += ["**Warnings**", ""]
        out += [f"- {note}" for note in notes]
        out.append("")
    for tool in tools:
        out += _tool_section(tool, sub)
    return "\n".join(out).rstrip("\n") + "\n"


def _summary_table(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    titled = any(_display_title(tool) for tool in tools)
    body = []
    for tool in tools:
        params = ", ".join(_code(name) for name in (tool.get("inputSchema") or {}).get("properties") or {})
        label = " ".join(_code(b) for b in badges(tool, mark_defaults=False))
        title = [_cell(_display_title(tool) or "")] if titled else []
        body.append([_code(str(tool.get("name"))), *title, label, params or "none"])
    return _table(["Tool", *(["Title"] if titled else []), "Hints", "Parameters"], body)


def _tool_section(tool: Mapping[str, Any], level: str) -> list[str]:
    name = str(tool.get("name"))
    title = _display_title(tool)
    out = [f"{level} `{name}`" + (f": {title}" if title else ""), ""]
    if tool.get("description"):
        out += [str(tool["description"]).strip(), ""]
    out += ["**Hints:** " + " · ".join(_code(b) for b in badges(tool)), ""]
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
    return out


def _output_section(output: Mapping[str, Any]) -> list[str]:
    if _is_wrapped(output):
        inner, prefix, where = output["properties"]["result"], "result", ', sent as `{"result": ...}`'
    else:
        inner, prefix, where = output, "", ""
    if isinstance(inner, Mapping) and inner.get("properties"):
        out = [f"**Output** (`structuredContent`{where})", "", *_field_table(rows(inner), defaults=False), ""]
    else:
        out = [f"**Output:** {_code(describe_type(inner))} (`structuredContent`{where}).", ""]
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
            out += [f"{text} is {_code(describe_type(sub))}.", ""]
    return out
