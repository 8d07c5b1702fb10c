"""The public namespace: one `toolkit`, every name in `__all__`, nothing heavy imported by `import toolkit`."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest

import toolkit
from toolkit import Server


def _isort_key(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps: CONSTANTS, then Classes and aliases, then the rest (functions, dunders)."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def test_all_lists_every_public_name_and_each_one_resolves() -> None:
    public = {name for name in dir(toolkit) if not name.startswith("_")} | {"__version__"}
    modules = {name for name in public if isinstance(getattr(toolkit, name), types.ModuleType)}
    assert set(toolkit.__all__) == public - modules
    assert len(set(toolkit.__all__)) == len(toolkit.__all__)


def test_all_is_kept_in_order() -> None:
    assert toolkit.__all__ == sorted(toolkit.__all__, key=_isort_key)


def test_public_classes_and_functions_say_they_come_from_toolkit() -> None:
    objects = {name: getattr(toolkit, name) for name in toolkit.__all__}
    # Not the type aliases (`CallNext = Callable[...]`): their `__module__` is their origin's, and on Python 3.10 a
    # parametrized generic passes `isinstance(..., type)`.
    defined = {
        name: obj
        for name, obj in objects.items()
        if not isinstance(obj, types.GenericAlias) and isinstance(obj, (type, types.FunctionType))
    }
    places = {name: obj.__module__ for name, obj in defined.items()}
    assert {name: place for name, place in places.items() if place != "toolkit"} == {}


def test_an_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        toolkit.NoSuchThing


def test_importing_the_server_api_loads_no_client_cli_profiles_docstring_parser_or_pytest() -> None:
    # importlib.metadata: pydantic's plugin scan, which must not run at import (it costs ~10 ms of start-up).
    # difflib, mimetypes: only a definition error's "did you mean" and a media file of unknown bytes use them.
    # subprocess: only the standard library's `platform` may load it, on Python 3.10, where it imports subprocess at
    # its top (3.11 moved that into the functions): pydantic imports uuid, which imports platform. The importer of
    # each module is recorded, so that on 3.10 too nothing of ours (nor anything else) loads subprocess.
    code = (
        "import builtins, json, sys\n"
        "importers = []\n"
        "real_import = builtins.__import__\n"
        "def recording(name, globals=None, *args, **kwargs):\n"
        "    if name == 'subprocess' and 'subprocess' not in sys.modules:\n"
        "        importers.append((globals or {}).get('__name__'))\n"
        "    return real_import(name, globals, *args, **kwargs)\n"
        "builtins.__import__ = recording\n"
        "from toolkit import Server, tool\n"
        "builtins.__import__ = real_import\n"
        "print(json.dumps(importers), file=sys.stderr)\n"
        "heavy = ['toolkit._client.client', 'toolkit._client.peer', 'toolkit.cli', 'toolkit.testing', 'toolkit.docs',\n"
        "         'toolkit._profiles.profiles', 'griffe', 'pytest', 'subprocess', 'jsonschema', 'importlib.metadata',\n"
        "         'toolkit._http.app', 'toolkit._transports.http', 'toolkit._http.serve', 'uvicorn', 'httpx', 'h11',\n"
        "         'toolkit._http.jwt', 'jwt', 'cryptography', 'difflib', 'mimetypes']\n"
        "print(json.dumps([name for name in heavy if name in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    loaded = json.loads(out.stdout)
    if sys.version_info < (3, 11):
        assert json.loads(out.stderr) == ["platform"]
        loaded.remove("subprocess")
    else:
        assert json.loads(out.stderr) == []
    assert loaded == []


def test_the_client_options_are_exported_as_the_typed_dict_client_stdio_and_http_take() -> None:
    takes: list[Callable[..., Any]] = [toolkit.Client.__init__, toolkit.Client.stdio, toolkit.Client.http]
    assert [str(inspect.signature(f).parameters["options"].annotation) for f in takes] == ["Unpack[ClientOptions]"] * 3
    assert toolkit.ClientOptions.__module__ == "toolkit"
    assert {"protocol", "max_message_size", "roots"} <= toolkit.ClientOptions.__optional_keys__


def test_a_server_s_public_attributes_are_the_documented_ones() -> None:
    # Issue 39: `Server` holds the engine's `Registry` (`server.registry`) instead of being one, so that what a user
    # sees of a server is what the API reference (docs/api.md) shows: these names, each with a docstring of its own.
    import griffe

    public = {name for name in dir(Server("x")) if not name.startswith("_")}
    assert public == {
        "abandoned_calls",
        "add_tool",
        "elicitation_complete",
        "http_app",
        "instructions",
        "lifespan",
        "lifespan_context",
        "mount",
        "name",
        "registry",
        "remove_tool",
        "replace_tools",
        "run",
        "running",
        "sealer",
        "secret",
        "serve",
        "serve_stdio",
        "share_secret",
        "telemetry",
        "title",
        "tool",
        "tools",
        "version",
    }
    members = griffe.load("toolkit._server")["Server"].all_members

    def documented(name: str) -> bool:
        docstring = members[name].docstring
        return docstring is not None and bool(docstring.value.strip())

    assert {name for name in public if not documented(name)} == set()
