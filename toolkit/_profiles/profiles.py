"""Provider profiles: which JSON Schema each model provider accepts, and how toolkit adapts a tool to it.

A profile is a named set of rules, each with its source (the provider's own documentation, or the SDK code that
applies it). For each rule toolkit either transforms the schema without loss, transforms it with a documented loss
(a constraint the provider rejects is moved into the description, where the model still reads it; toolkit's
validator keeps enforcing it), or can only report it. One walk over a tool's wire definition does both: it
returns the adapted definition, every problem of the original, and what to undo in the arguments a provider sends
back (see `Restore`).

Pure functions of JSON dicts: they work on a toolkit `Tool` and on any MCP server's `tools/list` alike.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolkit._definition.defs import SCHEMA_KEYS, SCHEMA_LIST_KEYS, SCHEMA_MAP_KEYS, inline_defs, recursive_defs

__all__ = ["PROFILES", "AdaptedTool", "Problem", "Profile", "Restore", "Rule", "adapt", "get_profile", "profile_names"]

Fix = Literal["lossless", "lossy", "report"]
Provider = Literal["openai", "anthropic", "gemini", "mcp"]


@dataclass(frozen=True)
class Rule:
    """One requirement of a provider, and what toolkit does about it."""

    id: str
    """Short name, unique within its profile (`no-ref`, `all-required`, ...)."""
    requirement: str
    """What the provider requires."""
    fix: Fix
    """`"lossless"`, `"lossy"` (the loss is in `remedy`) or `"report"` (toolkit cannot fix it)."""
    remedy: str
    """What toolkit does about it."""
    source: str
    """Where the requirement is documented."""
    rejects: bool = True
    """The provider rejects a definition that breaks the rule (False: it accepts it but mishandles it)."""


@dataclass(frozen=True)
class Profile:
    """A named set of rules for one provider's function calling (or one client's quirks)."""

    name: str
    provider: Provider
    """Whose envelope [`Tool.definition_for`][toolkit.Tool.definition_for] returns."""
    summary: str
    rules: tuple[Rule, ...]
    strict: bool = False
    """The envelope asks the provider to enforce the schema (`"strict": true`)."""
    keywords: frozenset[str] | None = None
    """The schema keywords the provider accepts (None: any)."""
    formats: frozenset[str] | None = None
    """The string formats it accepts (None: any)."""
    name_pattern: str = r"^[A-Za-z0-9_-]{1,64}$"
    max_min_items: int | None = None
    """The largest `minItems` the provider accepts (None: any)."""

    def rule(self, rule_id: str) -> Rule | None:
        """The rule called `rule_id`, or None when the profile does not have it."""
        for r in self.rules:
            if r.id == rule_id:
                return r
        return None


@dataclass(frozen=True)
class Problem:
    """Where a tool breaks one rule of one profile."""

    profile: str
    tool: str
    path: str
    """Where in the tool definition, dotted: `inputSchema.properties.when`."""
    keyword: str
    rule: Rule
    detail: str

    @property
    def fixable(self) -> bool:
        """toolkit's transform fixes it (with or without loss)."""
        return self.rule.fix != "report"

    @property
    def rejects(self) -> bool:
        """The provider would reject the definition as it is."""
        return self.rule.rejects

    def __str__(self) -> str:
        how = {"lossless": "auto-fixable", "lossy": "auto-fixable with loss", "report": "not auto-fixable"}
        severity = "error" if self.rejects else "warning"
        return (
            f"{self.tool}: {self.path}: {self.keyword}: {self.detail} "
            f"[{severity}, {self.profile}/{self.rule.id}, {how[self.rule.fix]}] ({self.rule.source})"
        )

    def to_json(self) -> dict[str, Any]:
        """The problem as a JSON object (for `toolkit check --format json`)."""
        return {
            "profile": self.profile,
            "tool": self.tool,
            "path": self.path,
            "keyword": self.keyword,
            "rule": self.rule.id,
            "detail": self.detail,
            "fix": self.rule.fix,
            "rejects": self.rejects,
            "source": self.rule.source,
        }


# -- the profiles ------------------------------------------------------------------------------------------------

_OPENAI_FC = "https://platform.openai.com/docs/guides/function-calling#defining-functions"
_OPENAI_SO = "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas"
_OPENAI_AGENTS = "openai-agents-python src/agents/strict_schema.py"
_GEMINI_FD = "https://ai.google.dev/gemini-api/docs/function-calling#function_declarations"
_GEMINI_SCHEMA = "https://ai.google.dev/api/caching#Schema"
_VERTEX_FD = "https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/FunctionDeclaration"
_PYDANTIC_AI_GOOGLE = "pydantic-ai pydantic_ai/profiles/google.py"
_ANTHROPIC_TOOLS = (
    "https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use#specifying-client-tools"
)
_ANTHROPIC_STRICT = "https://docs.claude.com/en/docs/build-with-claude/structured-outputs#json-schema-limitations"
_ANTHROPIC_SDK = "anthropic SDK anthropic.transform_schema"


def _name_rule(source: str, pattern: str) -> Rule:
    return Rule("name", f"the tool name matches {pattern}", "report", "rename the tool (`@tool(name=...)`)", source)


def _root_rule(source: str) -> Rule:
    return Rule("root-object", 'the parameters schema is `{"type": "object"}`', "report", "none", source)


_KEYWORD_NOTE = "moved into the description as text (toolkit's validator still enforces it)"

_OPENAI_STRICT = Profile(
    name="openai-strict",
    provider="openai",
    summary="OpenAI function calling with `strict: true` (Structured Outputs): the schema is enforced exactly.",
    strict=True,
    rules=(
        _name_rule(_OPENAI_FC, "^[a-zA-Z0-9_-]{1,64}$"),
        _root_rule(_OPENAI_SO),
        Rule(
            "closed-objects",
            "every object has `additionalProperties: false`",
            "lossless",
            "adds `additionalProperties: false` (toolkit rejects unknown arguments anyway)",
            _OPENAI_SO,
        ),
        Rule(
            "open-map",
            "no object with free-form keys (`dict[str, T]`)",
            "report",
            "none: use a model or a list of key/value pairs",
            _OPENAI_SO,
        ),
        Rule(
            "all-required",
            "every property is in `required`; an optional one is written as nullable",
            "lossy",
            "marks it required and nullable; a `null` coming back is dropped, so the default applies "
            "(the default is moved into the description)",
            _OPENAI_SO,
        ),
        Rule("default", "no `default`", "lossy", "moves the default into the description", _OPENAI_AGENTS),
        Rule("one-of", "`anyOf`, not `oneOf`", "lossless", "turns `oneOf` into `anyOf`", _OPENAI_SO),
        Rule(
            "all-of",
            "no `allOf`",
            "lossless",
            "merges a single-entry `allOf` (more: into the description)",
            _OPENAI_AGENTS,
        ),
        Rule("tuple", "no `prefixItems`", "lossy", "lists the item types in order in the description", _OPENAI_SO),
        Rule("keyword", "only the supported keywords", "lossy", _KEYWORD_NOTE, _OPENAI_SO),
        Rule("format", "only the supported string formats", "lossy", _KEYWORD_NOTE, _OPENAI_SO),
        Rule(
            "limits",
            "at most 5000 properties, 10 levels of nesting and 1000 enum values",
            "report",
            "none: split the tool",
            _OPENAI_SO,
        ),
    ),
    keywords=frozenset(
        [
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "anyOf",
            "enum",
            "const",
            "description",
            "title",
            "$ref",
            "$defs",
            "pattern",
            "format",
            "multipleOf",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minItems",
            "maxItems",
        ]
    ),
    formats=frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}),
)

_OPENAI = Profile(
    name="openai",
    provider="openai",
    summary="OpenAI function calling without `strict`: any JSON Schema object; the model is not held to it.",
    rules=(
        _name_rule(_OPENAI_FC, "^[a-zA-Z0-9_-]{1,64}$"),
        _root_rule(_OPENAI_FC),
        Rule(
            "array-items",
            "every array schema has `items`",
            "lossless",
            "adds `items` (a tuple's item types, as `anyOf`), keeping `prefixItems`",
            'OpenAI API error "array schema missing items" (mark3labs/mcphost#35, '
            "streamnative/streamnative-mcp-server#26)",
        ),
    ),
)

_GEMINI = Profile(
    name="gemini",
    provider="gemini",
    summary="Gemini function declarations (`parameters`): the OpenAPI 3.0 subset of the Schema object.",
    rules=(
        Rule(
            "name",
            "the name starts with a letter or `_`; letters, digits, `_`, `.`, `-`; at most 64 characters",
            "report",
            "rename the tool (`@tool(name=...)`)",
            _VERTEX_FD,
        ),
        _root_rule(_GEMINI_FD),
        Rule("no-ref", "no `$ref` or `$defs`", "lossless", "inlines every definition", _GEMINI_SCHEMA),
        Rule(
            "recursion",
            "no recursive types (they need `$ref`)",
            "lossy",
            "inlines 3 levels deep, then leaves out the optional property that recurses (required: reported)",
            _GEMINI_SCHEMA,
        ),
        Rule(
            "nullable",
            "a single `type`, plus `nullable: true`",
            "lossless",
            'turns `anyOf [X, null]` and `type: [X, "null"]` into X with `nullable: true`',
            _GEMINI_SCHEMA,
        ),
        Rule("const", "`enum`, not `const`", "lossless", "turns `const: v` into `enum: [v]`", _PYDANTIC_AI_GOOGLE),
        Rule(
            "enum-strings",
            "`enum` lists strings only",
            "lossy",
            "moves a non-string `enum` or `const` into the description",
            _GEMINI_SCHEMA,
        ),
        Rule("one-of", "no `oneOf`", "lossless", "turns `oneOf` into `anyOf`", _GEMINI_SCHEMA),
        Rule(
            "all-of",
            "no `allOf`",
            "lossless",
            "merges a single-entry `allOf` (more: into the description)",
            _GEMINI_SCHEMA,
        ),
        Rule("tuple", "no `prefixItems`", "lossy", "lists the item types in order in the description", _GEMINI_SCHEMA),
        Rule("keyword", "only the Schema object's fields", "lossy", _KEYWORD_NOTE, _GEMINI_SCHEMA),
        Rule(
            "format",
            "string formats `enum` and `date-time` only",
            "lossy",
            _KEYWORD_NOTE,
            _GEMINI_SCHEMA,
        ),
    ),
    keywords=frozenset(
        [
            "type",
            "format",
            "title",
            "description",
            "nullable",
            "enum",
            "maxItems",
            "minItems",
            "properties",
            "required",
            "minProperties",
            "maxProperties",
            "minLength",
            "maxLength",
            "pattern",
            "example",
            "anyOf",
            "propertyOrdering",
            "default",
            "items",
            "minimum",
            "maximum",
            "additionalProperties",
        ]
    ),
    formats=frozenset({"enum", "date-time", "float", "double", "int32", "int64"}),
    name_pattern=r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$",
)

_ANTHROPIC_RULES = (_name_rule(_ANTHROPIC_TOOLS, "^[a-zA-Z0-9_-]{1,64}$"), _root_rule(_ANTHROPIC_TOOLS))

_ANTHROPIC = Profile(
    name="anthropic",
    provider="anthropic",
    summary="Anthropic tool use (`input_schema`): any JSON Schema object.",
    rules=_ANTHROPIC_RULES,
)

_ANTHROPIC_STRICT_PROFILE = Profile(
    name="anthropic-strict",
    provider="anthropic",
    summary="Anthropic strict tool use (`strict: true`): grammar-constrained inputs, a JSON Schema subset.",
    strict=True,
    max_min_items=1,
    rules=(
        *_ANTHROPIC_RULES,
        Rule(
            "closed-objects",
            "every object has `additionalProperties: false` (and `properties`)",
            "lossless",
            "adds `additionalProperties: false` and an empty `properties` where missing",
            _ANTHROPIC_STRICT,
        ),
        Rule("open-map", "no object with free-form keys", "report", "none: use a model", _ANTHROPIC_STRICT),
        Rule("recursion", "no recursive schemas", "report", "none", _ANTHROPIC_STRICT),
        Rule("one-of", "`anyOf`, not `oneOf`", "lossless", "turns `oneOf` into `anyOf`", _ANTHROPIC_SDK),
        Rule(
            "enum-type",
            "`enum`/`const` stand alone",
            "lossless",
            "drops the `type` beside an `enum` or `const` (the values say it), as the SDK does",
            _ANTHROPIC_SDK,
        ),
        Rule("default", "no `default`", "lossy", "moves the default into the description", _ANTHROPIC_SDK),
        Rule("tuple", "no `prefixItems`", "lossy", "lists the item types in order in the description", _ANTHROPIC_SDK),
        Rule(
            "keyword",
            "no numeric or length constraints; `minItems` 0 or 1 only",
            "lossy",
            _KEYWORD_NOTE,
            _ANTHROPIC_STRICT,
        ),
        Rule("format", "only the supported string formats", "lossy", _KEYWORD_NOTE, _ANTHROPIC_STRICT),
    ),
    keywords=frozenset(
        [
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "anyOf",
            "allOf",
            "enum",
            "const",
            "description",
            "title",
            "$ref",
            "$defs",
            "format",
            "minItems",
        ]
    ),
    formats=frozenset({"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}),
)

_CLAUDE_DESKTOP = Profile(
    name="claude-desktop",
    provider="mcp",
    summary="Claude Desktop as an MCP client: the tool stays an MCP tool, with the client's quirks avoided.",
    rules=(
        _name_rule(
            "evoila/meho#2745 (one bad name rejects the whole toolset); " + _ANTHROPIC_TOOLS, "^[a-zA-Z0-9_-]{1,64}$"
        ),
        Rule(
            "null-union",
            "no `anyOf` with `null`",
            "lossless",
            'writes `anyOf [X, null]` as `type: [X, "null"]` when X has one type (others: reported)',
            "anthropics/claude-code#56263, anthropics/claude-ai-mcp#121",
            rejects=False,
        ),
        Rule(
            "null-union-complex",
            "no `anyOf` with `null`",
            "report",
            "none: toolkit writes `x: T | None = None` without the null (the default, compact style)",
            "anthropics/claude-code#56263",
            rejects=False,
        ),
        Rule(
            "no-ref",
            "no `$ref`",
            "lossless",
            "inlines every definition",
            "toolkit/_defs.py; fastmcp#2455",
            rejects=False,
        ),
        Rule("recursion", "no recursive types", "report", "none", "fastmcp#2455", rejects=False),
        Rule(
            "output-schema",
            "no `outputSchema` (calls to tools that declare one fail in the client)",
            "lossy",
            "leaves `outputSchema` out; the result still carries its JSON as text",
            "anthropics/claude-code#80105",
            # A client bug report, not a documented rule: the definition is accepted, and toolkit's results do
            # carry the conforming `structuredContent` the spec requires, so this warns rather than rejects.
            rejects=False,
        ),
    ),
)

PROFILES: Mapping[str, Profile] = {
    p.name: p for p in (_OPENAI_STRICT, _OPENAI, _GEMINI, _ANTHROPIC, _ANTHROPIC_STRICT_PROFILE, _CLAUDE_DESKTOP)
}
"""Every profile, by name."""


def profile_names() -> list[str]:
    """The names of the profiles, in the order `--profile all` checks them."""
    return list(PROFILES)


def get_profile(name: str | Profile) -> Profile:
    """The profile called `name`.

    Raises:
        ValueError: there is no such profile.
    """
    if isinstance(name, Profile):
        return name
    profile = PROFILES.get(name)
    if profile is None:
        close = difflib.get_close_matches(name, list(PROFILES), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ValueError(f"unknown schema profile {name!r}; {hint}choose one of: {', '.join(PROFILES)}")
    return profile


# -- restoring arguments -----------------------------------------------------------------------------------------


@dataclass
class Restore:
    """What to undo in arguments shaped by an adapted schema: nulls the provider must send for optional properties.

    A tree shaped like the schema: `drop_null` are properties of this object whose `null` means "left out".
    """

    drop_null: set[str] = field(default_factory=set)
    properties: dict[str, Restore] = field(default_factory=dict)
    items: Restore | None = None
    branches: list[Restore] = field(default_factory=list)
    names: frozenset[str] = frozenset()
    """The properties of the object this plan is for (to pick the branch of a union a value belongs to)."""

    def empty(self) -> bool:
        return not (self.drop_null or self.properties or self.items or self.branches)

    def apply(self, value: Any) -> Any:
        """`value` with the provider-only nulls removed; a new object where something changes."""
        if isinstance(value, dict):
            if self.branches:
                for branch in self.branches:
                    if set(value) <= branch.names:
                        return branch.apply(value)
                return value
            out: dict[str, Any] | None = None
            for key, item in value.items():
                if item is None and key in self.drop_null:
                    new: Any = _DROP
                else:
                    sub = self.properties.get(key)
                    new = sub.apply(item) if sub is not None else item
                if new is not item:
                    if out is None:
                        out = dict(value)
                    if new is _DROP:
                        del out[key]
                    else:
                        out[key] = new
            return out if out is not None else value
        if isinstance(value, list) and self.items is not None:
            items = [self.items.apply(v) for v in value]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        return value


_DROP = object()


# -- adapting ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AdaptedTool:
    """A tool definition adapted to one profile."""

    profile: Profile
    tool: dict[str, Any]
    """The MCP tool definition (wire form) with the adapted schemas."""
    problems: list[Problem]
    """Every problem of the original definition."""
    restore: Restore | None
    """What to undo in arguments coming back; None when nothing."""

    @property
    def remaining(self) -> list[Problem]:
        """The problems the adaptation cannot fix."""
        return [p for p in self.problems if not p.fixable]


_DROPPED = frozenset({"$schema", "$id", "$comment", "discriminator", "$anchor"})
_RECURSION_DEPTH = 3


def adapt(tool: Mapping[str, Any], profile: str | Profile) -> AdaptedTool:
    """Adapt one tool definition (wire form) to `profile`, listing every problem of the original."""
    prof = get_profile(profile)
    name = str(tool.get("name", "?"))
    walk = _Walk(prof, name)
    out = dict(tool)
    if prof.rule("name") is not None and not re.match(prof.name_pattern, name):
        walk.problem("name", "name", "name", f"{name!r} does not match {prof.name_pattern}")
    schema = tool.get("inputSchema")
    restore: Restore | None = None
    if isinstance(schema, dict):
        if schema.get("type") != "object":
            walk.problem("root-object", "inputSchema", "type", f"the root type is {schema.get('type')!r}")
        out["inputSchema"], restore = walk.root(schema)
    if prof.rule("output-schema") is not None and "outputSchema" in tool:
        walk.problem("output-schema", "outputSchema", "outputSchema", "the tool declares an output schema")
        del out["outputSchema"]
    useful = restore is not None and _prune(restore)
    return AdaptedTool(prof, out, walk.problems, restore if useful else None)


class _Walk:
    """One walk over one tool's input schema for one profile."""

    def __init__(self, profile: Profile, tool: str) -> None:
        self.profile = profile
        self.tool = tool
        self.has = {r.id for r in profile.rules}
        self.problems: list[Problem] = []
        self.defs: dict[str, Any] = {}
        self.def_plans: dict[str, Restore] = {}
        self.counts = {"properties": 0, "enum": 0, "depth": 0}

    def problem(self, rule_id: str, path: str, keyword: str, detail: str) -> None:
        rule = self.profile.rule(rule_id)
        if rule is not None:
            self.problems.append(Problem(self.profile.name, self.tool, path, keyword, rule, detail))

    def root(self, schema: dict[str, Any]) -> tuple[dict[str, Any], Restore | None]:
        _find_refs(schema, "inputSchema", lambda path: self.problem("no-ref", path, "$ref", "a reference"))
        if "no-ref" in self.has and "$defs" in schema:
            schema = inline_defs(schema)
        defs = schema.get("$defs")
        self.defs = dict(defs) if isinstance(defs, dict) else {}
        cut = "recursion" in self.has and self.profile.rule("recursion").fix == "lossy"  # type: ignore[union-attr]
        if self.defs and "recursion" in self.has and not cut:
            for def_name in sorted(recursive_defs(self.defs)):
                self.problem("recursion", f"inputSchema.$defs.{def_name}", "$ref", f"{def_name} refers to itself")
        body = {k: v for k, v in schema.items() if k != "$defs"}
        self.def_plans = {n: Restore() for n in self.defs}
        result, plan = self.node(body, "inputSchema", {}, 0)
        if result is _DROP:  # the root itself is a cut recursion: cannot happen for an object root
            result = body
        if self.defs and not cut:
            new_defs: dict[str, Any] = {}
            for def_name, sub in self.defs.items():
                new_defs[def_name], def_plan = self.node(sub, f"inputSchema.$defs.{def_name}", {}, 1)
                _fill(self.def_plans[def_name], def_plan)
            result["$defs"] = new_defs
        if "limits" in self.has:
            self.limits()
        return result, plan

    def limits(self) -> None:
        if self.counts["properties"] > 5000:
            self.problem("limits", "inputSchema", "properties", f"{self.counts['properties']} properties (max 5000)")
        if self.counts["depth"] > 10:
            self.problem("limits", "inputSchema", "properties", f"{self.counts['depth']} levels of nesting (max 10)")
        if self.counts["enum"] > 1000:
            self.problem("limits", "inputSchema", "enum", f"{self.counts['enum']} enum values (max 1000)")

    # The walk returns the new schema (or _DROP: a recursion cut here) and its restore plan.
    def node(self, schema: Any, path: str, stack: dict[str, int], depth: int) -> tuple[Any, Restore | None]:
        if not isinstance(schema, dict):
            return schema, None
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in self.defs:
            return self.reference(schema, ref[8:], path, stack, depth)
        s = dict(schema)
        notes: list[str] = []
        self.types(s, path)
        self.unions(s, path)
        self.literals(s, path, notes)
        plan: Restore | None = None
        if "anyOf" in s:
            branches: list[Any] = []
            plans: list[Restore] = []
            for i, sub in enumerate(s["anyOf"]):
                new, sub_plan = self.node(sub, f"{path}.anyOf[{i}]", stack, depth)
                if new is not _DROP:
                    branches.append(new)
                    plans.append(sub_plan if sub_plan is not None else _names_only(new))
            if not branches:
                return _DROP, None
            s["anyOf"] = branches
            plan = Restore(branches=plans)
        if s.get("type") == "object" or "properties" in s:
            dropped, plan = self.object(s, path, stack, depth, notes)
            if dropped:
                return _DROP, None
        if "prefixItems" in s or "items" in s or s.get("type") == "array":
            dropped, items_plan = self.array(s, path, stack, depth, notes)
            if dropped:
                return _DROP, None
            plan = items_plan or plan
        self.keywords(s, path, notes)
        if notes:
            description = s.get("description")
            s["description"] = " ".join([description, *notes] if description else notes)
        return s, plan

    def reference(
        self, schema: dict[str, Any], name: str, path: str, stack: dict[str, int], depth: int
    ) -> tuple[Any, Restore | None]:
        rule = self.profile.rule("recursion")
        if rule is None or rule.fix != "lossy":
            # The definition is adapted once, in $defs; its plan is filled in then (it may refer to itself).
            return schema, self.def_plans[name]
        seen = stack.get(name, 0)
        if seen >= _RECURSION_DEPTH:
            return _DROP, None
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        return self.node({**self.defs[name], **siblings}, path, {**stack, name: seen + 1}, depth)

    def types(self, s: dict[str, Any], path: str) -> None:
        kind = s.get("type")
        if isinstance(kind, list) and "nullable" in self.has:
            others = [t for t in kind if t != "null"]
            self.problem("nullable", path, "type", f"a list of types {kind}")
            if "null" in kind:
                s["nullable"] = True
            if len(others) == 1:
                s["type"] = others[0]
            else:
                del s["type"]
                s["anyOf"] = [{"type": t} for t in others]

    def unions(self, s: dict[str, Any], path: str) -> None:
        if "oneOf" in s and "one-of" in self.has:
            self.problem("one-of", path, "oneOf", "a `oneOf` union")
            s["anyOf"] = [*s.get("anyOf", []), *s.pop("oneOf")]
        if "allOf" in s and "all-of" in self.has:
            parts = s["allOf"]
            if len(parts) == 1 and isinstance(parts[0], dict):
                self.problem("all-of", path, "allOf", "an `allOf` of one schema")
                del s["allOf"]
                merged = {**parts[0], **s}
                s.clear()
                s.update(merged)
        branches = s.get("anyOf")
        if not isinstance(branches, list) or {"type": "null"} not in branches:
            return
        rest = [b for b in branches if b != {"type": "null"}]
        if "nullable" in self.has:
            self.problem("nullable", path, "anyOf", "a union with null")
            s["nullable"] = True
        elif "null-union" in self.has:
            simple = all(isinstance(b, dict) and set(b) == {"type"} and isinstance(b["type"], str) for b in rest)
            if len(rest) == 1 and isinstance(rest[0].get("type"), str) and "enum" not in rest[0]:
                self.problem("null-union", path, "anyOf", "a union with null")
                del s["anyOf"]
                merged = {**rest[0], **s, "type": [rest[0]["type"], "null"]}
                s.clear()
                s.update(merged)
            elif simple and rest:
                self.problem("null-union", path, "anyOf", "a union with null")
                del s["anyOf"]
                s["type"] = [*(b["type"] for b in rest), "null"]
            else:
                self.problem("null-union-complex", path, "anyOf", "a union of complex types with null")
            return
        else:
            return
        del s["anyOf"]
        if len(rest) == 1 and isinstance(rest[0], dict):
            merged = {**rest[0], **s}
            s.clear()
            s.update(merged)
        elif rest:
            s["anyOf"] = rest

    def literals(self, s: dict[str, Any], path: str, notes: list[str]) -> None:
        if "const" in s and "const" in self.has:
            value = s.pop("const")
            if isinstance(value, str):
                self.problem("const", path, "const", f"const {_text(value)}")
                s["enum"] = [value]
            else:
                self.problem("enum-strings", path, "const", f"const {_text(value)} is not a string")
                notes.append(f"Must be {_text(value)}.")
        enum = s.get("enum")
        if isinstance(enum, list):
            self.counts["enum"] += len(enum)
            if "enum-strings" in self.has and not all(isinstance(v, str) for v in enum):
                self.problem("enum-strings", path, "enum", "an enum of values that are not all strings")
                del s["enum"]
                notes.append("One of: " + ", ".join(_text(v) for v in enum) + ".")
        if "enum-type" in self.has and ("enum" in s or "const" in s) and "type" in s:
            self.problem("enum-type", path, "type", "a `type` beside `enum`/`const`")
            del s["type"]

    def object(
        self, s: dict[str, Any], path: str, stack: dict[str, int], depth: int, notes: list[str]
    ) -> tuple[bool, Restore | None]:
        props = s.get("properties")
        props = props if isinstance(props, dict) else {}
        required = list(s.get("required") or ())
        self.counts["properties"] += len(props)
        self.counts["depth"] = max(self.counts["depth"], depth + 1)
        plan = Restore(names=frozenset(props))
        new_props: dict[str, Any] = {}
        for key, sub in props.items():
            sub_path = f"{path}.properties.{key}"
            new, sub_plan = self.node(sub, sub_path, stack, depth + 1)
            if new is _DROP:
                if key in required:
                    self.problem("recursion", sub_path, "$ref", "a required property of a recursive type")
                    new = sub
                else:
                    self.problem("recursion", sub_path, "$ref", f"recursion cut after {_RECURSION_DEPTH} levels")
                    continue
            if sub_plan is not None:
                plan.properties[key] = sub_plan
            if key not in required and "all-required" in self.has and isinstance(new, dict):
                self.problem("all-required", sub_path, "required", f"optional property {key!r}")
                if not _accepts_null(new):
                    new = _nullable(new)
                    plan.drop_null.add(key)
            new_props[key] = new
        if "properties" in s or "closed-objects" in self.has:
            s["properties"] = new_props
        if "all-required" in self.has and new_props:
            s["required"] = list(new_props)
        elif required:
            s["required"] = [k for k in required if k in new_props]
        self.extra(s, path, stack, depth)
        return False, plan

    def extra(self, s: dict[str, Any], path: str, stack: dict[str, int], depth: int) -> None:
        extra = s.get("additionalProperties")
        if "closed-objects" in self.has:
            if extra is None:
                self.problem("closed-objects", path, "additionalProperties", "an object open to other keys")
                s["additionalProperties"] = False
            elif extra is not False:
                self.problem("open-map", path, "additionalProperties", "an object with free-form keys")
        if isinstance(extra, dict):
            new_extra, _ = self.node(extra, f"{path}.additionalProperties", stack, depth + 1)
            s["additionalProperties"] = extra if new_extra is _DROP else new_extra

    def array(
        self, s: dict[str, Any], path: str, stack: dict[str, int], depth: int, notes: list[str]
    ) -> tuple[bool, Restore | None]:
        prefix = s.get("prefixItems")
        if isinstance(prefix, list):
            walked = [self.node(sub, f"{path}.prefixItems[{i}]", stack, depth)[0] for i, sub in enumerate(prefix)]
            if any(w is _DROP for w in walked):
                return True, None
            if "tuple" in self.has:
                self.problem("tuple", path, "prefixItems", f"a tuple of {len(prefix)} items")
                del s["prefixItems"]
                if "items" not in s:
                    s["items"] = _one_of(walked)
                notes.append("Items in order: " + ", ".join(_brief(w) for w in walked) + ".")
            else:
                s["prefixItems"] = walked
                if "items" not in s and "array-items" in self.has:
                    self.problem("array-items", path, "items", "an array without `items`")
                    s["items"] = _one_of(walked)
        elif "items" not in s and "array-items" in self.has:
            self.problem("array-items", path, "items", "an array without `items`")
            s["items"] = {}
        items = s.get("items")
        if isinstance(items, dict):
            new, sub_plan = self.node(items, f"{path}.items", stack, depth)
            if new is _DROP:
                return True, None
            s["items"] = new
            if sub_plan is not None:
                return False, Restore(items=sub_plan)
        return False, None

    def keywords(self, s: dict[str, Any], path: str, notes: list[str]) -> None:
        if "default" in s and "default" in self.has:
            self.problem("default", path, "default", f"default {_text(s['default'])}")
            notes.append(f"Default: {_text(s.pop('default'))}.")
        fmt = s.get("format")
        allowed_formats = self.profile.formats
        if isinstance(fmt, str) and allowed_formats is not None and fmt not in allowed_formats:
            self.problem("format", path, "format", f"format {fmt!r}")
            del s["format"]
            notes.append(f"Format: {fmt}.")
        allowed = self.profile.keywords
        if allowed is None:
            return
        for key in [k for k in s if k not in allowed]:
            value = s.pop(key)
            self.problem("keyword", path, key, f"keyword {key!r}")
            note = _note(key, value) if key not in _DROPPED else ""
            if note:
                notes.append(note)
        largest = self.profile.max_min_items
        if largest is not None and isinstance(s.get("minItems"), int) and s["minItems"] > largest:
            self.problem("keyword", path, "minItems", "`minItems` above 1")
            notes.append(_note("minItems", s.pop("minItems")))


def _prune(root: Restore) -> bool:
    """Drop the parts of the plan that restore nothing; True when something is left.

    Plans of recursive definitions refer to themselves, so usefulness is a fixed point over the whole graph.
    """
    nodes: dict[int, Restore] = {}
    todo = [root]
    while todo:
        plan = todo.pop()
        if id(plan) not in nodes:
            nodes[id(plan)] = plan
            todo.extend(_children(plan))
    useful = {key: bool(plan.drop_null) for key, plan in nodes.items()}
    changed = True
    while changed:
        changed = False
        for key, plan in nodes.items():
            if not useful[key] and any(useful[id(c)] for c in _children(plan)):
                useful[key] = changed = True
    for plan in nodes.values():
        plan.properties = {k: sub for k, sub in plan.properties.items() if useful[id(sub)]}
        if plan.items is not None and not useful[id(plan.items)]:
            plan.items = None
        if not any(useful[id(b)] for b in plan.branches):
            plan.branches = []
    return useful[id(root)]


def _children(plan: Restore) -> list[Restore]:
    return [*plan.properties.values(), *([plan.items] if plan.items is not None else []), *plan.branches]


def _fill(target: Restore, plan: Restore | None) -> None:
    if plan is not None:
        target.drop_null, target.properties, target.items = plan.drop_null, plan.properties, plan.items
        target.branches, target.names = plan.branches, plan.names


def _names_only(schema: Any) -> Restore:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return Restore(names=frozenset(props) if isinstance(props, dict) else frozenset())


def _find_refs(schema: Any, path: str, found: Any) -> None:
    if isinstance(schema, dict):
        if isinstance(schema.get("$ref"), str):
            found(path)
        for key, value in schema.items():
            if key in SCHEMA_MAP_KEYS and isinstance(value, dict):
                for name, sub in value.items():
                    _find_refs(sub, f"{path}.{key}.{name}", found)
            elif key in SCHEMA_LIST_KEYS and isinstance(value, list):
                for i, sub in enumerate(value):
                    _find_refs(sub, f"{path}.{key}[{i}]", found)
            elif key in SCHEMA_KEYS:
                _find_refs(value, f"{path}.{key}", found)


def _accepts_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind) or schema.get("nullable") is True:
        return True
    return any(isinstance(b, dict) and _accepts_null(b) for b in schema.get("anyOf") or ())


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` or null, keeping the description outside, where a model reads it first."""
    inner = {k: v for k, v in schema.items() if k != "description"}
    out: dict[str, Any] = (
        {"anyOf": [*inner["anyOf"], {"type": "null"}]}
        if set(inner) == {"anyOf"}
        else {"anyOf": [inner, {"type": "null"}]}
    )
    if "description" in schema:
        out["description"] = schema["description"]
    return out


def _one_of(schemas: list[Any]) -> Any:
    unique: list[Any] = []
    for s in schemas:
        if s not in unique:
            unique.append(s)
    return unique[0] if len(unique) == 1 else {"anyOf": unique}


def _brief(schema: Any) -> str:
    if isinstance(schema, dict):
        kind = schema.get("type")
        if isinstance(kind, str):
            return kind
        if "anyOf" in schema:
            return " or ".join(_brief(b) for b in schema["anyOf"])
    return "any"


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


_PHRASES = {
    "minLength": "At least {} character{}.",
    "maxLength": "At most {} character{}.",
    "minimum": "At least {}.",
    "maximum": "At most {}.",
    "exclusiveMinimum": "Greater than {}.",
    "exclusiveMaximum": "Less than {}.",
    "multipleOf": "A multiple of {}.",
    "minItems": "At least {} item{}.",
    "maxItems": "At most {} item{}.",
    "pattern": "Matches the pattern {}.",
    "examples": "Examples: {}.",
}


def _note(key: str, value: Any) -> str:
    if key == "uniqueItems":
        return "Items are unique." if value else ""
    if key == "examples" and isinstance(value, list):
        return "Examples: " + ", ".join(_text(v) for v in value) + "."
    phrase = _PHRASES.get(key)
    return phrase.format(_text(value), "" if value == 1 else "s") if phrase else f"{key}: {_text(value)}."


def check(tools: Iterable[Mapping[str, Any]], profiles: Iterable[str | Profile]) -> list[Problem]:
    """Every problem of every tool (wire form) under every profile, in that order."""
    chosen = [get_profile(p) for p in profiles]
    return [problem for tool in tools for profile in chosen for problem in adapt(tool, profile).problems]
