"""Compare two `tools/list` payloads and classify each change as breaking or compatible.

Arguments flow from client to server, so an input schema that accepts less than before breaks callers; results
flow the other way, so an output schema that promises less than before breaks consumers. The structural
comparison below works on the JSON Schema keywords MCP servers use in practice: `type` (and type lists),
`anyOf`/`oneOf` branches, `enum`/`const`, numeric bounds and `multipleOf`, string lengths, `pattern` and
`format`, array items and counts, object properties, `required` and `additionalProperties`, and local `$ref`s
into `$defs` (recursion-safe). Anything else that differs is reported as a change of type, which is breaking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ._schema_diff import Finding, Walk, compare_schemas

__all__ = ["Change", "compare", "format_changes"]

Severity = Literal["breaking", "compatible"]

# Generic findings -> (severity, kind) for arguments (input) and for results (output). A finding says how the
# set of values valid under the new schema relates to the old one.
_INPUT: dict[str, tuple[Severity, str]] = {
    "removed": ("breaking", "parameter-removed"),
    "added-required": ("breaking", "required-parameter-added"),
    "added-optional": ("compatible", "optional-parameter-added"),
    "now-required": ("breaking", "parameter-now-required"),
    "now-optional": ("compatible", "parameter-now-optional"),
    "enum-removed": ("breaking", "enum-value-removed"),
    "enum-added": ("compatible", "enum-value-added"),
    "narrowed": ("breaking", "type-narrowed"),
    "widened": ("compatible", "type-widened"),
    "changed": ("breaking", "type-changed"),
    "default": ("compatible", "default-changed"),
    "description": ("compatible", "description-changed"),
}
_OUTPUT: dict[str, tuple[Severity, str]] = {
    "removed": ("breaking", "output-field-removed"),
    "added-required": ("compatible", "output-field-added"),
    "added-optional": ("compatible", "output-field-added"),
    "now-required": ("compatible", "output-field-now-required"),
    "now-optional": ("breaking", "output-field-now-optional"),
    "enum-removed": ("compatible", "output-enum-value-removed"),
    "enum-added": ("breaking", "output-enum-value-added"),
    "narrowed": ("compatible", "output-tightened"),
    "widened": ("breaking", "output-loosened"),
    "changed": ("breaking", "output-type-changed"),
    "default": ("compatible", "output-default-changed"),
    "description": ("compatible", "output-description-changed"),
}

# (readable name, wire key, spec default, the value that is more dangerous)
_HINTS = (
    ("read-only", "readOnlyHint", False, False),
    ("destructive", "destructiveHint", True, True),
    ("idempotent", "idempotentHint", False, False),
    ("open-world", "openWorldHint", True, True),
)


@dataclass(frozen=True)
class Change:
    """One difference between two versions of a server's tools."""

    severity: Severity
    kind: str
    """A stable identifier such as `parameter-removed` or `type-widened`."""
    tool: str
    message: str
    path: str | None = None
    """Where in the tool: a parameter path such as `address.city` or `items[]`, or `output.total`."""

    def to_json(self) -> dict[str, Any]:
        """The change as a JSON object."""
        return {
            "severity": self.severity,
            "kind": self.kind,
            "tool": self.tool,
            "path": self.path,
            "message": self.message,
        }


def compare(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> list[Change]:
    """Every change from the `old` tools to the `new` ones, tool by tool in name order.

    A removed tool whose input schema and description reappear under a new name is reported once, as renamed.
    """
    before = {str(t.get("name")): t for t in old}
    after = {str(t.get("name")): t for t in new}
    removed = [name for name in sorted(before) if name not in after]
    added = [name for name in sorted(after) if name not in before]
    renamed: dict[str, str] = {}
    for name in removed:
        for candidate in added:
            if candidate not in renamed.values() and _same_shape(before[name], after[candidate]):
                renamed[name] = candidate
                break
    changes: list[Change] = []
    for name in sorted(set(before) | set(after)):
        if name in renamed:
            message = f"tool `{name}` renamed to `{renamed[name]}`"
            changes.append(Change("breaking", "tool-renamed", name, message))
        elif name not in after:
            changes.append(Change("breaking", "tool-removed", name, f"tool `{name}` removed"))
        elif name not in before:
            if name not in renamed.values():
                changes.append(Change("compatible", "tool-added", name, f"tool `{name}` added"))
        else:
            changes += _compare_tool(before[name], after[name])
    return changes


def _same_shape(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return a.get("inputSchema") == b.get("inputSchema") and a.get("description") == b.get("description")


def _compare_tool(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    name = str(new.get("name"))
    changes: list[Change] = []
    if old.get("title") != new.get("title"):
        changes.append(Change("compatible", "title-changed", name, "title changed"))
    if old.get("description") != new.get("description"):
        changes.append(Change("compatible", "description-changed", name, "description changed"))
    changes += _compare_hints(name, old.get("annotations") or {}, new.get("annotations") or {})
    changes += _compare_app(name, _ui(old), _ui(new))

    old_in, new_in = old.get("inputSchema") or {}, new.get("inputSchema") or {}
    walk = Walk(old_in.get("$defs") or {}, new_in.get("$defs") or {})
    compare_schemas(old_in, new_in, "", walk)
    changes += [_change(name, f, _INPUT, "parameter") for f in walk.findings]

    old_out, new_out = old.get("outputSchema"), new.get("outputSchema")
    if old_out is not None and new_out is None:
        changes.append(Change("breaking", "output-schema-removed", name, "output schema removed", "output"))
    elif old_out is None and new_out is not None:
        changes.append(Change("compatible", "output-schema-added", name, "output schema added", "output"))
    elif old_out is not None and new_out is not None:
        walk = Walk(old_out.get("$defs") or {}, new_out.get("$defs") or {})
        compare_schemas(_unwrap(old_out), _unwrap(new_out), "output", walk)
        changes += [_change(name, f, _OUTPUT, "output field") for f in walk.findings]
    return changes


def _unwrap(schema: Mapping[str, Any]) -> Any:
    props = schema.get("properties") or {}
    if list(props) == ["result"] and schema.get("required") == ["result"]:
        return props["result"]
    return schema


def _change(tool: str, finding: Finding, table: Mapping[str, tuple[Severity, str]], noun: str) -> Change:
    severity, kind = table[finding.kind]
    shown = finding.path.removeprefix("output.") if noun == "output field" else finding.path
    if not finding.path:
        message = finding.message
    elif finding.path == "output":
        message = f"output: {finding.message}"
    elif finding.kind in _PLAIN:
        message = f"{noun} `{shown}` {finding.message}"
    else:
        message = f"{noun} `{shown}`: {finding.message}"
    return Change(severity, kind, tool, message, finding.path or None)


# Findings that read as a sentence after the parameter's name ("parameter `b` removed").
_PLAIN = frozenset({"removed", "added-required", "added-optional", "now-required", "now-optional"})


def _compare_hints(tool: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    changes = []
    read_only = (_hint(old, "readOnlyHint", False), _hint(new, "readOnlyHint", False))
    for label, key, default, dangerous in _HINTS:
        if key in ("destructiveHint", "idempotentHint") and (read_only[0] or read_only[1]):
            continue  # meaningful only when the tool is not read-only (spec, ToolAnnotations)
        before, after = _hint(old, key, default), _hint(new, key, default)
        if before == after:
            continue
        severity: Severity = "breaking" if after == dangerous else "compatible"
        now, was = (label, f"not {label}") if after else (f"not {label}", label)
        changes.append(Change(severity, "hint-changed", tool, f"hint changed: now {now} (was {was})"))
    return changes


def _ui(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = tool.get("_meta")
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    return ui if isinstance(ui, Mapping) else {}


def _compare_app(tool: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    """MCP Apps (`_meta.ui`): a tool the model could call that only an app may call now is gone for the model
    (breaking); a page added, removed or moved changes what hosts show, never the text a model reads."""
    changes = []
    for_model = ["model" in (ui.get("visibility") or ["model"]) for ui in (old, new)]
    if for_model == [True, False]:
        changes.append(Change("breaking", "now-app-only", tool, "now app-only: the model can no longer call it"))
    elif for_model == [False, True]:
        changes.append(Change("compatible", "now-for-the-model", tool, "no longer app-only: the model may call it"))
    before, after = old.get("resourceUri"), new.get("resourceUri")
    if before != after:
        what = f"page {after} added" if before is None else f"page {before} removed" if after is None else None
        changes.append(Change("compatible", "page-changed", tool, what or f"page moved from {before} to {after}"))
    return changes


def _hint(annotations: Mapping[str, Any], key: str, default: bool) -> bool:
    value = annotations.get(key)
    return default if value is None else bool(value)


def format_changes(changes: Sequence[Change]) -> str:
    """A readable report: one line per change, breaking ones first, then a count."""
    ordered = [c for c in changes if c.severity == "breaking"] + [c for c in changes if c.severity != "breaking"]
    lines = [
        f"{c.severity.upper() if c.severity == 'breaking' else c.severity:<10}  {c.tool}: {c.message}" for c in ordered
    ]
    breaking = sum(c.severity == "breaking" for c in changes)
    count = f"{len(changes)} change{'' if len(changes) == 1 else 's'}"
    lines.append(f"{count}: {breaking} breaking, {len(changes) - breaking} compatible." if changes else "No changes.")
    return "\n".join(lines) + "\n"
