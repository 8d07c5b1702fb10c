"""Provider profiles: which JSON Schema each model provider accepts, rule by rule, and the problems they find.

A profile is a named set of rules, each with its source (the provider's own documentation, or the SDK code that
applies it), and what toolkit does about it: transform the schema without loss, transform it with a documented loss
(a constraint the provider rejects is moved into the description, where the model still reads it; toolkit's
validator keeps enforcing it), or only report it. `toolkit._profiles.adapter` applies them to a tool.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["PROFILES", "Problem", "Profile", "Rule", "get_profile", "profile_names"]

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


_KEYWORD_NOTE = "moved into the description as text (toolkit's validator still enforces it)"

# The rules several providers share, worded once by id: (requirement, fix, remedy). A profile takes one with its own
# source, and with the provider's wording of the requirement where it says it otherwise.
_SHARED: Mapping[str, tuple[str, Fix, str]] = {
    "root-object": ('the parameters schema is `{"type": "object"}`', "report", "none"),
    "no-ref": ("no `$ref` or `$defs`", "lossless", "inlines every definition"),
    "default": ("no `default`", "lossy", "moves the default into the description"),
    "one-of": ("`anyOf`, not `oneOf`", "lossless", "turns `oneOf` into `anyOf`"),
    "all-of": ("no `allOf`", "lossless", "merges a single-entry `allOf` (more: into the description)"),
    "tuple": ("no `prefixItems`", "lossy", "lists the item types in order in the description"),
    "keyword": ("only the supported keywords", "lossy", _KEYWORD_NOTE),
    "format": ("only the supported string formats", "lossy", _KEYWORD_NOTE),
}


def _shared(rule_id: str, source: str, requirement: str | None = None, *, rejects: bool = True) -> Rule:
    """The shared rule `rule_id` as one provider states it (`source`, and `requirement` when worded otherwise)."""
    wording, fix, remedy = _SHARED[rule_id]
    return Rule(rule_id, requirement or wording, fix, remedy, source, rejects)


def _name_rule(source: str, pattern: str) -> Rule:
    return Rule("name", f"the tool name matches {pattern}", "report", "rename the tool (`@tool(name=...)`)", source)


# The keywords both strict modes accept (OpenAI's Structured Outputs, Anthropic's grammar-constrained tool use); each
# profile adds the provider's own.
_STRICT_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const"}  # structure
    | {"description", "title", "$ref", "$defs"}  # annotations and references
    | {"format", "minItems"}  # the constraints both keep
)

_OPENAI_STRICT = Profile(
    name="openai-strict",
    provider="openai",
    summary="OpenAI function calling with `strict: true` (Structured Outputs): the schema is enforced exactly.",
    strict=True,
    rules=(
        _name_rule(_OPENAI_FC, "^[a-zA-Z0-9_-]{1,64}$"),
        _shared("root-object", _OPENAI_SO),
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
        _shared("default", _OPENAI_AGENTS),
        _shared("one-of", _OPENAI_SO),
        _shared("all-of", _OPENAI_AGENTS),
        _shared("tuple", _OPENAI_SO),
        _shared("keyword", _OPENAI_SO),
        _shared("format", _OPENAI_SO),
        Rule(
            "limits",
            "at most 5000 properties, 10 levels of nesting and 1000 enum values",
            "report",
            "none: split the tool",
            _OPENAI_SO,
        ),
    ),
    keywords=_STRICT_KEYWORDS
    | {"pattern", "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "maxItems"},
    formats=frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}),
)

_OPENAI = Profile(
    name="openai",
    provider="openai",
    summary="OpenAI function calling without `strict`: any JSON Schema object; the model is not held to it.",
    rules=(
        _name_rule(_OPENAI_FC, "^[a-zA-Z0-9_-]{1,64}$"),
        _shared("root-object", _OPENAI_FC),
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
        _shared("root-object", _GEMINI_FD),
        _shared("no-ref", _GEMINI_SCHEMA),
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
        _shared("one-of", _GEMINI_SCHEMA, "no `oneOf`"),
        _shared("all-of", _GEMINI_SCHEMA),
        _shared("tuple", _GEMINI_SCHEMA),
        _shared("keyword", _GEMINI_SCHEMA, "only the Schema object's fields"),
        _shared("format", _GEMINI_SCHEMA, "string formats `enum` and `date-time` only"),
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

_ANTHROPIC_RULES = (_name_rule(_ANTHROPIC_TOOLS, "^[a-zA-Z0-9_-]{1,64}$"), _shared("root-object", _ANTHROPIC_TOOLS))

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
        _shared("one-of", _ANTHROPIC_SDK),
        Rule(
            "enum-type",
            "`enum`/`const` stand alone",
            "lossless",
            "drops the `type` beside an `enum` or `const` (the values say it), as the SDK does",
            _ANTHROPIC_SDK,
        ),
        _shared("default", _ANTHROPIC_SDK),
        _shared("tuple", _ANTHROPIC_SDK),
        _shared("keyword", _ANTHROPIC_STRICT, "no numeric or length constraints; `minItems` 0 or 1 only"),
        _shared("format", _ANTHROPIC_STRICT),
    ),
    keywords=_STRICT_KEYWORDS | {"allOf"},
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
        _shared("no-ref", "toolkit/_jsonschema.py; fastmcp#2455", "no `$ref`", rejects=False),
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
