"""Provider-profile checks over a `tools/list` payload, with `all` standing for every non-strict profile: what
`toolkit check --profile` and `toolkit.testing.assert_portable` share.

Like the docs code, it works on the wire form, so it reports on any MCP server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .adapter import adapt
from .profiles import PROFILES, Problem, get_profile

__all__ = ["ALL", "check_tools", "expand_profiles"]

ALL = tuple(name for name, profile in PROFILES.items() if not profile.strict)
"""What `all` stands for: every profile that is not strict."""


def expand_profiles(names: Sequence[str]) -> list[str]:
    """The profile names asked for, `all` standing for every profile that is not strict, each once, in order.

    `all` leaves the strict profiles (`openai-strict`, `anthropic-strict`) out because they are a choice, not a
    requirement: strict mode rejects any default or length bound, so nearly every real tool fails them as
    served. Name them to check them: `["all", "openai-strict"]`.

    Raises:
        ValueError: an unknown profile name.
    """
    out: list[str] = []
    for name in names:
        for one in ALL if name == "all" else [get_profile(name).name]:
            if one not in out:
                out.append(one)
    return out


def check_tools(tools: Sequence[Mapping[str, Any]], profiles: Sequence[str]) -> list[Problem]:
    """Every problem of the tools (wire form) under the profiles (names, `all` allowed): each tool under each
    profile, in that order."""
    chosen = [get_profile(name) for name in expand_profiles(profiles)]
    return [problem for tool in tools for profile in chosen for problem in adapt(tool, profile).problems]
