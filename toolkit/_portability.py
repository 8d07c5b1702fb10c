"""Provider-profile checks over a `tools/list` payload, with `all` standing for every profile: what
`toolkit check --profile` and `toolkit.testing.assert_portable` share.

Like the docs code, it works on the wire form, so it reports on any MCP server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._profiles import PROFILES, Problem, check, get_profile

__all__ = ["check_tools", "expand_profiles"]


def expand_profiles(names: Sequence[str]) -> list[str]:
    """The profile names asked for, `all` standing for every profile, each once, in the order given.

    Raises:
        ValueError: an unknown profile name.
    """
    out: list[str] = []
    for name in names:
        for one in PROFILES if name == "all" else [get_profile(name).name]:
            if one not in out:
                out.append(one)
    return out


def check_tools(tools: Sequence[Mapping[str, Any]], profiles: Sequence[str]) -> list[Problem]:
    """Every problem of the tools (wire form) under the profiles (names, `all` allowed)."""
    return check(tools, expand_profiles(profiles))
