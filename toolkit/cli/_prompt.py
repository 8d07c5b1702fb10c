"""Asking a human in the terminal: the elicitation handler of `toolkit call`.

Questions go to stderr and answers come from stdin, one line each, so that stdout stays the call's result
(`toolkit call ... | jq`) and tests drive it with piped answers. End of input at any prompt cancels, and says so.
"""

from __future__ import annotations

import datetime
import os
import re
import sys
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio

from toolkit import ClientRequestError, ElicitRequest, ElicitResult, SampleRequest
from toolkit._transports.stdio import on_a_daemon_thread

__all__ = ["TerminalPrompt"]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_YES = frozenset({"y", "yes", "true", "1"})
_NO = frozenset({"n", "no", "false", "0"})
_ACTIONS: dict[str, Literal["accept", "decline", "cancel"]] = {
    **dict.fromkeys(("", "a", "accept"), "accept"),
    **dict.fromkeys(("d", "decline"), "decline"),
    **dict.fromkeys(("c", "cancel"), "cancel"),
}


class _Stop(Exception):  # not an error: the user chose decline or cancel
    def __init__(self, action: str) -> None:
        self.action = action


async def _stdin_line() -> str:
    # On a daemon thread, abandoned if the call is cancelled (reading stdin cannot be interrupted portably), which
    # leaves no thread for the interpreter to wait for after Ctrl-C. The file descriptor is read a byte at a time, to
    # the end of the line and no further, so no answer typed or piped ahead is lost to a buffer between two prompts.
    line: str = await on_a_daemon_thread(_read_line)
    if line and not sys.stdin.isatty():
        _stderr("\n")  # a terminal echoes the answer and its newline; a piped one is not shown: end the prompt's line
    return line


def _read_line() -> str:
    data = bytearray()
    while not data.endswith(b"\n") and (byte := os.read(sys.stdin.fileno(), 1)):
        data += byte
    return data.decode(sys.stdin.encoding or "utf-8", "replace")


def _stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


class TerminalPrompt:
    """Answers elicitations by asking in the terminal, field by field; refuses sampling (there is no model).

    Args:
        yes: Accept confirmations (forms without fields) without asking; forms with fields still prompt.
        read_line: Reads one line, `""` at end of input (default: stdin, on a worker thread).
        write: Writes prompt text (default: stderr).
    """

    def __init__(
        self,
        *,
        yes: bool = False,
        read_line: Callable[[], Awaitable[str]] = _stdin_line,
        write: Callable[[str], None] = _stderr,
    ) -> None:
        self.yes = yes
        self.refused_sampling = False
        """A sampling request was refused (the CLI explains a failed call with it)."""
        self._read = read_line
        self._write = write
        self._turn: anyio.Lock | None = None  # made on the loop that first asks

    async def sample(self, request: SampleRequest) -> str:
        """Show the request and refuse it: `toolkit call` has no model."""
        self._write("? the tool asked for a completion from a model:\n")
        for message in request.messages:
            text = "\n".join(getattr(block, "text", f"<{block.type}>") for block in message.blocks)
            self._write(f"  {message.role}: {text}\n")
        self.refused_sampling = True
        raise ClientRequestError(-1, "toolkit call has no model to answer sampling requests")

    async def elicit(self, request: ElicitRequest) -> ElicitResult[Any]:
        """Ask the user; end of input, `:cancel` or `:decline` at any prompt stop the form. Questions a tool asks
        together (`ctx.together()`, sent at once in the handshake era) are asked one after the other."""
        if self._turn is None:
            self._turn = anyio.Lock()
        async with self._turn:
            return await self._elicit(request)

    async def _elicit(self, request: ElicitRequest) -> ElicitResult[Any]:
        """One question: a URL to open, a confirmation (a form without fields), or a form, field by field."""
        try:
            if request.mode == "url":
                return await self._url(request)
            schema = request.requested_schema or {}
            properties = schema.get("properties") or {}
            if not properties:
                return await self._confirm(request.message)
            self._write(f"? {request.message}\n")
            content = await self._form(properties, set(schema.get("required") or ()))
            return await self._submit(content)
        except _Stop as stop:
            return ElicitResult("cancel" if stop.action == "cancel" else "decline")

    async def _form(self, properties: dict[str, Any], required: set[str]) -> dict[str, Any]:
        """The form's content: each field asked in turn, those left empty without a default left out."""
        content: dict[str, Any] = {}
        for name, prop in properties.items():
            value = await self._field(name, prop, name in required)
            if value is not None:
                content[name] = value
        return content

    async def _submit(self, content: dict[str, Any]) -> ElicitResult[Any]:
        """The filled form accepted, declined or cancelled, as the user chooses (accept by default)."""
        while True:
            choice = _ACTIONS.get((await self._ask("  [a]ccept / [d]ecline / [c]ancel [a]: ")).lower())
            if choice is not None:
                return ElicitResult.accept(content) if choice == "accept" else ElicitResult(choice)
            self._write("    ! answer a, d or c; try again\n")

    async def _ask(self, prompt: str) -> str:
        self._write(prompt)
        line = await self._read()
        if not line:  # end of input: the user went away without choosing
            self._write("\n! input ended: answered cancel\n")
            raise _Stop("cancel")
        answer = line.strip()
        if answer in (":decline", ":cancel"):
            raise _Stop(answer[1:])
        return answer

    async def _confirm(self, message: str) -> ElicitResult[Any]:
        if self.yes:
            self._write(f"? {message} [y/N]: yes (--yes)\n")
            return ElicitResult.accept({})
        accepted = await self._yes_or_no(f"? {message} [y/N]: ", "  ")
        return ElicitResult.accept({}) if accepted else ElicitResult.decline()

    async def _yes_or_no(self, prompt: str, indent: str) -> bool:
        """`[y/N]`: an empty answer is no; anything but yes or no is asked again, as a form's fields are."""
        while True:
            answer = (await self._ask(prompt)).lower()
            if answer in _YES:
                return True
            if not answer or answer in _NO:
                return False
            self._write(f"{indent}! answer y or n; try again\n")

    async def _url(self, request: ElicitRequest) -> ElicitResult[Any]:
        url = request.url or ""
        host = urllib.parse.urlsplit(url).hostname or "?"
        # client/elicitation: show the full URL before consent, never fetch it first.
        self._write(f"? {request.message}\n  URL: {url}\n  host: {host}\n")
        if not await self._yes_or_no("  Open it in your browser? [y/N]: ", "    "):
            return ElicitResult.decline()
        import webbrowser

        webbrowser.open(url)
        return ElicitResult.accept()

    async def _field(self, name: str, prop: dict[str, Any], required: bool) -> Any:
        """One field's value, asked until the answer is valid: an empty answer is its default, or None (left out)
        when it is optional."""
        choices = _choices(prop)
        prompt = _field_prompt(name, prop, required, choices)
        while True:
            answer = await self._ask(prompt)
            if not answer:
                if "default" in prop:
                    return prop["default"]
                if not required:
                    return None
                self._write("    ! required; try again\n")
                continue
            try:
                return _parse(answer, prop, choices)
            except ValueError as exc:
                self._write(f"    ! {exc}; try again\n")


def _field_prompt(name: str, prop: dict[str, Any], required: bool, choices: list[tuple[str, str]] | None) -> str:
    """A field's prompt: its title, what it takes, whether it is required, its description and default."""
    label = prop.get("title") or name
    hints = [_kind(prop, choices)]
    if required:
        hints.append("required")
    description = f" - {prop['description']}" if prop.get("description") else ""
    shown = f" [{_show(prop['default'], choices)}]" if "default" in prop else ""
    return f"  {label} ({', '.join(h for h in hints if h)}){description}{shown}: "


def _choices(prop: dict[str, Any]) -> list[tuple[str, str]] | None:
    source = prop.get("items") if prop.get("type") == "array" else prop
    if not isinstance(source, dict):
        return None
    if "enum" in source:
        names = source.get("enumNames") or source["enum"]
        return list(zip(source["enum"], names, strict=False))
    options = source.get("oneOf") or source.get("anyOf")
    if options:
        return [(o["const"], o.get("title", o["const"])) for o in options]
    return None


def _kind(prop: dict[str, Any], choices: list[tuple[str, str]] | None) -> str:
    if choices is not None:
        listed = ", ".join(f"{i} {title}" for i, (_, title) in enumerate(choices, 1))
        return f"{'any of: ' if prop.get('type') == 'array' else ''}{listed}"
    if prop.get("type") == "boolean":
        return "y/n"
    return str(prop.get("format") or prop.get("type"))


def _show(default: Any, choices: list[tuple[str, str]] | None) -> str:
    titles: dict[Any, str] = dict(choices or ())
    if isinstance(default, list):
        return ", ".join(str(titles.get(d, d)) for d in default)
    if isinstance(default, bool):
        return "y" if default else "n"
    return str(titles.get(default, default))


def _parse(answer: str, prop: dict[str, Any], choices: list[tuple[str, str]] | None) -> Any:
    """A field's answer as its value, by the field's type; a ValueError says what is wrong with it."""
    kind = prop.get("type")
    if choices is not None:
        return _parse_choices(answer, prop, choices)
    if kind == "boolean":
        return _parse_boolean(answer)
    if kind in ("integer", "number"):
        return _parse_number(answer, prop, integer=kind == "integer")
    _check_format(answer, prop.get("format"))
    _bounds(len(answer), prop.get("minLength"), prop.get("maxLength"), "characters")
    return answer


def _parse_choices(answer: str, prop: dict[str, Any], choices: list[tuple[str, str]]) -> Any:
    """One choice, or for an array several separated by commas (as many as the field allows)."""
    if prop.get("type") != "array":
        return _pick(answer, choices)
    picked = [_pick(part.strip(), choices) for part in answer.split(",")]
    _bounds(len(picked), prop.get("minItems"), prop.get("maxItems"), "choices")
    return picked


def _parse_boolean(answer: str) -> bool:
    """Yes or no, in the words `_YES` and `_NO` hold."""
    if answer.lower() in _YES:
        return True
    if answer.lower() in _NO:
        return False
    raise ValueError("answer y or n")


def _parse_number(answer: str, prop: dict[str, Any], *, integer: bool) -> float:
    """A whole number (or any number) within the field's bounds."""
    try:
        number: float = int(answer) if integer else float(answer)
    except ValueError:
        raise ValueError(f"not {'a whole number' if integer else 'a number'}") from None
    _bounds(number, prop.get("minimum"), prop.get("maximum"), "")
    return number


def _pick(answer: str, choices: list[tuple[str, str]]) -> str:
    for index, (value, title) in enumerate(choices, 1):
        if answer in (value, str(index)) or answer.lower() == title.lower():
            return value
    raise ValueError(f"choose a number from 1 to {len(choices)}, or a name: {', '.join(t for _, t in choices)}")


def _bounds(value: float, low: Any, high: Any, unit: str) -> None:
    suffix = f" {unit}" if unit else ""
    if low is not None and value < low:
        raise ValueError(f"at least {low}{suffix}")
    if high is not None and value > high:
        raise ValueError(f"at most {high}{suffix}")


def _check_format(answer: str, fmt: Any) -> None:
    if fmt == "email" and not _EMAIL.match(answer):
        raise ValueError("not an email address")
    if fmt == "uri":
        parts = urllib.parse.urlsplit(answer)
        if not parts.scheme or not parts.netloc:
            raise ValueError("not an absolute URL")
    try:
        if fmt == "date":
            datetime.date.fromisoformat(answer)
        elif fmt == "date-time":
            datetime.datetime.fromisoformat(answer)
    except ValueError:
        raise ValueError(f"not a {fmt} (ISO 8601, e.g. 2026-12-01{'T10:30' if fmt == 'date-time' else ''})") from None
