"""A tool's description and per-parameter descriptions, read from its function's docstring.

Sections are parsed by [griffe](https://mkdocstrings.github.io/griffe/), the parser behind mkdocstrings
(fastmcp and pydantic-ai use it too). griffe costs tens of milliseconds to import, so it is imported on
first use, and only for a docstring that has sections and is not of the common Google shape (read here, and
checked against griffe by the tests): plain docstrings and most tools' Google docstrings never pay for it.
"""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from griffe import DocstringSection

__all__ = ["DocstringStyle", "ParsedDocstring", "parse_docstring"]

DocstringStyle = Literal["google", "numpy", "sphinx"]


@dataclass(frozen=True)
class ParsedDocstring:
    """What a tool takes from its function's docstring."""

    description: str
    """Summary and body text, without the sections; `""` when there is no docstring."""
    params: dict[str, str]
    """Parameter name to description, in docstring order; wrapped lines are joined with spaces."""


# Section titles, as griffe spells them. Parameter sections are kept apart because detection looks for
# them first: a docstring's parameter section decides its style before a stray "Returns:" can.
_GOOGLE_PARAMS = (
    "args|arguments|params|parameters|keyword args|keyword arguments|other args|other arguments|other params"
    "|other parameters"
)
_GOOGLE_OTHERS = (
    "returns|yields|receives|raises|exceptions|warns|warnings|examples|attributes|functions|methods|classes"
    "|modules|type aliases|type args|type arguments|type params|type parameters"
)
_NUMPY_PARAMS = "parameters|other parameters"
_NUMPY_OTHERS = (
    "returns|yields|receives|raises|warns|warnings|examples|notes|see also|references|attributes|methods"
    "|functions|classes|modules|type aliases|type parameters|deprecated"
)
_SPHINX_PARAMS = "param|parameter|arg|argument|key|keyword"
_SPHINX_OTHERS = "type|returns|return|rtype|raises|raise|except|exception|var|ivar|cvar|vartype"

# griffe reads any other "Title:" (Google) or underlined title (NumPy) block as an admonition. Those that
# napoleon documents as sections are dropped like sections; the rest ("Usage:", "Supported formats:")
# are ordinary body text and go back into the description.
_ADMONITION_SECTIONS = (
    "attention|caution|danger|deprecated|error|example|hint|important|note|notes|references|see also|tip|todo|warning"
)
_DROPPED_ADMONITIONS = frozenset(title.replace(" ", "-") for title in _ADMONITION_SECTIONS.split("|"))


def _google(names: str) -> re.Pattern[str]:
    return re.compile(rf"^(?:{names}):[ \t]*$", re.IGNORECASE | re.MULTILINE)


def _numpy(names: str) -> re.Pattern[str]:
    return re.compile(rf"^(?:{names})\n[ \t]*-+[ \t]*$", re.IGNORECASE | re.MULTILINE)


def _sphinx(names: str) -> re.Pattern[str]:
    return re.compile(rf"^:(?:{names})[\s:]", re.MULTILINE)


class _Patterns(typing.NamedTuple):
    params: dict[DocstringStyle, re.Pattern[str]]
    """Parameter section markers, by style: NumPy first (an underlined title is the least ambiguous marker),
    then Google, then Sphinx."""
    sections: dict[DocstringStyle, re.Pattern[str]]
    """Any section's marker, by style."""
    google_header: re.Pattern[str]
    crammed_google_header: re.Pattern[str]


@functools.cache
def _patterns() -> _Patterns:
    # Compiled on first use: these alternations take milliseconds to compile, which `import toolkit` need not pay.
    google_header = re.compile(rf"(?:{_GOOGLE_PARAMS}|{_GOOGLE_OTHERS}|{_ADMONITION_SECTIONS}):[ \t]*", re.I)
    return _Patterns(
        params={"numpy": _numpy(_NUMPY_PARAMS), "google": _google(_GOOGLE_PARAMS), "sphinx": _sphinx(_SPHINX_PARAMS)},
        sections={
            "numpy": _numpy(f"{_NUMPY_PARAMS}|{_NUMPY_OTHERS}"),
            "google": _google(f"{_GOOGLE_PARAMS}|{_GOOGLE_OTHERS}|{_ADMONITION_SECTIONS}"),
            "sphinx": _sphinx(f"{_SPHINX_PARAMS}|{_SPHINX_OTHERS}"),
        },
        google_header=google_header,
        crammed_google_header=re.compile(rf"^[ \t]*\S.*\n{google_header.pattern}$", re.IGNORECASE | re.MULTILINE),
    )


def parse_docstring(doc: str | None, style: DocstringStyle | None = None) -> ParsedDocstring:
    """Split a docstring into a description and parameter descriptions.

    Args:
        doc: The raw docstring (`fn.__doc__`), indented or not.
        style: The docstring's style; `None` detects it from the section markers
            (`Args:`, an underlined `Parameters`, `:param x:`).

    Returns:
        The summary and body as `description`, and each documented parameter's description.
    """
    text = inspect.cleandoc(doc) if doc else ""
    found = style if style is not None else detect_style(text)
    # A detected style was found by one of its section markers; a given one must still be looked for.
    if found is None or (style is not None and not _patterns().sections[style].search(text)):
        return ParsedDocstring(description=text, params={})
    return _parse_sections(text, found)


def detect_style(text: str) -> DocstringStyle | None:
    """The style of a cleaned docstring, or `None` when it has no sections."""
    patterns = _patterns()
    for markers in (patterns.params, patterns.sections):
        for style, pattern in markers.items():
            if pattern.search(text):
                return style
    return None


def separate_google_sections(text: str) -> str:
    """Put a blank line above each Google section title that lacks one.

    griffe skips a section whose title directly follows a line of text, and the section then ends up
    in the description. Titles inside fenced code blocks are left alone.
    """
    patterns = _patterns()
    if not patterns.crammed_google_header.search(text):
        return text
    lines: list[str] = []
    in_fence = False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence and lines and lines[-1].strip() and patterns.google_header.fullmatch(line):
            lines.append("")
        lines.append(line)
    return "\n".join(lines)


# The common Google shape, read without griffe (whose import costs about 25 ms, a fifth of a one-tool server's
# start): a summary, then only parameter sections and Returns/Yields/Raises, each entry `name (type): text` on one
# indentation with deeper continuation lines. Anything else (admonitions, examples, blank lines inside a section,
# `*args`, fences, a header without a blank line above) goes to griffe. tests/definition/test_docstrings.py checks
# that both paths agree wherever this one answers.
_SIMPLE_PARAMS = frozenset({"args", "arguments", "params", "parameters"})
_SIMPLE_DROPPED = frozenset({"returns", "yields", "raises"})
_SIMPLE_ENTRY = re.compile(r"([A-Za-z_]\w*)(?:[ \t]*\([^()\n:]*\))?:[ \t]+(\S.*)")
# In the summary, an indented line or a "Word:" opening a line may start what griffe reads as an admonition.
_SIMPLE_UNSURE = re.compile(r"^(?:[ \t]|[\w -]*:)", re.MULTILINE)
_SIMPLE_TITLE_LIKE = re.compile(r"\S[^\n]*:[ \t]*")


class _NotSimple(Exception):
    """The docstring is not of the common Google shape: griffe reads it."""


def _parse_simple_google(text: str) -> ParsedDocstring | None:
    """The docstring's description and params when it has the common Google shape; `None` when griffe must read it."""
    try:
        lines, start = _simple_start(text)
        params: dict[str, str] = {}
        for title, body in _simple_sections(lines, start):
            if title in _SIMPLE_PARAMS:
                _read_simple_params(body, params)
            elif title not in _SIMPLE_DROPPED:
                raise _NotSimple
    except _NotSimple:
        return None
    return ParsedDocstring(description="\n".join(lines[: start - 1]).strip("\n"), params=params)


def _simple_start(text: str) -> tuple[list[str], int]:
    """The docstring's lines and the index of its first section's title, which follows a plain summary and a blank
    line.

    Raises:
        _NotSimple: a fence or a tab, no section title, or a summary griffe might read otherwise.
    """
    if "```" in text or "\t" in text:
        raise _NotSimple
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if _SIMPLE_TITLE_LIKE.fullmatch(line)), 0)
    if start == 0 or lines[start - 1].strip() or _SIMPLE_UNSURE.search("\n".join(lines[: start - 1])):
        raise _NotSimple
    return lines, start


def _simple_sections(lines: list[str], start: int) -> Iterator[tuple[str, list[str]]]:
    """Each section from line `start` on: its lower-cased title and its indented body, ending without blank lines.

    Raises:
        _NotSimple: a body is empty or has a blank line inside, or a section does not follow a blank line.
    """
    i = start
    while i < len(lines):
        title = lines[i].rstrip()[:-1].strip().lower()
        body, i = _simple_body(lines, i + 1)
        yield title, _trimmed(body)


def _simple_body(lines: list[str], i: int) -> tuple[list[str], int]:
    """The indented (or blank) lines from line `i` on, and the index of the line after them.

    Raises:
        _NotSimple: the next section's title does not follow a blank line, or what follows is not a title.
    """
    body: list[str] = []
    while i < len(lines) and (not lines[i] or lines[i][0] == " "):
        body.append(lines[i])
        i += 1
    if i < len(lines) and (lines[i - 1].strip() or not _SIMPLE_TITLE_LIKE.fullmatch(lines[i])):
        raise _NotSimple
    return body, i


def _trimmed(body: list[str]) -> list[str]:
    """A section's body without its trailing blank lines.

    Raises:
        _NotSimple: the body is empty, or has a blank line inside.
    """
    while body and not body[-1].strip():
        body.pop()
    if not body or any(not line.strip() for line in body):
        raise _NotSimple
    return body


def _read_simple_params(body: list[str], params: dict[str, str]) -> None:
    """Add the entries of one parameter section's body to `params`, wrapped lines joined with spaces.

    Raises:
        _NotSimple: a line at the entries' indentation is not `name (type): text`, or a line is indented less.
    """
    indent = len(body[0]) - len(body[0].lstrip(" "))
    name = ""
    for line in body:
        depth = len(line) - len(line.lstrip(" "))
        entry = _SIMPLE_ENTRY.fullmatch(line.strip()) if depth == indent else None
        if entry is not None:
            name = entry[1]
            params[name] = entry[2].strip()
        elif depth > indent:
            params[name] += " " + line.strip()
        else:
            raise _NotSimple


def _parse_sections(text: str, style: DocstringStyle) -> ParsedDocstring:
    """A docstring with sections: read here when it has the common Google shape, else by griffe."""
    if style == "google":
        simple = _parse_simple_google(text)
        if simple is not None:
            return simple
    return _parse_with_griffe(text, style)


def _parse_with_griffe(text: str, style: DocstringStyle) -> ParsedDocstring:
    """The description (text sections and the admonitions that are body text) and parameters griffe reads."""
    import griffe

    description: list[str] = []
    params: dict[str, str] = {}
    for section in _griffe_sections(text, style):
        if section.kind is griffe.DocstringSectionKind.text:
            description.append(section.value.strip("\n"))
        elif section.kind in (griffe.DocstringSectionKind.parameters, griffe.DocstringSectionKind.other_parameters):
            for param in section.value:
                params[param.name] = join_lines(param.description)
        elif section.kind is griffe.DocstringSectionKind.admonition:
            body = _admonition_as_text(section, style)
            if body:
                description.append(body)
    return ParsedDocstring(description="\n\n".join(part for part in description if part.strip()), params=params)


def _griffe_sections(text: str, style: DocstringStyle) -> list[DocstringSection]:
    """griffe's sections of the docstring, parsed in `style` (griffe loads on first use: `import toolkit` stays
    light)."""
    import griffe

    if style == "google":
        return griffe.parse_google(griffe.Docstring(separate_google_sections(text)), warnings=False)
    if style == "numpy":
        return griffe.parse_numpy(griffe.Docstring(text), warnings=False)
    return griffe.parse_sphinx(griffe.Docstring(text), warnings=False)


def _admonition_as_text(section: DocstringSection, style: DocstringStyle) -> str:
    kind = str(section.value.kind)
    if kind in _DROPPED_ADMONITIONS:
        return ""
    title = section.title or kind
    contents: str = section.value.contents
    if style == "numpy":
        return f"{title}\n{'-' * len(title)}\n{contents}"
    # griffe keeps the title ("Usage:") or, for "Kind: Title", lower-cases the kind.
    header = f"{title}:" if title.lower().replace(" ", "-") == kind else f"{kind}: {title}"
    indented = "\n".join(f"    {line}" if line else line for line in contents.split("\n"))
    return f"{header}\n{indented}"


def join_lines(text: str) -> str:
    """Join a description's wrapped lines with spaces, keeping paragraphs apart."""
    if "\n" not in text:
        return text.strip()
    paragraphs = re.split(r"\n[ \t]*\n", text.strip())
    return "\n\n".join(" ".join(line.strip() for line in paragraph.split("\n")) for paragraph in paragraphs)
