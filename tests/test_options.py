"""Every keyword-options signature refuses an option it does not have, with the option it is closest to: a
misspelled option is never ignored in silence (`toolkit._errors.refuse_unknown_options`, the one check). A server's
options are declared, defaulted and documented once each."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest

from toolkit import Client, Server, tool
from toolkit._engine.options import DEFAULTS, ServerOptions

# owner: (a call with a misspelled option, the option, the one it is closest to)
MISSPELLED: dict[str, tuple[Callable[[], Any], str, str]] = {
    "Server": (lambda: Server("x", tool_timout=3), "tool_timout", "tool_timeout"),  # type: ignore[call-arg]
    "tool": (lambda: tool(read_onyl=True), "read_onyl", "read_only"),  # type: ignore[call-overload]
    "http_app": (lambda: Server("x").http_app(alowed_hosts=[]), "alowed_hosts", "allowed_hosts"),  # type: ignore[call-arg]
    "Client": (lambda: Client(Server("x"), protocl="auto"), "protocl", "protocol"),  # type: ignore[call-arg]
}


@pytest.mark.parametrize("owner", list(MISSPELLED))
def test_a_misspelled_option_is_a_type_error_naming_the_option_it_is_closest_to(owner: str) -> None:
    call, misspelled, close = MISSPELLED[owner]
    with pytest.raises(TypeError) as raised:
        call()
    assert str(raised.value) == f"{owner}() got an unexpected keyword argument {misspelled!r} (did you mean {close!r}?)"


def test_several_unknown_options_are_named_together_and_one_unlike_any_option_gets_no_guess() -> None:
    with pytest.raises(TypeError) as raised:
        Server("x", tool_timout=3, zzz=1)  # type: ignore[call-arg]
    assert str(raised.value) == (
        "Server() got unexpected keyword arguments 'tool_timout' (did you mean 'tool_timeout'?), 'zzz'"
    )


def test_each_server_option_is_declared_defaulted_and_documented_once() -> None:
    # Issue 39: one declaration (`ServerOptions`), one default each (`DEFAULTS`, which every reader takes its value
    # from), and one line of the `Server` docstring's keyword arguments, which the API reference shows.
    documented = re.findall(r"^    (\w+) \(", (inspect.getdoc(Server) or "").split("Keyword Args:")[1], re.MULTILINE)
    assert len(documented) == len(set(documented))
    assert set(documented) == set(ServerOptions.__optional_keys__) == set(DEFAULTS)


def test_an_option_left_out_or_given_as_none_takes_its_documented_default() -> None:
    server = Server("x", version=None, tool_timeout=None)
    assert (server.version, server.registry.tool_timeout) == (DEFAULTS["version"], DEFAULTS["tool_timeout"])
    plain = Server("x").registry
    assert {option: getattr(plain, option) for option in ("shutdown_grace", "page_size", "ttl_ms")} == {
        option: DEFAULTS[option] for option in ("shutdown_grace", "page_size", "ttl_ms")
    }
