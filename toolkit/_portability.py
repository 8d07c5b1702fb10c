"""Portability reports over a `tools/list` payload: `toolkit check --profile`, the docs' compatibility line, and
`toolkit docs --format openai|anthropic|gemini`.

Like the rest of the docs code, everything works on the wire form, so it reports on any MCP server.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._function_calling import envelope
from ._profiles import PROFILES, Problem, adapt, check, get_profile

__all__ = ["check_tools", "compatibility", "expand_profiles", "format_problems", "problems_json", "render_definitions"]


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


def format_problems(problems: Sequence[Problem], tools: int, profiles: Sequence[str]) -> str:
    """The `toolkit check --profile` report: one line a problem, then a summary line."""
    lines = [str(p) for p in problems]
    rejecting = {(p.profile, p.tool) for p in problems if p.rejects}
    fixable = sum(p.fixable for p in problems)
    plural = "" if len(problems) == 1 else "s"
    summary = f"{len(problems)} problem{plural} in {tools} tool{'' if tools == 1 else 's'} for {', '.join(profiles)}"
    if problems:
        summary += f"; {fixable} auto-fixable (Server(schema_profile=...), tool.definition_for(...))"
    if rejecting:
        pairs = ", ".join(f"{tool} ({profile})" for profile, tool in sorted(rejecting))
        summary += f"; rejected as served: {pairs}"
    return "\n".join([*lines, summary]) + "\n"


def compatibility(tool: Mapping[str, Any]) -> str:
    """One line for the docs: how the tool fares under each profile, e.g. `gemini` ok after 2 fixes."""
    parts = []
    for name in PROFILES:
        problems = adapt(tool, name).problems
        left = [p for p in problems if not p.fixable]
        if not problems:
            state = "ok"
        elif left:
            rules = ", ".join(sorted({p.rule.id for p in left}))
            state = f"{'rejected' if any(p.rejects for p in left) else 'warning'}: {rules}"
        else:
            state = f"ok after {len(problems)} fix{'' if len(problems) == 1 else 'es'}"
        parts.append(f"`{name}` {state}")
    return "**Providers:** " + " · ".join(parts)


def render_definitions(tools: Sequence[Mapping[str, Any]], profile: str) -> str:
    """Every tool as the profile's provider definition: a JSON array, indented, ending in a newline."""
    return json.dumps([envelope(adapt(tool, profile)) for tool in tools], indent=2, ensure_ascii=False) + "\n"


def problems_json(problems: Sequence[Problem]) -> str:
    """The `--format json` report."""
    report = {"rejected": sum(p.rejects for p in problems), "problems": [p.to_json() for p in problems]}
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


def check_tools(tools: Sequence[Mapping[str, Any]], profiles: Sequence[str]) -> list[Problem]:
    """Every problem of the tools (wire form) under the profiles (names, `all` allowed)."""
    return check(tools, expand_profiles(profiles))
