"""Every keyword-options signature refuses an option it does not have, with the option it is closest to: a
misspelled option is never ignored in silence (`toolkit._errors.refuse_unknown_options`, the one check)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from toolkit import Client, Server, tool

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
