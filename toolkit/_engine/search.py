"""Tool search over MCP (`Server(tool_search=...)`): `tools/list` lists the pinned tools and two tools of the
server's own, `search_tools(query)`, which answers with the definitions of the tools that match, and
`call_tool(name, arguments)`, which calls one of them.

A `call_tool` call is the found tool's own `tools/call`: `unwrap` rewrites its params into those of a direct call
(`name` and `arguments` from its arguments, everything else, `_meta`, `task`, a retry's `requestState`, kept), and the
connection serves that as it serves any call, through the server's middleware, the tool's validation, `confirm=`,
tasks and errors, in both eras. Only what cannot become a call (no name, a tool this caller cannot see, arguments
that are no object) is answered here, as a tool error the model can read and correct.

Visibility (`tool_filter`) applies to everything: a search finds only the tools its caller may see, and `call_tool` of
another is refused exactly as an unknown tool is.

A server's `schema_profile` adapts the two tools as it adapts every tool. A strict profile closes every object, so no
schema there says "any object": `call_tool` then takes the found tool's arguments as JSON text, decoded here.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from toolkit._definition.tool import error_wire
from toolkit._protocol.jsonrpc import decode, encode
from toolkit._protocol.revisions import shape_tool
from toolkit._search import DEFAULT_THRESHOLD, ToolIndex

if TYPE_CHECKING:
    from toolkit._definition.tool import Tool

__all__ = ["Listing", "Search", "Shown", "ToolSearch", "search_option"]

Shown = Callable[["Tool[Any, Any]", dict[str, Any]], bool]
"""Whether the caller of a request may see a tool, the request's params given (`tool_filter`, applied by the caller of
`Search`: `_engine/middleware.py`'s `visibility`)."""


class Listing(Protocol):
    """What the search reads of its server (the `Registry`, a floor above)."""

    @property
    def tools(self) -> Mapping[str, Tool[Any, Any]]: ...

    @property
    def schema_profile(self) -> str | None: ...

    def tool_payloads(self, version: str) -> list[str]: ...


_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")  # SEP-986's tool name characters


@dataclass(frozen=True)
class ToolSearch:
    """The options of `Server(tool_search=ToolSearch(...))` (`tool_search=True` takes these defaults).

    ```python
    from toolkit import Server, ToolSearch

    server = Server("many", tool_search=ToolSearch(limit=3, pinned=["help"]))
    ```

    Raises:
        ValueError: a limit under 1, a threshold outside [0, 1], a name that is no valid tool name, or the two
            tools given one name.
    """

    limit: int = 5
    """The most tools one search returns."""
    pinned: Sequence[str] = field(default=())
    """Tools listed by `tools/list` beside the two search tools (those a model needs at once); every tool, pinned or
    not, stays callable by name and findable."""
    search_name: str = "search_tools"
    """The name of the tool that searches."""
    call_name: str = "call_tool"
    """The name of the tool that calls a tool found."""
    threshold: float = DEFAULT_THRESHOLD
    """The least score (0 to 1) a tool must reach to be found (docs/search.md measures the trade-off)."""

    def __post_init__(self) -> None:
        if isinstance(self.pinned, str):
            raise TypeError("pinned takes a list of tool names, not one string")
        object.__setattr__(self, "pinned", tuple(self.pinned))
        problems = []
        if type(self.limit) is not int or self.limit < 1:
            problems.append(f"limit must be an int of at least 1, got {self.limit!r}")
        if not 0.0 <= self.threshold <= 1.0:
            problems.append(f"threshold must be between 0 and 1, got {self.threshold!r}")
        for name in (self.search_name, self.call_name, *self.pinned):
            if not isinstance(name, str) or not _TOOL_NAME.match(name):
                problems.append(f"{name!r} is no valid tool name (1 to 128 of A-Z a-z 0-9 _ - .)")
        if self.search_name == self.call_name:
            problems.append("search_name and call_name must differ")
        if problems:
            raise ValueError("; ".join(problems))


def search_option(option: bool | ToolSearch | None) -> ToolSearch | None:
    """`Server(tool_search=...)`'s value as options, or None when search is off.

    Raises:
        TypeError: something other than a bool, a `ToolSearch` or None.
    """
    if option is None or option is False:
        return None
    if option is True:
        return ToolSearch()
    if isinstance(option, ToolSearch):
        return option
    raise TypeError(f"tool_search takes True, False or a ToolSearch, got {option!r}")


class Search:
    """A server's tool search: its options, its two tools, and the index kept in step with the server's tools."""

    def __init__(self, server: Listing, options: ToolSearch) -> None:
        self.server = server
        self.options = options
        self.names = frozenset((options.search_name, options.call_name))
        """The names of the two tools of the search (no tool of the server's may take one)."""
        self.index = ToolIndex(threshold=options.threshold)
        self._indexed: tuple[Mapping[str, Any], int] | None = None  # the tools mapping indexed, and its size then
        self._payloads: dict[tuple[str, bool], list[str]] = {}  # the two tools' wire JSON, per revision and tasks
        self._wire: dict[str, tuple[Mapping[str, Any], int, dict[str, dict[str, Any]]]] = {}  # per revision

    # -- tools/list -----------------------------------------------------------------------------------

    def listed(self, params: dict[str, Any], version: str, shown: Shown) -> list[str]:
        """The prepared JSON of what `tools/list` lists: the pinned tools this caller may see, then the two."""
        server = self.server
        pinned = set(self.options.pinned)
        listed = [
            payload
            for tool, payload in zip(server.tools.values(), server.tool_payloads(version), strict=True)
            if tool.name in pinned and shown(tool, params)
        ]
        return [*listed, *self._own_payloads(version)]

    def _own_payloads(self, version: str) -> list[str]:
        tasks = any(tool.task is not None for tool in self.server.tools.values())
        payloads = self._payloads.get((version, tasks))
        if payloads is None:
            profile = self.server.schema_profile
            payloads = self._payloads[version, tasks] = [
                encode(shape_tool(_adapted(definition, profile), version, None))
                for definition in self._own_definitions(tasks)
            ]
        return payloads

    def text_arguments(self) -> bool:
        """Whether `call_tool` takes the found tool's arguments as JSON text: under a schema profile whose objects must
        all be closed (the strict ones), no schema says "any object", and an empty closed object admits no argument."""
        profile = self.server.schema_profile
        if profile is None:
            return False
        from toolkit._profiles.profiles import get_profile  # deferred: most servers serve no profile

        return get_profile(profile).rule("closed-objects") is not None

    def _own_definitions(self, tasks: bool) -> list[dict[str, Any]]:
        options = self.options
        arguments: dict[str, Any] = {"type": "object", "description": "The tool's arguments (its input schema)."}
        if self.text_arguments():
            arguments = {"type": "string", "description": "The tool's arguments (its input schema), as JSON text."}
        search: dict[str, Any] = {
            "name": options.search_name,
            "title": "Search tools",
            "description": (
                f"Find the tools for a task among this server's tools, described in words (any language). Returns "
                f"up to {options.limit} tools, best first, with their input schemas; call one with "
                f"{options.call_name}. Returns none when no tool fits: then answer without a tool, or search again "
                "with other words."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "What you need to do, in words."}},
                "required": ["query"],
            },
            "outputSchema": {
                "type": "object",
                "properties": {"tools": {"type": "array", "items": {"type": "object"}}},
                "required": ["tools"],
            },
            "annotations": {"readOnlyHint": True, "openWorldHint": False},
        }
        call: dict[str, Any] = {
            "name": options.call_name,
            "title": "Call a tool",
            "description": (
                f"Call a tool found with {options.search_name}, by its name, with arguments that follow its input "
                "schema. Returns that tool's result."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": f"The tool's name, as {options.search_name} gave it."},
                    "arguments": arguments,
                },
                "required": ["name"],
            },
        }
        if tasks:
            call["execution"] = {"taskSupport": "optional"}  # 2025-11-25: a client asks for a task only if allowed
        return [search, call]

    # -- call_tool ------------------------------------------------------------------------------------

    def unwrap(self, params: dict[str, Any], shown: Shown) -> dict[str, Any]:
        """The params of the direct call a `call_tool` call stands for; `params` itself when it is no `call_tool`
        call, or names no tool this caller may call (it is then answered by `answer`)."""
        if params.get("name") != self.options.call_name:
            return params
        arguments = params.get("arguments")
        if not isinstance(arguments, Mapping):
            return params
        name, inner = arguments.get("name"), self._inner_arguments(arguments.get("arguments"))
        tool = self.server.tools.get(name) if type(name) is str else None
        if tool is None or not (inner is None or isinstance(inner, Mapping)):
            return params
        direct = {**params, "name": name}
        if inner is None:
            direct.pop("arguments")
        else:
            direct["arguments"] = dict(inner)
        if not shown(tool, direct):
            return params
        return direct

    def _inner_arguments(self, inner: Any) -> Any:
        """The found tool's arguments as `call_tool` was given them: the object JSON text holds, where a strict
        profile makes them text (`text_arguments`); else as they are (text that holds no object stays text, and is
        refused)."""
        if not isinstance(inner, str) or not self.text_arguments():
            return inner
        try:
            decoded = json.loads(inner)
        except ValueError:
            return inner
        return decoded if isinstance(decoded, dict) else inner

    def inner_name(self, params: Mapping[str, Any]) -> Any:
        """The name of the tool a call calls: the found tool's for `call_tool`, else its own (HTTP decides how to
        serve a call by its tool, before it is unwrapped)."""
        name = params.get("name")
        arguments = params.get("arguments")
        if name == self.options.call_name and isinstance(arguments, Mapping):
            return arguments.get("name")
        return name

    # -- the two tools' answers -----------------------------------------------------------------------

    def answer(self, params: dict[str, Any], version: str, shown: Shown) -> dict[str, Any]:
        """The result of a `search_tools` call, or of a `call_tool` call that `unwrap` could not make a call of."""
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, Mapping) else {}
        if params.get("name") == self.options.search_name:
            return self._search(arguments.get("query"), params, version, shown)
        return self._refusal(arguments, params, shown)

    def _search(self, query: Any, params: dict[str, Any], version: str, shown: Shown) -> dict[str, Any]:
        if not isinstance(query, str) or not query.strip():
            return error_wire(f"{self.options.search_name} takes a query: what you need to do, in words")
        tools = self.server.tools

        def visible(name: str) -> bool:
            tool = tools.get(name)
            return tool is not None and shown(tool, params)

        matches = self.synced().search(query, self.options.limit, where=visible)
        wire = self._definitions(version)
        found = [{**_described(wire[match.name]), "score": match.score} for match in matches]
        structured = {"tools": found}
        return {"content": [{"type": "text", "text": encode(structured)}], "structuredContent": structured}

    def _refusal(self, arguments: Mapping[str, Any], params: dict[str, Any], shown: Shown) -> dict[str, Any]:
        name, inner = arguments.get("name"), arguments.get("arguments")
        search = self.options.search_name
        if type(name) is not str:
            return error_wire(f"{self.options.call_name} takes the name of a tool (a string): find one with {search}")
        tool = self.server.tools.get(name)
        if tool is None or not shown(tool, params):
            visible = [t.name for t in self.server.tools.values() if shown(t, params)]
            close = difflib.get_close_matches(name, visible, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; find tools with {search}"
            return error_wire(f"Unknown tool: {name}{hint}")
        if self.text_arguments():
            return error_wire(f"the arguments of {name!r} must be a JSON object, as text, got {_brief(inner)}")
        return error_wire(f"the arguments of {name!r} must be an object, got {type(inner).__name__}")

    # -- the index and the definitions it returns -----------------------------------------------------

    def synced(self) -> ToolIndex:
        """The index, brought up to date with the server's tools if they changed (only changed tools are analysed
        again)."""
        tools = self.server.tools
        if self._indexed is None or self._indexed[0] is not tools or self._indexed[1] != len(tools):
            self.index.update(tools.values())
            self._indexed = (tools, len(tools))
        return self.index

    def _definitions(self, version: str) -> dict[str, dict[str, Any]]:
        """Each tool's wire object for `version` (as `tools/list` would send it: a schema profile's adaptation
        included), by name; prepared once per revision and tools."""
        tools = self.server.tools
        cached = self._wire.get(version)
        if cached is None or cached[0] is not tools or cached[1] != len(tools):
            payloads = self.server.tool_payloads(version)
            wire = {name: decode(payload) for name, payload in zip(tools, payloads, strict=True)}
            cached = self._wire[version] = (tools, len(tools), wire)
        return cached[2]


def _adapted(definition: dict[str, Any], profile: str | None) -> dict[str, Any]:
    """One of the search's own tools as the server serves its tools: adapted to its schema profile, if it has one."""
    if profile is None:
        return definition
    from toolkit._profiles.adapter import adapt  # deferred: most servers serve no profile

    return adapt(definition, profile).tool


def _brief(value: Any) -> str:
    """A value as a refusal quotes it: its JSON, cut short."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _described(definition: dict[str, Any]) -> dict[str, Any]:
    """What a search returns of a tool: what a model needs to call it."""
    keys = ("name", "title", "description", "inputSchema")
    return {key: definition[key] for key in keys if key in definition}
