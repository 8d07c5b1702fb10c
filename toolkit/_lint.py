"""`toolkit lint`'s rules: the mistakes in a tool's definition that make a model misuse the tool.

Each rule reads the wire form of the tools (a `tools/list` payload), so the same rules run on a toolkit server and on
any other MCP server; a toolkit `Tool` adds what only its code knows (the line of its function, its return type,
its confirmation, what it raises, the findings its author silenced with `lint_ignore=`). Shared by the `toolkit lint`
command, `toolkit.testing.assert_lint_clean` and the badges of `toolkit docs`. The rules, their reasons and
sources are documented one by one in docs/lint.md; how often each was right on real servers is measured there.
"""

from __future__ import annotations

import ast
import collections.abc
import difflib
import functools
import inspect
import json
import math
import os
import re
import textwrap
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolkit._definition.tool import Tool
from toolkit._protocol.jsonrpc import URL_ELICITATION_REQUIRED
from toolkit._search import ToolIndex
from toolkit._server import Server

__all__ = [
    "DEFAULT_BUDGET",
    "RULES",
    "Finding",
    "LintRule",
    "Page",
    "check_codes",
    "lint",
    "lint_definitions",
    "location",
    "measured_findings",
    "select",
]

Level = Literal["error", "warning"]

#: Tokens a result may take before `--call` reports it: Claude Code warns about MCP output above 10,000 tokens.
DEFAULT_BUDGET = 10_000

_SPEC_TOOLS = "https://modelcontextprotocol.io/specification/2025-11-25/server/tools"
_SPEC_ANNOTATIONS = "https://modelcontextprotocol.io/specification/2025-11-25/schema#toolannotations"
_SPEC_SECURITY = "https://modelcontextprotocol.io/specification/2025-11-25/basic/security_best_practices"
_ANTHROPIC = (
    "https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use#best-practices-for-tool-definitions"
)
_ANTHROPIC_AGENTS = "https://www.anthropic.com/engineering/writing-tools-for-agents"
_OPENAI = "https://platform.openai.com/docs/guides/function-calling#best-practices-for-defining-functions"
_CLAUDE_CODE = "https://docs.claude.com/en/docs/claude-code/mcp#mcp-output-limits-and-warnings"
_ISSUE = "the tutorial's list of tool mistakes (toolkit issue 28)"
_SPEC_APPS = "https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx"


@dataclass(frozen=True)
class LintRule:
    """One mistake `toolkit lint` looks for."""

    code: str
    """`TK` and three digits; the hundreds say the family (1 descriptions, 2 hints, 3 inputs, 4 outputs, 5 errors,
    6 shape)."""
    name: str
    """A short slug (`free-form-path`), for people."""
    level: Level
    """`"error"` fails `toolkit lint` (exit status 1); `"warning"` is reported only."""
    reason: str
    """Why it matters, in one sentence."""
    source: str
    """Where the advice comes from."""
    hint: str
    """How to fix it, in a few words."""


RULES: tuple[LintRule, ...] = (
    LintRule(
        "TK001",
        "stale-silence",
        "warning",
        "A lint_ignore entry that silences nothing hides the next real finding of that rule, with an outdated reason.",
        "ruff's unused-noqa (RUF100)",
        "remove the entry from lint_ignore",
    ),
    LintRule(
        "TK101",
        "no-description",
        "error",
        "The description is the model's only guide to when and how to use a tool; without one it guesses from the "
        "name.",
        _ANTHROPIC,
        "write a docstring: what the tool does, when to use it, what it returns",
    ),
    LintRule(
        "TK102",
        "short-description",
        "warning",
        "A description of a few words cannot tell a model when to use the tool, what it returns or its limits.",
        _ANTHROPIC,
        "say what it does, when to use it (and when not), what it returns",
    ),
    LintRule(
        "TK103",
        "description-restates-name",
        "warning",
        "A description that only repeats the name adds nothing the model did not already know.",
        _ANTHROPIC,
        "describe the behaviour, inputs and result instead of repeating the name",
    ),
    LintRule(
        "TK104",
        "generic-description",
        "warning",
        "Words such as 'helper', 'utility' or 'does stuff' give a model nothing to choose the tool by.",
        _OPENAI,
        "name the operation and its object: what goes in, what comes out",
    ),
    LintRule(
        "TK105",
        "undocumented-parameter",
        "warning",
        "A parameter without a description leaves the model to guess its meaning and format from its name.",
        _ANTHROPIC,
        "document it (a docstring Args: entry, or Field(description=...))",
    ),
    LintRule(
        "TK106",
        "near-duplicate-description",
        "warning",
        "Two tools described almost alike force the model to pick between them at random.",
        _ANTHROPIC_AGENTS,
        "say in each description how it differs from the other, or merge the two",
    ),
    LintRule(
        "TK107",
        "indistinguishable-to-search",
        "warning",
        "Two tools that a search for what either does finds equally well are as hard for a model to tell apart, "
        "and a tool search (tool_search=) cannot rank one first.",
        _ANTHROPIC_AGENTS,
        "say in each name and description what only it does (its object, its result), or merge the two",
    ),
    LintRule(
        "TK201",
        "destructive-marked-read-only",
        "error",
        "A tool whose name says it deletes, overwrites, sends or pays but is marked read-only is run without the "
        "confirmation clients ask for other changes.",
        _SPEC_ANNOTATIONS,
        "drop read_only=True; mark it destructive",
    ),
    LintRule(
        "TK202",
        "destructive-marked-harmless",
        "error",
        "destructiveHint false on a tool that deletes, overwrites, sends or pays tells clients they need not ask "
        "the user first.",
        _SPEC_ANNOTATIONS,
        "drop destructive=False (the spec's default is destructive)",
    ),
    LintRule(
        "TK203",
        "destructive-without-confirmation",
        "warning",
        "A tool that deletes, sends or pays without asking its user acts on whatever the model decides, prompt "
        "injection included.",
        _SPEC_TOOLS + "#user-interaction-model",
        "add confirm='Delete {path}?' (the user confirms each call)",
    ),
    LintRule(
        "TK204",
        "closed-world-reads-outside",
        "warning",
        "open_world=False tells clients the tool's output is theirs alone to trust, but web pages, mail and files "
        "can carry instructions written by anyone.",
        _SPEC_ANNOTATIONS,
        "drop open_world=False",
    ),
    LintRule(
        "TK205",
        "idempotent-creates",
        "warning",
        "idempotent=True on a tool that creates or sends tells clients a retry is harmless when it makes a second "
        "copy.",
        _SPEC_ANNOTATIONS,
        "drop idempotent=True, or make the call idempotent (a key, an upsert)",
    ),
    LintRule(
        "TK301",
        "free-form-injection-surface",
        "warning",
        "A free-form string the server runs as SQL or a shell command, opens as a path or fetches as a URL lets "
        "the model (or whoever injected text into it) reach anything.",
        _SPEC_SECURITY,
        "narrow it (an enum, a pattern, a format) or take structured fields and build the command in code",
    ),
    LintRule(
        "TK401",
        "unbounded-output",
        "warning",
        "A list or text result with no bound and no way to page floods the model's context.",
        _ANTHROPIC_AGENTS,
        "add a limit (and a cursor or offset) parameter, or bound the result",
    ),
    LintRule(
        "TK402",
        "output-over-budget",
        "error",
        "A result larger than the budget is cut off or refused by clients, and crowds out the conversation.",
        _CLAUDE_CODE,
        "return less by default: page, filter or summarise",
    ),
    LintRule(
        "TK501",
        "protocol-error-for-failure",
        "error",
        "A failed run reported as a JSON-RPC error instead of a result with isError reaches the model without the "
        "text it needs to correct itself.",
        _SPEC_TOOLS + "#error-handling",
        "raise ToolError('what went wrong and what to do') (a result with isError)",
    ),
    LintRule(
        "TK601",
        "too-many-parameters",
        "warning",
        "A tool with a dozen parameters is several tools in one; the model fills in the wrong ones.",
        _OPENAI,
        "split it into tools that each do one thing",
    ),
    LintRule(
        "TK602",
        "operation-switch",
        "warning",
        "An action parameter that chooses between reading and changing things makes one tool of unrelated "
        "operations whose hints cannot be true of all of them.",
        _ISSUE,
        "split it: one tool per operation, each with its own hints",
    ),
    LintRule(
        "TK701",
        "undeclared-origin",
        "error",
        "A host blocks every origin a page's CSP does not declare: a script or style the page loads from elsewhere "
        "never arrives, and the page that worked as a file is blank in the host.",
        _SPEC_APPS,
        "declare the origin in UI(csp={'resourceDomains': [...]}), or serve the file inline",
    ),
    LintRule(
        "TK702",
        "app-only-without-page",
        "error",
        "A tool only an app may call is listed to no model, and no tool a model calls opens a page: nothing can "
        "ever call it.",
        _SPEC_APPS,
        "give the tool the model calls ui= of the page that calls this one, or drop visibility=['app']",
    ),
    LintRule(
        "TK703",
        "unlinked-page",
        "warning",
        "A ui:// page no tool names is never rendered, and a tool that names a page the server does not serve "
        "gets no page (hosts read it with resources/read).",
        _SPEC_APPS,
        "name the page with @tool(ui=UI(...)), which also serves it",
    ),
)

_BY_CODE = {r.code: r for r in RULES}
#: Where a message sends a user for the codes: what an installed package has (not a path in toolkit's repository).
_THE_CODES = "the codes: " + ", ".join(_BY_CODE)


@dataclass(frozen=True)
class Finding:
    """One rule broken by one tool."""

    rule: LintRule
    tool: str
    message: str
    location: str | None = None
    """`path:line` of a local tool's function; None for a tool listed by a server."""

    @property
    def where(self) -> str:
        """`path:line` for a local tool, its name for a remote one."""
        return self.location or self.tool

    def __str__(self) -> str:
        # A local line names its tool too: the tools a factory makes share their function's line.
        if self.location:
            return f"{self.location}: {self.rule.code} [{self.tool}] {self.message}"
        return f"{self.tool}: {self.rule.code} {self.message}"

    def to_json(self) -> dict[str, Any]:
        """The finding as a JSON object (for `toolkit lint --format json`)."""
        return {
            "code": self.rule.code,
            "name": self.rule.name,
            "level": self.rule.level,
            "tool": self.tool,
            "location": self.location,
            "message": self.message,
            "hint": self.rule.hint,
            "source": self.rule.source,
        }


# -- the words the rules read ------------------------------------------------------------------------------------


def _vocabulary(text: str) -> frozenset[str]:
    return frozenset(text.split())


_DESTROYS = _vocabulary(
    "delete remove drop purge truncate erase destroy wipe overwrite kill terminate revoke reset uninstall unlink rm "
    "rmdir clear cancel"
)
_SENDS = _vocabulary("send pay transfer publish post email notify charge refund purchase buy tweet wire")
_CREATES = _vocabulary(
    "create add insert new append post send book upload register push fork submit enqueue schedule make open pay "
    "transfer publish"
)
_UPSERTS = re.compile(
    r"\b(upsert|or update|or replace|overwrites?|if it exists|create or|or creates?|set|already exists)\b"
)
_READS = _vocabulary(
    "list search find read fetch query dump export tree logs history scan grep download crawl scrape browse tail get "
    "show view count describe status info check"
)
_FLOODS = _vocabulary("list search find read fetch query dump scan grep download crawl scrape browse")
_FLOOD_NOUNS = _vocabulary("tree logs history dump")  # big wherever they stand: directory_tree, get_logs
_LISTS = _vocabulary("list search find query tree scan grep history logs")
_WHOLE = re.compile(r"\b(entire|whole)\b")  # "Read the entire knowledge graph"
_OUTSIDE = _vocabulary(
    "fetch download browse scrape crawl web url http https website webpage internet email emails mail inbox rss feed "
    "file files"
)
_PAGING = _vocabulary(
    "limit max page cursor offset size per top count head tail first last length chars lines tokens range start end "
    "depth n k num"
)
_BOUNDED_TEXT = re.compile(r"\b(truncat\w*|at most|up to \d+|paginat\w*|first \d+|limit(ed)? to)\b")
# Paging parameters every model knows; an enum's values say what a parameter takes (tuned on the reference servers).
_SELF_EXPLAINED = _vocabulary("page per_page perpage limit offset cursor id name title url urls email query owner repo")
_GENERIC = _vocabulary("helper utility utilities stuff misc miscellaneous things various generic")
_STOP = _vocabulary(
    "a an the of to for and or in on by with from this that it its is are be tool function method returns return given"
)
_SWITCHES = _vocabulary("action mode operation op command cmd method verb task")
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_SQL = re.compile(r"\bsql\b|\bselect statement|\bdatabase query", re.IGNORECASE)
_SHELL = re.compile(r"\b(shell|bash|terminal|command[- ]line)\b", re.IGNORECASE)
#: The Context's methods that ask the user: a tool whose code calls one confirms in its own way (TK203).
_ASKS = frozenset({"confirm", "elicit"})

_PROTOCOL_ERRORS = frozenset({"ProtocolError", "MessageError", "McpError", "JSONRPCError", "JsonRpcError"})

#: More top-level parameters than this is a tool doing several jobs.
MAX_PARAMETERS = 15
#: Fewer words than this is too short to choose a tool by.
MIN_WORDS = 3
#: Descriptions at least this similar (difflib's ratio over their words) are near duplicates.
DUPLICATE_RATIO = 0.9
#: A tool that scores at least this share of another's score for the other's own words, and the other for its own
#: words likewise, is indistinguishable from it to a search (TK107).
SEARCH_TIE = 0.9


def _words(text: str) -> list[str]:
    """Lower-case words of a name or text: `readFile`, `read_file` and `read-file` give `["read", "file"]`."""
    return [w.lower() for w in _WORD.findall(text)]


def _prose(text: str) -> list[str]:
    """Lower-case words of prose (no camelCase split: `WebP` is one word)."""
    return re.findall(r"[a-z0-9]+", text.lower())


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s|\n\n", text.strip(), maxsplit=1)[0]


def _says(tool: Mapping[str, Any], vocabulary: frozenset[str]) -> list[str]:
    """The verbs of `vocabulary` the tool's name or description starts with: the name's first two words (a
    namespace may come first: `slack_post_message`), the description's first word ("Deletes a file ...")."""
    found = [w for w in _words(str(tool.get("name", "")))[:2] if w in vocabulary]
    for word in _leading_verb(str(tool.get("description") or "")):
        if word in vocabulary and word not in found:
            found.append(word)
    return found


def _leading_verb(description: str) -> list[str]:
    """The description's first word ("Deletes a file ..."), stemmed then as written; nothing for no description."""
    first = _prose(_first_sentence(description))[:1]
    return [*(_stem(word) for word in first), *first]


# -- the rules, over one tool's wire definition -----------------------------------------------------------------


def _description_findings(tool: Mapping[str, Any]) -> list[tuple[str, str]]:
    description = str(tool.get("description") or "").strip()
    name = str(tool.get("name", ""))
    if not description:
        return [("TK101", "has no description")]
    all_words = _prose(description)
    content = {_stem(w) for w in all_words if w not in _STOP}
    if content and content <= {_stem(w) for w in _words(name)}:
        return [("TK103", f"description {description!r} only restates the name")]
    return [*_short_description(description, all_words), *_generic_description(description, all_words, content)]


def _short_description(description: str, all_words: Sequence[str]) -> list[tuple[str, str]]:
    """TK102: a description of fewer than `MIN_WORDS` words."""
    if len(all_words) >= MIN_WORDS:
        return []
    plural = "" if len(all_words) == 1 else "s"
    return [("TK102", f"description {description!r} is {len(all_words)} word{plural}")]


def _generic_description(description: str, all_words: Sequence[str], content: set[str]) -> list[tuple[str, str]]:
    """TK104: generic words that leave little else: "A helper for various order things" (not "... using various
    methods (from file or using subcommands)", where "various" qualifies a precise description)."""
    generic = sorted(_GENERIC & set(all_words))
    if not generic:
        return []
    if len(content - _GENERIC - {_stem(w) for w in _GENERIC}) > 3:
        return []
    return [("TK104", f"description {description!r} is generic ({', '.join(generic)})")]


def _parameters(tool: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    schema = tool.get("inputSchema") or {}
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return {k: v for k, v in (props or {}).items() if isinstance(v, Mapping)}


def _parameter_findings(tool: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = [
        ("TK105", f"parameter {name!r} has no description")
        for name, schema in _parameters(tool).items()
        if not schema.get("description") and "enum" not in schema and name.lower() not in _SELF_EXPLAINED
    ]
    for name, schema in _parameters(tool).items():
        kind = _surface(name, schema)
        if kind:
            out.append(
                ("TK301", f"parameter {name!r} is a free-form string used as {kind}, with no enum, pattern or format")
            )
    return out


def _free_string(schema: Mapping[str, Any]) -> bool:
    """A string (or list of strings) nothing narrows: no enum, const, pattern or format."""
    inner = _wrapped(schema)
    if inner is not None:
        return _free_string(inner)
    if not _string_typed(schema.get("type")):
        return False
    return not any(key in schema for key in ("enum", "const", "pattern", "format"))


def _wrapped(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The schema of the value `schema` only wraps: an array's items, or the one member of a typeless `anyOf` that
    is not null (`Optional[str]`); None when it wraps nothing."""
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, Mapping):
        return items
    if schema.get("type") is not None:
        return None
    members = [m for m in schema.get("anyOf") or () if isinstance(m, Mapping) and m.get("type") != "null"]
    return members[0] if len(members) == 1 else None


def _string_typed(kinds: Any) -> bool:
    """Whether a schema's `type` is a string, or a string or null (`"string"`, `["string", "null"]`)."""
    if isinstance(kinds, str):
        kinds = [kinds]
    if not isinstance(kinds, list) or "string" not in kinds:
        return False
    return not set(kinds) - {"string", "null"}


def _surface(name: str, schema: Mapping[str, Any]) -> str | None:
    """What a free-form string parameter is used as, by its name and description: SQL, a shell command, a path, a
    URL; None when it is none of them, or narrowed."""
    if not _free_string(schema):
        return None
    named = set(_words(name)) | {_stem(w) for w in _words(name)}
    text = str(schema.get("description") or "")
    if _runs_sql(named, text):
        return "SQL"
    if _runs_command(named, text):
        return "a command or script"
    if named & {"path", "filepath", "filename", "file", "dir", "directory", "folder"}:
        return "a path"
    if _fetches_url(named, text):
        return "a URL"
    return None


def _runs_sql(named: set[str], text: str) -> bool:
    """A parameter named sql, or a query, statement or clause its description calls SQL."""
    if "sql" in named:
        return True
    return bool(named & {"query", "statement", "where", "clause"}) and _SQL.search(text) is not None


def _runs_command(named: set[str], text: str) -> bool:
    """A parameter named for a command or script, or one its description calls a shell command."""
    if named & {"command", "cmd", "shell", "script", "bash", "commandline"}:
        return True
    return _SHELL.search(text) is not None and "command" in _prose(text)


def _fetches_url(named: set[str], text: str) -> bool:
    """A parameter named for a URL, or one its description calls a URL (unless it is named a name or an id)."""
    if named & {"url", "uri", "link", "href", "endpoint"}:
        return True
    if named & {"name", "id"}:
        return False
    return "url" in _prose(text)


def _hint_findings(tool: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The annotations that contradict what the name and description say (TK201, TK202, TK204, TK205)."""
    hints: Mapping[str, Any] = tool.get("annotations") or {}
    return [
        *_harmless_hint_findings(tool, hints),
        *_closed_world_findings(tool, hints),
        *_idempotent_findings(tool, hints),
    ]


def _harmless_hint_findings(tool: Mapping[str, Any], hints: Mapping[str, Any]) -> list[tuple[str, str]]:
    """TK201 or TK202: a tool that says it deletes, overwrites, sends or pays, marked read-only or not destructive."""
    destroys = _says(tool, _DESTROYS | _SENDS)
    if not destroys:
        return []
    if hints.get("readOnlyHint") is True:
        return [("TK201", f"is marked read-only, but its name or description says it does: {', '.join(destroys)}")]
    if hints.get("destructiveHint") is False:
        return [("TK202", f"is marked not destructive, but its name or description says: {', '.join(destroys)}")]
    return []


def _closed_world_findings(tool: Mapping[str, Any], hints: Mapping[str, Any]) -> list[tuple[str, str]]:
    """TK204: a tool marked closed-world that reads from outside (the web, mail, files)."""
    if hints.get("openWorldHint") is not False:
        return []
    said = set(_words(str(tool.get("name", "")))) | set(_prose(_first_sentence(str(tool.get("description") or ""))))
    outside = sorted(_OUTSIDE & said)
    if not outside:
        return []
    if hints.get("readOnlyHint") is not True and not _says(tool, _READS):
        return []  # it does not read
    return [("TK204", f"is marked closed-world (open_world=False), but it reads outside content: {', '.join(outside)}")]


def _idempotent_findings(tool: Mapping[str, Any], hints: Mapping[str, Any]) -> list[tuple[str, str]]:
    """TK205: a tool marked idempotent that creates or sends, unless it says it upserts."""
    if hints.get("idempotentHint") is not True:
        return []
    if hints.get("readOnlyHint") is True:
        return []  # a read-only tool's "add" is arithmetic, not a new record
    creates = _says(tool, _CREATES)
    text = f"{tool.get('name', '')} {tool.get('description') or ''}".replace("_", " ").lower()
    if not creates or _UPSERTS.search(text):
        return []
    return [("TK205", f"is marked idempotent, but it {'/'.join(creates)}s: a retry makes a second one")]


def _list_unbounded(schema: Any, reads: bool) -> bool:
    """A list with no maxItems: the result itself (or toolkit's `{"result": [...]}`), or, for a tool that reads or
    lists, a top-level field of its result object (`{"files": [...]}`)."""
    if not isinstance(schema, Mapping):
        return False
    if schema.get("type") == "array":
        return "maxItems" not in schema
    props = schema.get("properties") or {}
    if list(props) == ["result"]:
        return _list_unbounded(props["result"], reads=False)
    return reads and any(
        isinstance(p, Mapping) and p.get("type") == "array" and "maxItems" not in p for p in props.values()
    )


def _text_unbounded(schema: Any) -> bool:
    """Text with no maxLength: no output schema (content blocks), a string, or an object of one string field
    (`{"content": "..."}`)."""
    if not isinstance(schema, Mapping):
        return schema is None
    props = schema.get("properties") or {}
    if schema.get("type") == "object" and len(props) == 1:
        return _text_unbounded(next(iter(props.values())))
    return schema.get("type") == "string" and "maxLength" not in schema


def _output_findings(tool: Mapping[str, Any], returns: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """TK401: an unbounded list result, or text from a tool that reads or lists, with nothing to page by."""
    if _bounds_result(tool):
        return []
    output = returns if returns is not None else tool.get("outputSchema")
    reads = _big_reads(_words(str(tool.get("name", ""))))
    if _list_unbounded(output, _reads_lists(tool, reads)):
        return [("TK401", "returns a list with no maxItems and takes no limit, page or cursor parameter")]
    if reads and _text_unbounded(output):
        return [("TK401", f"returns content of any size ({reads[0]}) and takes no limit, page or cursor parameter")]
    return []


def _bounds_result(tool: Mapping[str, Any]) -> bool:
    """Whether the tool bounds what it returns: a parameter to page by (limit, cursor, offset ...), or a description
    that says the result is bounded ("truncated", "at most", "first 100")."""
    params = {word for parameter in _parameters(tool) for word in _words(parameter)}
    if params & _PAGING:
        return True
    return _BOUNDED_TEXT.search(str(tool.get("description") or "").lower()) is not None


def _big_reads(name: Sequence[str]) -> list[str]:
    """The words of a tool's name that say it reads something big: a reading verb anywhere but last
    (`simulate_research_query` is a noun) unless it is the only word, and a noun that is always big anywhere."""
    verbs = name if len(name) == 1 else name[:-1]
    return [w for w in verbs if w in _FLOODS] + [w for w in name if w in _FLOOD_NOUNS]


def _reads_lists(tool: Mapping[str, Any], reads: Sequence[str]) -> bool:
    """Whether a tool that reads returns its lists in fields of its result: it lists or searches, or it reads "the
    entire" or "the whole" of something."""
    if set(reads) & _LISTS:
        return True
    if not reads:
        return False
    return _WHOLE.search(_first_sentence(str(tool.get("description") or "")).lower()) is not None


def _shape_findings(tool: Mapping[str, Any]) -> list[tuple[str, str]]:
    """TK601: too many parameters; TK602: a parameter that switches between operations of different effects."""
    params = _parameters(tool)
    out: list[tuple[str, str]] = []
    if len(params) > MAX_PARAMETERS:
        out.append(("TK601", f"takes {len(params)} parameters (more than {MAX_PARAMETERS})"))
    for name, schema in params.items():
        out += _switch_findings(name, schema)
    return out


def _switch_findings(name: str, schema: Mapping[str, Any]) -> list[tuple[str, str]]:
    """TK602: a parameter named for an action or mode whose values destroy, change or read, more than one of those."""
    if not set(_words(name)) & _SWITCHES:
        return []
    values = [v for v in schema.get("enum") or () if isinstance(v, str)]
    kinds = sorted({kind for kind in map(_effect, values) if kind is not None})
    if len(kinds) <= 1:
        return []
    return [
        ("TK602", f"parameter {name!r} switches between operations that {' and '.join(kinds)}: {', '.join(values)}")
    ]


def _effect(value: str) -> str | None:
    found = {_stem(w) for w in _words(value)} | set(_words(value))
    if found & _DESTROYS:
        return "destroy"
    if found & (_CREATES | {"update", "edit", "write", "rename", "move", "modify", "patch", "set", "change"}):
        return "change"
    if found & _READS:
        return "read"
    return None


def _duplicates(tools: Sequence[Mapping[str, Any]]) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    seen: list[tuple[str, list[str], frozenset[str]]] = []
    for tool in tools:
        text = _prose(str(tool.get("description") or ""))
        name = str(tool.get("name", ""))
        distinct = frozenset(text)
        if len(text) >= MIN_WORDS:
            for other, other_text, other_distinct in seen:
                # A word of one text missing from the other is unmatched in each of its places, and difflib's ratio
                # leaves at most (1 - ratio) of all words unmatched: a set operation rules most pairs out (a server
                # of hundreds of tools compares every pair) before the ratio itself.
                if len(distinct ^ other_distinct) > (1 - DUPLICATE_RATIO) * (len(text) + len(other_text)):
                    continue
                if difflib.SequenceMatcher(None, other_text, text, autojunk=False).ratio() >= DUPLICATE_RATIO:
                    same = f"description is nearly the same as the description of {other!r}"
                    out.setdefault(name, []).append(("TK106", same))
                    break
        seen.append((name, text, distinct))
    return out


# -- MCP Apps: the pages and the tools that open and call them -----------------------------------------------------


@dataclass(frozen=True)
class Page:
    """An MCP Apps page as lint reads it: its HTML and its `_meta.ui` (the CSP it declares)."""

    html: str
    ui: Mapping[str, Any]


def _ui_of(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = tool.get("_meta")
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    return ui if isinstance(ui, Mapping) else {}


def _page_of(tool: Mapping[str, Any]) -> str | None:
    uri = _ui_of(tool).get("resourceUri")
    return uri if isinstance(uri, str) else None


def _app_only(tool: Mapping[str, Any]) -> bool:
    visibility = _ui_of(tool).get("visibility")
    return isinstance(visibility, list) and "model" not in visibility


def _apps_findings(
    tools: Sequence[Mapping[str, Any]], pages: Mapping[str, Page] | None
) -> dict[str, list[tuple[str, str]]]:
    """TK701 on the first tool that opens a page loading from undeclared origins; TK702 on each app-only tool of
    a server where no tool the model calls opens a page; TK703 on a tool naming a page that is not served."""
    out: dict[str, list[tuple[str, str]]] = {}
    opened = any(_opens_page(tool) for tool in tools)
    checked: set[str] = set()
    for tool in tools:
        found = out.setdefault(str(tool.get("name", "?")), [])
        if _app_only(tool) and not opened:
            found.append(("TK702", "is app-only (visibility ['app']), and no tool the model calls opens a page"))
        uri = _page_of(tool)
        if uri is not None and pages is not None:
            found += _named_page_findings(uri, pages, checked)
    return out


def _opens_page(tool: Mapping[str, Any]) -> bool:
    """Whether the tool is one the model calls, and opens a page."""
    if _app_only(tool):
        return False
    return bool(_page_of(tool))


def _named_page_findings(uri: str, pages: Mapping[str, Page], checked: set[str]) -> list[tuple[str, str]]:
    """TK703 for a page the server does not serve; TK701 for what a served page loads from undeclared origins, the
    first time a tool names it (`checked` holds the pages already read, and gains this one)."""
    page = pages.get(uri)
    if page is None:
        return [("TK703", f"names the page {uri}, which the server does not serve")]
    if uri in checked:
        return []
    checked.add(uri)
    return [("TK701", f"{uri} {problem}") for problem in _undeclared(page)]


def _undeclared(page: Page) -> list[str]:
    """What the page loads (scripts, stylesheets) from origins its CSP's `resourceDomains` does not declare."""
    from html.parser import HTMLParser  # only for servers with pages

    csp = page.ui.get("csp")
    declared = [str(origin) for origin in (csp.get("resourceDomains") or [])] if isinstance(csp, Mapping) else []
    loads: list[str] = []

    class Loads(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            values = dict(attrs)
            if tag == "script" and values.get("src"):
                loads.append(str(values["src"]))
            elif tag == "link" and "stylesheet" in (values.get("rel") or "").lower().split() and values.get("href"):
                loads.append(str(values["href"]))

    Loads().feed(page.html)
    loads += re.findall(r"@import\s+(?:url\()?\s*['\"]?([^'\")\s;]+)", page.html)
    problems = []
    for url in loads:
        origin = _origin(url)
        if origin is not None and not any(_allows(pattern, origin) for pattern in declared):
            problems.append(f"loads {url} from {origin}, which its csp's resourceDomains does not declare")
    return problems


def _origin(url: str) -> str | None:
    """`scheme://host[:port]` of an absolute (or protocol-relative, taken as https) URL; None for a relative one."""
    match = re.match(r"^(?:(https?|wss?):)?//([^/?#]+)", url.strip(), re.IGNORECASE)
    if match is None:
        return None
    return f"{(match[1] or 'https').lower()}://{match[2].lower()}"


def _allows(pattern: str, origin: str) -> bool:
    """Whether a declared origin (`https://cdn.example.com`, `https://*.example.com`) covers `origin`."""
    pattern = pattern.rstrip("/").lower()
    if "://*." in pattern:
        scheme, _, suffix = pattern.partition("://*.")
        return origin.startswith(f"{scheme}://") and origin.endswith(f".{suffix}")
    return origin == pattern


def _search_ties(tools: Sequence[Mapping[str, Any]], reported: Mapping[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """TK107: each tool that a search for its own words (name, title, description) cannot tell from an earlier one,
    and the earlier one likewise; reported on the later of the pair, unless TK106 already says so."""
    named = [tool for tool in tools if isinstance(tool.get("name"), str)]
    if len({tool["name"] for tool in named}) != len(named):
        return {}  # two tools of one name: a server refuses that before lint could matter
    own = _own_searches(named)
    order = {name: position for position, name in enumerate(own)}
    out: dict[str, list[tuple[str, str]]] = {}
    for name in own:
        if name in reported:
            continue  # TK106 says so already
        other = _earlier_tie(own, order, name)
        if other is not None:
            out[name] = [("TK107", f"a search for what it does finds {other!r} as readily, and the reverse")]
    return out


def _own_searches(tools: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """For each tool (of distinct names), the scores of a search for its own words over all the tools."""
    index = ToolIndex(tools, threshold=0.0)
    names = [str(tool["name"]) for tool in tools]
    return {str(tool["name"]): _search_scores(index, tool, names) for tool in tools}


def _earlier_tie(own: Mapping[str, Mapping[str, float]], order: Mapping[str, int], name: str) -> str | None:
    """The first tool before `name` (by `order`) that a search for `name`'s words finds as readily as `name`, and
    the reverse; None when there is none, or when that search does not find `name` itself."""
    if not own[name].get(name):
        return None
    for other in own[name]:
        if order[other] >= order[name]:
            continue  # reported on the later of the pair
        if _finds_as_readily(own, name, other) and _finds_as_readily(own, other, name):
            return other
    return None


def _finds_as_readily(own: Mapping[str, Mapping[str, float]], searched: str, other: str) -> bool:
    """Whether a search for `searched`'s own words scores `other` at least `SEARCH_TIE` times `searched` itself."""
    scores = own[searched]
    return scores.get(other, 0.0) >= SEARCH_TIE * scores.get(searched, 0.0)


def _search_scores(index: ToolIndex, tool: Mapping[str, Any], names: Sequence[str]) -> dict[str, float]:
    """The scores of a search for `tool`'s own words, less the names of other tools it mentions ("use find_orders
    first" says how it differs, not that it is the same)."""
    text = " ".join(str(tool.get(key) or "") for key in ("title", "description"))
    for other in names:
        if other in text and other != tool["name"]:
            text = text.replace(other, " ")
    # Compared as the evidence each tool matches (the score before it is squashed into 0 to 1: s / (1 - s)).
    # The name's words, not the name as one term: that one term finds the tool itself and says nothing of what it does.
    words = " ".join(_words(str(tool["name"])))
    return {name: score / (1.0 - score) for name, score in index.scores(f"{words} {text}").items()}


# -- what only a local tool's code says ---------------------------------------------------------------------------


def location(tool: Tool[Any, Any]) -> str | None:
    """`path:line` of the tool's function (the line of its first decorator), the path relative to the current
    directory when below it."""
    fn = inspect.unwrap(tool.fn.func if isinstance(tool.fn, functools.partial) else tool.fn)
    code = getattr(fn, "__code__", None) or getattr(getattr(fn, "__call__", None), "__code__", None)  # noqa: B004
    if code is None:  # a built-in: no source to point at
        return None
    path = code.co_filename
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive, on Windows
        relative = path
    return f"{path if relative.startswith('..') else relative}:{code.co_firstlineno}"


def _returns(tool: Tool[Any, Any]) -> Mapping[str, Any] | None:
    """The shape of what the function returns, from its annotation: toolkit sends no output schema for `str` or
    `list[str]` (unless `structured=True`), but its code says."""
    if tool.output_schema is not None:
        return tool.output_schema
    try:
        annotation = typing.get_type_hints(inspect.unwrap(tool.fn)).get("return")
    except Exception:  # a name that does not resolve here: say nothing rather than guess
        return None
    origin = typing.get_origin(annotation) or annotation
    if origin is str:
        return {"type": "string"}
    if isinstance(origin, type) and issubclass(origin, (list, tuple, set, frozenset, collections.abc.Sequence)):
        return {"type": "array"}
    return None


def _source(tool: Tool[Any, Any]) -> ast.AST | None:
    """The syntax tree of the tool's function, or None when its source cannot be read."""
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(tool.fn)))
    except (OSError, TypeError, SyntaxError):
        return None


def _raises_protocol_error(tree: ast.AST) -> str | None:
    """The protocol-level exception the tool's own code raises, if any (toolkit sends it as an opaque failure)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
            if name in _PROTOCOL_ERRORS:
                return str(name)
    return None


def _asks_in_code(tree: ast.AST) -> bool:
    """Whether the tool's own code asks its user (`ctx.confirm(...)`, `ctx.elicit(...)`), as `confirm=` does."""
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _ASKS
        for node in ast.walk(tree)
    )


def _local_findings(tool: Tool[Any, Any], wire: Mapping[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    tree = _source(tool)
    destroys = _says(wire, _DESTROYS | _SENDS)
    read_only = (wire.get("annotations") or {}).get("readOnlyHint") is True
    if destroys and not tool.confirms and not read_only and not (tree is not None and _asks_in_code(tree)):
        out.append(("TK203", f"{'/'.join(destroys)}s without asking the user (no confirm=)"))
    raised = _raises_protocol_error(tree) if tree is not None else None
    if raised:
        out.append(("TK501", f"raises {raised} for a failed run; clients get an opaque error, not its text"))
    return out


# -- running them ---------------------------------------------------------------------------------------------------


def lint_definitions(
    tools: Sequence[Mapping[str, Any]],
    local: Mapping[str, Tool[Any, Any]] | None = None,
    pages: Mapping[str, Page] | None = None,
) -> list[Finding]:
    """Every finding of every rule that reads definitions, tool by tool, in the order of `tools`.

    Args:
        tools: The tools in wire form, as `tools/list` returns them.
        local: The toolkit tools by name, when the tools are this process's: their findings are located at their
            function, include what only their code says, and leave out what their `lint_ignore=` silences.
        pages: The server's MCP Apps pages by `ui://` URI, when known: their HTML and `_meta.ui`.
    """
    duplicates = _duplicates(tools)
    apps = _apps_findings(tools, pages)
    ties = _search_ties(tools, duplicates)
    out: list[Finding] = []
    for wire in tools:
        name = str(wire.get("name", "?"))
        tool = (local or {}).get(name)
        if tool is None:
            local_findings: list[tuple[str, str]] = []
            returns = None
        else:
            local_findings, returns = _local_findings(tool, wire), _returns(tool)
        found = [
            *_description_findings(wire),
            *duplicates.get(name, []),
            *ties.get(name, []),
            *_parameter_findings(wire),
            *_hint_findings(wire),
            *local_findings,
            *_output_findings(wire, returns),
            *_shape_findings(wire),
            *apps.get(name, []),
        ]
        out += _reported(name, found, tool)
    return out + _unnamed_pages(tools, pages or {})


def _reported(name: str, found: Sequence[tuple[str, str]], tool: Tool[Any, Any] | None) -> list[Finding]:
    """One tool's findings as reported: for a local tool, located at its function, less those its `lint_ignore=`
    silences, and a TK001 for each of its silences that silences nothing."""
    if tool is None:
        return [Finding(_BY_CODE[code], name, message) for code, message in found]
    where = location(tool)
    return [
        *(Finding(_BY_CODE[code], name, message, where) for code, message in found if code not in tool.lint_ignore),
        *(
            Finding(_BY_CODE["TK001"], name, f"lint_ignore silences {code}, {_stale(code)}", where)
            for code in _stale_silences(tool.lint_ignore, found)
        ),
    ]


def _stale_silences(silenced: Iterable[str], found: Sequence[tuple[str, str]]) -> list[str]:
    """TK001: the codes silenced that no finding has, less those only `--call` finds (the definitions cannot show
    that such a silence is stale)."""
    fired = {code for code, _ in found}
    return [code for code in silenced if code not in fired and code not in _MEASURED]


def _unnamed_pages(tools: Sequence[Mapping[str, Any]], pages: Mapping[str, Page]) -> list[Finding]:
    """TK703 for each page no tool names."""
    named = {_page_of(wire) for wire in tools}
    return [
        Finding(_BY_CODE["TK703"], uri, "is a page no tool names (no _meta.ui.resourceUri): no host renders it")
        for uri in pages
        if uri not in named
    ]


#: What only `--call` finds: a silence of it is not stale when the definitions alone do not show it.
_MEASURED = frozenset({"TK402"})


def _stale(code: str) -> str:
    return "which finds nothing here" if code in _BY_CODE else f"which is no rule ({_THE_CODES})"


def lint(target: Server | Tool[Any, Any] | Iterable[Tool[Any, Any]]) -> list[Finding]:
    """Every finding of a server's tools (or of some tools), as the server lists them, with what their code says."""
    if isinstance(target, Server):
        tools = list(target.tools.values())
    elif isinstance(target, Tool):
        tools = [target]
    else:
        tools = list(target)
    wire = [t.definition.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    pages = {t.ui.uri: Page(t.ui.html, t.ui.meta) for t in tools if t.ui is not None}
    # A mounted server's tool (`Server.mount`) has no code here to read: it is linted by its definition alone.
    return lint_definitions(wire, {t.name: t for t in tools if not t.forwards}, pages)


def measured_findings(
    tool: str,
    result: Mapping[str, Any] | None,
    error: tuple[int, str] | None,
    budget: int = DEFAULT_BUDGET,
    where: str | None = None,
) -> list[Finding]:
    """What one real call showed (`toolkit lint --call`): a protocol error for the run, or a result over `budget`
    tokens (the characters a model reads, divided by 4, as `toolkit docs` estimates definitions).

    Args:
        tool: The tool's name.
        result: The `tools/call` result as JSON, or None when the call failed with a protocol error.
        error: The protocol error's code and message, when there was one.
        budget: The most tokens a result may take.
        where: `path:line` of a local tool's function.
    """
    if error is not None and error[0] == URL_ELICITATION_REQUIRED:
        return []  # the spec's answer for a call that needs the user on a web page first, not a failure
    if error is not None:
        code, message = error
        return [Finding(_BY_CODE["TK501"], tool, f"answered a call with a protocol error ({code}: {message})", where)]
    chars = _result_size(result or {})
    tokens = math.ceil(chars / 4)
    if tokens <= budget:
        return []
    return [
        Finding(
            _BY_CODE["TK402"],
            tool,
            f"returned ≈ {tokens:,} tokens ({chars:,} characters), over the budget of {budget:,}",
            where,
        )
    ]


def _result_size(result: Mapping[str, Any]) -> int:
    """Characters a model reads of a result: its text (text blocks, embedded text resources) or its structured
    content, whichever is larger (a client passes one or the other); images and audio are not text and are left out."""
    text = 0
    for block in result.get("content") or ():
        resource = block.get("resource")
        text += len(str(block.get("text", ""))) + (len(str(resource.get("text", ""))) if resource else 0)
    structured = result.get("structuredContent")
    size = len(json.dumps(structured, ensure_ascii=False, separators=(",", ":"))) if structured is not None else 0
    return max(text, size)


def check_codes(codes: Sequence[str]) -> None:
    """Refuse codes and prefixes that name no rule: a typo would otherwise select or ignore nothing, silently.

    Raises:
        ValueError: one names no rule.
    """
    unknown = [code for code in codes if not any(r.code.startswith(code) for r in RULES)]
    if unknown:
        raise ValueError(f"no lint rule has the code {', '.join(map(repr, unknown))} ({_THE_CODES})")


def select(findings: Iterable[Finding], chosen: Sequence[str] = (), ignored: Sequence[str] = ()) -> list[Finding]:
    """The findings whose code starts with one of `chosen` (all when empty) and with none of `ignored`: `TK3`
    selects every input rule, `TK301` one rule.

    Raises:
        ValueError: a code or prefix that names no rule (a typo would otherwise select nothing, silently).
    """
    check_codes([*chosen, *ignored])
    return [
        f
        for f in findings
        if (not chosen or f.rule.code.startswith(tuple(chosen))) and not f.rule.code.startswith(tuple(ignored))
    ]
