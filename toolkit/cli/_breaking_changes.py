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

from ._schema_diff import SchemaChange, Walk, compare_schemas

__all__ = ["Change", "compare", "format_changes"]

Severity = Literal["breaking", "compatible"]

# Schema changes -> (severity, kind) for arguments (input) and for results (output). A schema change says how the
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
    renamed = _renamed(before, after)
    changes: list[Change] = []
    for name in sorted(set(before) | set(after)):
        if name in renamed:
            message = f"tool `{name}` renamed to `{renamed[name]}`"
            changes.append(Change("breaking", "tool-renamed", name, message))
        elif name not in after:
            changes.append(Change("breaking", "tool-removed", name, f"tool `{name}` removed"))
        elif name not in before:
            changes += _added(name, renamed)
        else:
            changes += _compare_tool(before[name], after[name])
    return changes


def _renamed(before: Mapping[str, Mapping[str, Any]], after: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Each removed tool whose input schema and description an added one has, to the first such added tool (in name
    order) that no other removed tool took."""
    removed = [name for name in sorted(before) if name not in after]
    added = [name for name in sorted(after) if name not in before]
    renamed: dict[str, str] = {}
    for name in removed:
        candidate = next((c for c in added if c not in renamed.values() and _same_shape(before[name], after[c])), None)
        if candidate is not None:
            renamed[name] = candidate
    return renamed


def _added(name: str, renamed: Mapping[str, str]) -> list[Change]:
    """A tool only the new list has: added, unless it is a removed one's new name (reported once, as renamed)."""
    if name in renamed.values():
        return []
    return [Change("compatible", "tool-added", name, f"tool `{name}` added")]


def _same_shape(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return a.get("inputSchema") == b.get("inputSchema") and a.get("description") == b.get("description")


def _compare_tool(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    """Every change of one tool present in both lists: its texts, hints, app, arguments and result."""
    name = str(new.get("name"))
    changes = _compare_texts(name, old, new)
    changes += _compare_hints(name, old.get("annotations") or {}, new.get("annotations") or {})
    changes += _compare_app(name, _ui(old), _ui(new))
    changes += _compare_input(name, old.get("inputSchema") or {}, new.get("inputSchema") or {})
    changes += _compare_output(name, old.get("outputSchema"), new.get("outputSchema"))
    return changes


def _compare_texts(tool: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    """The tool's title and description, which a model reads but no call depends on."""
    changes = []
    if old.get("title") != new.get("title"):
        changes.append(Change("compatible", "title-changed", tool, "title changed"))
    if old.get("description") != new.get("description"):
        changes.append(Change("compatible", "description-changed", tool, "description changed"))
    return changes


def _compare_input(tool: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    """The input schemas: what accepts fewer arguments than before breaks callers."""
    walk = Walk(old.get("$defs") or {}, new.get("$defs") or {})
    compare_schemas(old, new, "", walk)
    return [_change(tool, found, _INPUT, "parameter") for found in walk.changes]


def _compare_output(tool: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> list[Change]:
    """The output schemas: one removed, one added, or what promises less than before (breaking consumers)."""
    if old is None and new is None:
        return []
    if new is None:
        return [Change("breaking", "output-schema-removed", tool, "output schema removed", "output")]
    if old is None:
        return [Change("compatible", "output-schema-added", tool, "output schema added", "output")]
    walk = Walk(old.get("$defs") or {}, new.get("$defs") or {})
    compare_schemas(_unwrap(old), _unwrap(new), "output", walk)
    return [_change(tool, found, _OUTPUT, "output field") for found in walk.changes]


def _unwrap(schema: Mapping[str, Any]) -> Any:
    props = schema.get("properties") or {}
    if list(props) == ["result"] and schema.get("required") == ["result"]:
        return props["result"]
    return schema


def _change(tool: str, found: SchemaChange, table: Mapping[str, tuple[Severity, str]], noun: str) -> Change:
    """A change of a schema as a change of the tool: breaking or compatible as `table` says, worded with `noun`."""
    severity, kind = table[found.kind]
    shown = found.path.removeprefix("output.") if noun == "output field" else found.path
    if not found.path:
        message = found.message
    elif found.path == "output":
        message = f"output: {found.message}"
    elif found.kind in _PLAIN:
        message = f"{noun} `{shown}` {found.message}"
    else:
        message = f"{noun} `{shown}`: {found.message}"
    return Change(severity, kind, tool, message, found.path or None)


# Schema changes that read as a sentence after the parameter's name ("parameter `b` removed").
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
