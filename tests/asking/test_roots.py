"""`Root` and `Roots`: the client's roots as a tool reads them and as a client gives them (issue 21 §3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolkit import Client, Context, Root, Roots, Server


def test_a_root_is_made_from_a_path_a_file_uri_or_a_root(tmp_path: Path) -> None:
    assert Root.of(tmp_path) == Root(uri=tmp_path.as_uri(), name=tmp_path.name)
    assert Root.of(str(tmp_path / "a b")).uri == (tmp_path / "a b").as_uri()
    assert Root.of("file:///srv/x%20y") == Root(uri="file:///srv/x%20y")
    given = Root(uri="file:///opt", name="Opt")
    assert Root.of(given) is given


def test_a_root_has_a_local_path_only_when_it_is_a_file_uri() -> None:
    assert Root(uri="file:///srv/x%20y").path == Path("/srv/x y")
    assert Root(uri="https://example.com/repo").path is None


def test_roots_read_like_a_list() -> None:
    roots = Roots([Root(uri="file:///a", name="A"), Root(uri="file:///b")])
    assert (len(roots), [root.name for root in roots], roots.paths) == (2, ["A", None], [Path("/a"), Path("/b")])
    assert repr(roots) == "Roots(['file:///a', 'file:///b'])"
    assert roots.to_wire() == {"roots": [{"uri": "file:///a", "name": "A"}, {"uri": "file:///b"}]}


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ([], "an object with a list of roots"),
        ({"roots": {"uri": "file:///a"}}, "an object with a list of roots"),
        ({"roots": [{"name": "no uri"}]}, "each root must be an object with a uri"),
        ({"roots": [{"uri": "https://example.com"}]}, "must start with file://"),
    ],
)
def test_a_malformed_list_of_roots_is_refused(raw: Any, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Roots.from_wire(raw)


def test_an_empty_list_of_roots_is_a_list() -> None:
    roots = Roots.from_wire({"roots": []})
    assert (len(roots), roots.paths) == (0, [])


@pytest.mark.anyio
@pytest.mark.parametrize("lone", ["/srv/data", Path("/srv/data"), Root.of("/srv/data")])
async def test_a_lone_path_given_as_the_roots_is_one_root_not_its_characters(lone: Any) -> None:
    server = Server("roots")

    @server.tool
    async def where(ctx: Context) -> dict[str, list[str]]:
        """The client's roots."""
        return {"roots": [root.uri for root in await ctx.list_roots()]}

    async with Client(server, roots=lone) as client:
        result = await client.call_tool("where")
    assert result.structured_content == {"roots": ["file:///srv/data"]}
