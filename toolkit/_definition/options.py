"""A tool's options, declared once: the keyword options of `@tool` and `@server.tool`, their defaults, and what is
checked of them when the tool is defined.

`ToolOptions` is the one declaration (names and types): `tool(**options: Unpack[ToolOptions])` gives type checkers
and IDEs every keyword, and `Tool` reads the same dict once its defaults are filled in (`with_defaults`). Each option
is documented on [`tool`][toolkit.tool].
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from typing_extensions import TypedDict

from toolkit._asking.asking import confirm_problems
from toolkit._errors import refuse_unknown_options
from toolkit._protocol.meta import meta_key_problems
from toolkit._protocol.types import Icon, ToolAnnotations

from .docstrings import DocstringStyle
from .middleware import Middleware, middleware_problems
from .ui import UI, Visibility, visibility_problems

__all__ = ["OptionalStyle", "ToolOptions", "annotations_of", "limit_problems", "option_problems", "with_defaults"]

OptionalStyle = Literal["compact", "faithful"]


class ToolOptions(TypedDict, total=False):
    """The keyword options of `@tool` and `@server.tool` (documented on [`tool`][toolkit.tool])."""

    name: str | None
    title: str | None
    description: str | None
    read_only: bool | None
    destructive: bool | None
    idempotent: bool | None
    open_world: bool | None
    icons: Sequence[Icon | Mapping[str, Any]] | None
    meta: Mapping[str, Any] | None
    structured: bool | None
    docstring_style: DocstringStyle | None
    require_param_docs: bool
    inline_defs: bool
    schema_dialect: bool
    input_schema_extra: Mapping[str, Any] | None
    optional_style: OptionalStyle
    show_error_details: bool
    run_in_thread: bool
    confirm: bool | str
    lint_ignore: Mapping[str, str] | None
    middleware: Sequence[Middleware] | None
    timeout: float | None
    max_result_bytes: int | None
    task: Literal["optional", "required"] | None
    ui: UI | None
    visibility: Sequence[Visibility] | None


#: The options whose default is not None (an option left out is None unless named here).
_DEFAULTS: ToolOptions = {
    "require_param_docs": False,
    "inline_defs": True,
    "schema_dialect": False,
    "optional_style": "compact",
    "show_error_details": False,
    "run_in_thread": True,
    "confirm": False,
}


def with_defaults(options: Mapping[str, Any]) -> ToolOptions:
    """The options given, every one left out at its default (None unless `_DEFAULTS` says otherwise).

    Raises:
        TypeError: an option that is not one of `ToolOptions` (a type checker sees it; at run time it would
            otherwise be ignored without a word).
    """
    refuse_unknown_options("tool", options, _NAMES)
    full: dict[str, Any] = dict.fromkeys(_NAMES)
    full.update(_DEFAULTS)
    full.update(options)
    return cast("ToolOptions", full)


_NAMES = frozenset(ToolOptions.__annotations__)


def annotations_of(options: ToolOptions) -> ToolAnnotations | None:
    """The definition's `annotations`: the hints given, and the title; None when there is none of them."""
    flags = (options["read_only"], options["destructive"], options["idempotent"], options["open_world"])
    if all(flag is None for flag in flags) and options["title"] is None:
        return None
    return ToolAnnotations(
        title=options["title"],
        read_only_hint=options["read_only"],
        destructive_hint=options["destructive"],
        idempotent_hint=options["idempotent"],
        open_world_hint=options["open_world"],
    )


def option_problems(options: ToolOptions, param_names: list[str], is_async: bool = True) -> list[str]:
    """What the options that carry values of their own get wrong (the schema's extra keys, `_meta`, the confirmation
    template, lint silences, middleware, limits), in that order, after the signature's problems. `is_async`: the
    function is async (a sync one on the event loop, `run_in_thread=False`, cannot be timed out)."""
    problems: list[str] = []
    if options["input_schema_extra"] is not None:
        problems.extend(_extra_problems(options["input_schema_extra"]))
    if options["meta"] is not None:
        problems.extend(meta_key_problems(options["meta"]))
    problems.extend(_ui_problems(options))
    problems.extend(confirm_problems(options["confirm"], param_names))
    problems.extend(_lint_ignore_problems(options["lint_ignore"]))
    problems.extend(middleware_problems(options["middleware"]))
    problems.extend(limit_problems(options["timeout"], options["max_result_bytes"]))
    if options["task"] not in (None, "optional", "required"):
        problems.append(f"task must be 'optional', 'required' or None, not {options['task']!r}")
    if options["timeout"] is not None and not options["run_in_thread"] and not is_async:
        problems.append(
            "timeout= cannot stop a sync function run on the event loop (run_in_thread=False): it blocks the loop "
            "until it returns, so the timeout would never fire; let it run on a worker thread or make it async"
        )
    return problems


def _ui_problems(options: ToolOptions) -> list[str]:
    """What is wrong with `ui=` and `visibility=` (MCP Apps): a `UI`, a list of who may call, and no `_meta` of
    the same keys given by hand."""
    ui: object = options["ui"]
    problems = visibility_problems(options["visibility"])
    if ui is not None and not isinstance(ui, UI):
        problems.append(f"ui must be a toolkit.UI (the page and its ui:// URI), not {ui!r}")
    meta = options["meta"]
    if meta is not None and (ui is not None or options["visibility"] is not None):
        problems.extend(
            f"meta={{{key!r}: ...}} with ui=/visibility=: toolkit writes _meta[{key!r}] from those; give it once"
            for key in ("ui", "ui/resourceUri")
            if key in meta
        )
    return problems


def limit_problems(timeout: object, max_result_bytes: object, prefix: str = "") -> list[str]:
    """What is wrong with a timeout (seconds, above 0) and a result size limit (bytes, at least 1)."""
    problems: list[str] = []
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        problems.append(f"{prefix}timeout must be a number of seconds above 0, not {timeout!r}")
    if max_result_bytes is not None and (
        isinstance(max_result_bytes, bool) or not isinstance(max_result_bytes, int) or max_result_bytes < 1
    ):
        problems.append(f"{prefix}max_result_bytes must be a number of bytes (1 or more), not {max_result_bytes!r}")
    return problems


#: What `input_schema_extra` cannot set: toolkit derives these from the signature, and validates calls by them.
_DERIVED_KEYS = ("type", "properties", "required", "additionalProperties", "$defs", "$schema")


def _extra_problems(extra: object) -> list[str]:
    """What is wrong with `input_schema_extra`, checked when the tool is defined."""
    if not isinstance(extra, Mapping):
        return [f"input_schema_extra must be a mapping of JSON Schema keywords, not {type(extra).__name__}"]
    problems = [
        f"input_schema_extra cannot set {key!r}: toolkit derives it from the signature"
        + (" (use schema_dialect=True)" if key == "$schema" else "")
        for key in _DERIVED_KEYS
        if key in extra
    ]
    try:
        json.dumps(extra, allow_nan=False)
    except (TypeError, ValueError) as exc:
        problems.append(f"input_schema_extra is not JSON: {exc}")
    return problems


#: A lint code: letters then digits (`TK301`); the codes themselves are `toolkit lint`'s (docs/lint.md).
_LINT_CODE = re.compile(r"^[A-Z]+[0-9]+$")


def _lint_ignore_problems(silenced: object) -> list[str]:
    """What is wrong with `lint_ignore`: each entry is a lint code and the reason it does not apply."""
    if silenced is None:
        return []
    if not isinstance(silenced, Mapping):
        return [f"lint_ignore must map lint codes to reasons, e.g. {{'TK301': 'why'}}, not {type(silenced).__name__}"]
    return [
        f"lint_ignore[{code!r}]: "
        + (
            "the reason must be a non-empty string"
            if isinstance(code, str) and _LINT_CODE.match(code)
            else "not a lint code such as 'TK301'"
        )
        for code, reason in silenced.items()
        if not (isinstance(code, str) and _LINT_CODE.match(code) and isinstance(reason, str) and reason.strip())
    ]
