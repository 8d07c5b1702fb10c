"""`toolkit client`: the typed client module, kept up to date in the repository, type-checked, and called for real.

`examples/clients/notes_client.py` is the committed client of `examples/notes.py`; after an intended change of the
example's tools, regenerate it with `toolkit client examples/notes.py -o examples/clients/notes_client.py`.
`tests/golden/shapes_client.py` is the module of `SHAPES` (schemas toolkit itself does not write); after an intended
change of the generator, write it again with `render_client(SHAPES, server="shapes")` and review the diff. The
client of every other example, of `tests/servers/typed_tools.py` and of `ODD_TOOLS` is committed in `tests/golden/`
too (`GOLDEN_CLIENTS` says how each is written: `toolkit client ARGS -o tests/golden/NAME`). All of them are
type-checked (`mypy --strict`) and linted with the rest of the repository; the test of each golden client says that
it is what the generator writes today, so the type check of the repository is the type check of the generator's
output, run once instead of by a mypy of its own in the suite (a cold mypy: 5 s of CPU).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from cli_helpers import PYTHON, ROOT, outcome, toolkit, toolkit_here
from pydantic import BaseModel
from servers import RAW_TOOLS

from toolkit import CallToolResult, Client, Server, ToolError, tool
from toolkit.cli._common import tools_payload
from toolkit.cli._typed_client import render_client

COMMITTED = ROOT / "examples" / "clients" / "notes_client.py"
GOLDEN = ROOT / "tests" / "golden"
GOLDEN_SHAPES = GOLDEN / "shapes_client.py"
TYPED_TOOLS = ROOT / "tests" / "servers" / "typed_tools.py"


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# -- odd and hostile schemas -----------------------------------------------------------------------------------

# Names Python reads otherwise than written (in NFKC `ﬁle` is `file`, `x²` is `x2`), and references that branch back
# to themselves: a union of four, which the generator once followed 32 deep (4**16 paths), and a recursive model.
SELF = {"$ref": "#/$defs/Loop"}
ODD_TOOLS: list[dict[str, Any]] = [
    {"name": "x\u00b2", "inputSchema": {"type": "object"}},
    {
        "name": "\ufb01le",
        "inputSchema": {"type": "object", "properties": {"\ufb01le": {"type": "string"}, "file": {"type": "integer"}}},
    },
    {
        "name": "file",
        "inputSchema": {
            "type": "object",
            "properties": {"loop": SELF, "node": {"$ref": "#/$defs/Node"}},
            "$defs": {
                "Loop": {"anyOf": [SELF, SELF, SELF, SELF]},
                "Node": {
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                        },
                        {"type": "null"},
                    ]
                },
            },
        },
        "outputSchema": {"type": "object", "properties": {"\ufb01le": {"type": "string"}}, "required": ["\ufb01le"]},
    },
]


# How each golden client is written: `toolkit client ARGS` (the examples in process, the others over stdio as any
# server, the typed tools in 2026-07-28, which types every result).
GOLDEN_CLIENTS: dict[str, list[str]] = {
    **{f"{name}_client.py": [f"examples/{name}.py"] for name in ("calculator", "inventory", "trips")},
    "files_client.py": ["--stdio", "--", PYTHON, "examples/files.py"],
    "typed_tools_client.py": [str(TYPED_TOOLS), "--protocol", "2026-07-28"],
    "odd_client.py": ["--stdio", "--", PYTHON, str(RAW_TOOLS), json.dumps(ODD_TOOLS), "9lives"],
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CLIENTS))
def test_each_golden_client_is_what_the_generator_writes(
    name: str, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # In this process: what `client --check` compares is the generator's output; the command's process is the
    # subject of the tests below (printing and writing, a stale module, the target however spelled).
    args = GOLDEN_CLIENTS[name]
    at = args.index("--") if "--" in args else len(args)
    run = toolkit_here(
        "client", *args[:at], "--check", str(GOLDEN / name), *args[at:], capfd=capfd, monkeypatch=monkeypatch
    )

    assert outcome(run) == (0, "", "")


def test_odd_names_become_distinct_python_names_and_self_references_are_resolved_once() -> None:
    text = (GOLDEN / "odd_client.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    client = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name.endswith("Client"))
    methods = {node.name: node for node in client.body if isinstance(node, ast.AsyncFunctionDef)}

    assert client.name == "T9livesClient"
    assert sorted(methods) == ["_call", "_structured", "file", "file_", "x2"]
    assert [a.arg for a in methods["file"].args.kwonlyargs] == ["file", "file_"]
    assert "        loop: Any = None,\n        node: Node | None = None,\n" in text
    assert "class Node(TypedDict):\n    kids: NotRequired[list[Node | None]]\n" in text
    # A key Python would read as another is written as a string: the functional form of TypedDict.
    functional = 'FileResult = TypedDict(  # noqa: UP013\n    "FileResult",\n    {\n        "\\ufb01le": "str",\n'
    assert functional in text


@pytest.mark.parametrize(
    "command",
    [["list"], ["docs"], ["client"], ["inspect"], ["check", "--write", "x.json"], ["call", "--stdio", "a"]],
    ids=lambda command: command[0],
)
def test_a_tools_list_that_is_not_mcp_is_one_line_and_status_2(
    command: list[str], tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The answer is read in this process (the server is the process here): `call` once, not beside every command.
    malformed = json.dumps([{"name": "a", "inputSchema": 3}])
    stdio = [] if "--stdio" in command else ["--stdio"]
    server = ["--", PYTHON, str(RAW_TOOLS), malformed]

    run = toolkit_here(*command, *stdio, *server, cwd=tmp_path, capfd=capfd, monkeypatch=monkeypatch)

    message = (
        "toolkit: error: the server's answer is not valid MCP: at 0.inputSchema: Input should be a valid dictionary\n"
    )
    assert outcome(run) == (2, "", message)


def test_the_committed_client_of_the_notes_example_is_up_to_date(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    check = ["client", "examples/notes.py", "--check", "examples/clients/notes_client.py"]
    run = toolkit_here(*check, capfd=capfd, monkeypatch=monkeypatch)

    assert outcome(run) == (0, "", "")


def test_the_check_passes_however_the_target_is_spelled(tmp_path: Path) -> None:
    # CI runs the check from elsewhere, with an absolute path: the module must not record how the target was spelled.
    absolute = str(ROOT / "examples" / "notes.py")
    runs = [
        toolkit("client", absolute, "--check", str(COMMITTED)),
        toolkit("client", "--stdio", "--check", str(COMMITTED), "--", PYTHON, absolute, cwd=tmp_path),
    ]

    assert [outcome(run) for run in runs] == [(0, "", "")] * 2


def test_a_client_out_of_date_fails_with_a_diff_and_the_command_that_updates_it(tmp_path: Path) -> None:
    stale = tmp_path / "notes_client.py"
    stale.write_text(COMMITTED.read_text(encoding="utf-8").replace("limit: int = 10", "limit: int = 20"))

    run = toolkit("client", "examples/notes.py", "--check", str(stale))

    assert run.returncode == 1
    assert run.stdout.startswith(f"--- {stale} (on disk)\n+++ {stale} (generated)\n")
    assert "-        limit: int = 20,\n+        limit: int = 10,\n" in run.stdout
    assert (
        run.stderr == f"toolkit: {stale} is out of date; update it with: toolkit client examples/notes.py -o {stale}\n"
    )


def test_a_result_that_is_not_an_object_is_typed_from_the_2026_listing_which_alone_gives_its_schema(
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 2026-07-28 lists a structured list's own schema where the handshake era wraps it in {"result": ...}, and the
    # schema of `geo.distance`'s float (SEP-2106), which the handshake era cannot list: it returns a CallToolResult
    # there. The rest is one client for both.
    handshake = toolkit_here("client", str(TYPED_TOOLS), capfd=capfd, monkeypatch=monkeypatch)
    modern = toolkit_here("client", str(TYPED_TOOLS), "--protocol", "2026-07-28", capfd=capfd, monkeypatch=monkeypatch)

    assert (handshake.returncode, modern.returncode) == (0, 0)
    assert "wrapped=True" in handshake.stdout
    typed_float = modern.stdout.replace(
        '    ) -> float:\n        """Distance',
        '    ) -> CallToolResult:\n        """Distance',
    ).replace(
        '        result = await self._structured("geo.distance", arguments, wrapped=True)\n'
        "        return cast(float, result)\n",
        '        return await self._call("geo.distance", arguments)\n',
    )
    assert typed_float == handshake.stdout


def test_printing_and_writing_give_the_same_module(tmp_path: Path) -> None:
    printed = toolkit("client", "examples/notes.py", "--class-name", "Notebook")
    written = toolkit("client", "examples/notes.py", "--class-name", "Notebook", "-o", str(tmp_path / "c.py"))

    assert outcome(written) == (0, "", "")
    assert outcome(printed) == (0, (tmp_path / "c.py").read_text(encoding="utf-8"), "")
    assert "\nclass Notebook:\n" in printed.stdout


@pytest.mark.parametrize("name", ["notes-client", "class", ""])
def test_a_class_name_python_cannot_use_is_refused(
    name: str, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = toolkit_here("client", "examples/notes.py", "--class-name", name, capfd=capfd, monkeypatch=monkeypatch)

    assert outcome(run) == (2, "", f"toolkit: error: --class-name {name!r} is not a Python class name\n")


def test_every_golden_client_passes_ruff_with_the_rules_for_generated_code(tmp_path: Path) -> None:
    # Copied out of the repository, so that `tests/**`'s relaxed rules do not apply: ruff is given the project's
    # configuration with only PLR0913 off, since a client's method takes its tool's parameters as keywords, as many as
    # the tool has, which PLR0913 (off in ruff's defaults) is not for, as it is not for examples/ (pyproject.toml).
    # mypy --strict checks these files with the repository (the module's docstring says why not here).
    for client in [*(GOLDEN / name for name in (*GOLDEN_CLIENTS, "shapes_client.py")), COMMITTED]:
        shutil.copy(client, tmp_path / client.name)
    ruff = [PYTHON, "-m", "ruff", "--config", str(ROOT / "pyproject.toml")]
    checks = [
        [*ruff, "check", "--no-cache", "--ignore", "PLR0913", str(tmp_path)],
        [*ruff, "format", "--check", "--no-cache", str(tmp_path)],
    ]
    runs = [subprocess.run(c, capture_output=True, text=True, cwd=ROOT, timeout=600, check=False) for c in checks]

    assert [(run.returncode, run.stdout if run.returncode else "") for run in runs] == [(0, "")] * 2
    assert len(list(tmp_path.glob("*.py"))) == len(GOLDEN_CLIENTS) + 2


# -- calls through the generated client, in memory ---------------------------------------------------------


@pytest.mark.anyio
async def test_the_notes_example_is_used_through_its_typed_client() -> None:
    clients = load(COMMITTED, "examples_clients_notes_client")
    notes = load(ROOT / "examples" / "notes.py", "examples_notes_for_client")
    book = notes.Notebook()
    server = Server("notes", tools=[book.add_note, book.search_notes, book.update_note, book.delete_note])

    async with Client(server) as client:
        api = clients.NotesClient(client)
        added = await api.add_note(title="Milk", body="Buy milk", tags=["home"], priority=3)
        found = await api.search_notes(query="milk")
        updated = await api.update_note(note_id=added["id"], changes={"title": "Oat milk"})
        deleted = await api.delete_note(note_id=added["id"])
        with pytest.raises(ToolError, match="No note with id"):
            await api.delete_note(note_id=added["id"])

    assert uuid.UUID(added["id"])
    assert (added["title"], added["tags"], added["priority"], added["due"]) == ("Milk", ["home"], 3, None)
    assert found == {"notes": [added], "total": 1}
    assert updated == {**added, "title": "Oat milk"}
    assert isinstance(deleted, CallToolResult)
    assert deleted.text == "Deleted 'Oat milk'."


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
async def test_every_shape_of_schema_is_called_through_its_typed_method(protocol: Any) -> None:
    typed = load(GOLDEN / "typed_tools_client.py", "typed_tools_client")
    tools = load(TYPED_TOOLS, "typed_tools_server")
    tree: dict[str, Any] = {"value": 1, "children": [{"value": 2, "children": []}]}

    async with Client(tools.server, protocol=protocol) as client:
        api = typed.TypedToolsClient(client)
        distance = await api.geo_distance(a={"x": 0.0, "y": 0.0}, b={"x": 3.0, "y": 4.0}, unit="km")
        counted = await api.count(values=[3, 1, 2], weights={"a": 1.0})
        grown = await api.grow(tree=tree, color="green")
        anything = await api.anything(value={"any": ["thing"]}, pair=[1, "one"])
        nothing = await api.nothing()

    # 2026-07-28 sends the bare float as structuredContent; the handshake era its JSON text alone, parsed
    assert distance == 5.0
    assert counted == [1, 2, 3]  # toolkit's {"result": ...} wrapper, unwrapped
    assert grown == {"value": 1, "children": [{"value": 2, "children": []}, {"value": 3, "children": []}]}
    assert anything == {"value": {"any": ["thing"]}, "pair": [1, "one"], "flag": False}
    assert (nothing.is_error, nothing.content) == (False, [])


# -- schemas toolkit does not write, from servers of any implementation ------------------------------------

SHAPES: list[dict[str, Any]] = [
    {
        "name": "contacts/find-by",
        "description": 'Find contacts \u2013 say "hi" to them.\n\n'
        'A second paragraph, with a \\ backslash and """ quotes.',
        "inputSchema": {
            "type": "object",
            "properties": {
                "from": {"type": ["string", "null"], "description": "A keyword as a name."},
                "2nd-key": {"const": "fixed"},
                "kind": {"enum": ["person", "company", None], "default": None},
                "ratio": {"enum": [0.5, 1.5], "type": "number", "default": 0.5},
                "colour": {"enum": [f"colour-number-{i}" for i in range(12)]},
                "filter": {"$ref": "#/$defs/Filter"},
                "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
                "scores": {"type": "object", "additionalProperties": {"type": "number"}},
                "any": {"not": {"type": "string"}},
                "both": {"allOf": [{"$ref": "#/$defs/Filter"}]},
                "options": {"type": "object", "default": {"deep": True}},
            },
            "required": ["2nd-key", "filter"],
            "$defs": {
                "Filter": {
                    "type": "object",
                    "description": "Which contacts.",
                    "properties": {
                        "first-name": {"type": "string"},
                        "class": {"type": "string"},
                        "sub/filters": {"type": "array", "items": {"$ref": "#/$defs/Filter"}},
                    },
                    "required": ["class"],
                }
            },
        },
        "outputSchema": {
            "type": "object",
            "properties": {"contacts": {"type": "array", "items": {"$ref": "#/$defs/Filter"}}},
            "$defs": {"Filter": {"type": "object", "properties": {"id": {"type": "integer"}}}},
        },
    },
    {
        "name": "class",
        "title": "Only a title",
        "inputSchema": {"type": "object", "properties": {"cast": {"type": "string"}, "Client": {"type": "string"}}},
        "outputSchema": {
            "$ref": "#/$defs/Client",
            "$defs": {"Client": {"type": "object", "properties": {"name": {"type": "string"}}}},
        },
    },
    {
        "name": "2fa",
        "description": 'Ends with "a quote"',
        "inputSchema": {
            "type": "object",
            "properties": {
                "self": {"type": "boolean"},
                "from": {"type": "string"},
                "from_": {"type": "string"},
                "point": {"properties": {"x": {"type": "number"}}},
                "nothing": {"enum": [None]},
                "remote": {"$ref": "https://example.com/schema.json"},
                "mode": {"enum": ["first-mode", "second-mode", "third-mode", "line\nbreak\ttab"]},
                "colour": {"enum": [f"colour-number-{i}" for i in range(12)], "default": "colour-number-3"},
                "count": {"type": "integer", "default": "ten"},
                "scale": {"type": "number", "default": 2},
                "shade": {"enum": ["light", "dark"], "default": "grey"},
                "items": {"type": "array", "default": []},
            },
        },
        "outputSchema": {"type": "object", "properties": {"result": {}}, "required": ["result"]},
    },
]


def test_schemas_of_any_shape_give_the_golden_module() -> None:
    text = render_client(SHAPES, server="shapes")

    assert text == GOLDEN_SHAPES.read_text(encoding="utf-8")


def test_a_model_several_tools_share_is_named_by_its_own_title() -> None:
    # As a server that keeps pydantic's titles writes it (the official SDK): the model at the root of one output,
    # in a list of another's, and kept under $defs by a third.
    bookmark = {
        "title": "Bookmark",
        "type": "object",
        "properties": {"url": {"type": "string", "title": "Url"}},
        "required": ["url"],
    }
    untitled = {k: v for k, v in bookmark.items() if k != "title"}
    found = {"type": "object", "properties": {"items": {"type": "array", "items": bookmark}}, "required": ["items"]}
    kept = {"$defs": {"Bookmark": untitled}, "$ref": "#/$defs/Bookmark"}
    tools = [
        {"name": "add_bookmark", "inputSchema": {"type": "object"}, "outputSchema": bookmark},
        {"name": "search", "inputSchema": {"type": "object"}, "outputSchema": found},
        {"name": "get_bookmark", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object", **kept}},
    ]

    text = render_client(tools, server="bookmarks")

    # Before: AddBookmarkResult, after the first tool that returned it.
    assert "class Bookmark(TypedDict):\n    url: str\n" in text
    assert "class SearchResult(TypedDict):\n    items: list[Bookmark]\n" in text
    assert "AddBookmark" not in text
    assert text.count("-> Bookmark:") == 2


class Bookmark(BaseModel):
    url: str
    tags: list[str] = []


@tool
def get_bookmark(url: str) -> Bookmark:
    return Bookmark(url=url)


@tool
def set_tags(url: str, tags: list[str]) -> Bookmark:
    return Bookmark(url=url, tags=tags)


@tool
def search_bookmarks(query: str) -> list[Bookmark]:
    return [Bookmark(url=query)]


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
async def test_a_model_two_tools_of_a_toolkit_server_return_is_one_class_named_after_the_model(protocol: Any) -> None:
    # toolkit's output schemas keep the model's title (its input schemas do not): before, the class was named after
    # the first tool that returned it, `GetBookmarkResult`. 2026-07-28 also lists the list's schema, items titled.
    server = Server("bookmarks", tools=[get_bookmark, set_tags, search_bookmarks])
    async with Client(server, protocol=protocol) as client:
        tools = await tools_payload(client)

    text = render_client(tools, server="bookmarks")

    assert text.count("class Bookmark(TypedDict):\n    url: str\n    tags: NotRequired[list[str]]\n") == 1
    assert "Result(TypedDict)" not in text
    assert text.count("-> Bookmark:") == 2
    assert ("-> list[Bookmark]:" in text) == (protocol == "2026-07-28")
