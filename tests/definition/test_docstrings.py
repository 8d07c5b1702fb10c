"""Docstring parsing: summary and body become the description, parameter sections become `params`.

The corpus below is made of real functions, each decorated with what `parse_docstring` must return
for its `__doc__`. `benchmarks/docstring_parsers.py` loads this file to score the docstring libraries.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from toolkit._definition.docstrings import DocstringStyle, ParsedDocstring, parse_docstring


@dataclass(frozen=True)
class Case:
    """A corpus function and what its docstring must parse to."""

    function: Callable[..., object]
    style: DocstringStyle | None
    """The style the docstring is written in; `None` when it has no sections."""
    description: str
    params: dict[str, str]

    @property
    def id(self) -> str:
        return self.function.__name__

    @property
    def expected(self) -> ParsedDocstring:
        return ParsedDocstring(description=self.description, params=self.params)


def expect(
    style: DocstringStyle | None, description: str, params: dict[str, str] | None = None
) -> Callable[[Callable[..., object]], Case]:
    def wrap(function: Callable[..., object]) -> Case:
        return Case(function, style, description, params or {})

    return wrap


# --- No sections ---------------------------------------------------------------------------------


@expect(None, "")
def plain_no_docstring() -> None:
    pass


@expect(None, "")
def plain_empty_docstring() -> None:
    """"""


@expect(None, "")
def plain_blank_docstring() -> None:
    """ """


@expect(None, "Ping the server.")
def plain_one_line() -> None:
    """Ping the server."""


@expect(None, "Ping the server.")
def plain_one_line_padded() -> None:
    """
    Ping the server.
    """


@expect(
    None,
    "Summarise a document.\n\nThe summary is extractive: sentences are\npicked, never rewritten.\n\n"
    "Long documents are split into chunks first.",
)
def plain_multi_paragraph() -> None:
    """Summarise a document.

    The summary is extractive: sentences are
    picked, never rewritten.

    Long documents are split into chunks first.
    """


@expect(None, "Send « Grüße » to 世界 🌍.\n\nÇa marche très bien.")
def plain_unicode() -> None:
    """Send « Grüße » to 世界 🌍.

    Ça marche très bien.
    """


@expect(None, "Parse a time such as 12:30.\n\nRatios like 3:2 are fine,\nand so is a trailing colon:")
def plain_colons_are_not_sections() -> None:
    """Parse a time such as 12:30.

    Ratios like 3:2 are fine,
    and so is a trailing colon:
    """


# --- Google --------------------------------------------------------------------------------------


@expect("google", "Search the index.", {"query": "Text to look for.", "limit": "Maximum number of hits."})
def google_args(query: str, limit: int) -> None:
    """Search the index.

    Args:
        query: Text to look for.
        limit: Maximum number of hits.
    """


@expect("google", "Search the index.", {"query": "Text to look for.", "limit": "Maximum number of hits."})
def google_types(query: str, limit: int = 10) -> None:
    """Search the index.

    Args:
        query (str): Text to look for.
        limit (int, optional): Maximum number of hits.
    """


@expect(
    "google",
    "Create a calendar event.",
    {
        "title": "Short title shown in the calendar grid, at most 80 characters.",
        "attendees": "E-mail addresses of the people to invite; the organiser is added automatically.",
    },
)
def google_multiline_params(title: str, attendees: list[str]) -> None:
    """Create a calendar event.

    Args:
        title: Short title shown in the calendar grid,
            at most 80 characters.
        attendees: E-mail addresses of the people to invite;
            the organiser is added
            automatically.
    """


@expect(
    "google",
    "Resize an image.\n\nThe aspect ratio is kept; the image is padded\nwith transparent pixels.\n\n"
    "Animated images are resized frame by frame.",
    {"width": "Target width in pixels.", "height": "Target height in pixels."},
)
def google_body_and_sections(width: int, height: int) -> None:
    """Resize an image.

    The aspect ratio is kept; the image is padded
    with transparent pixels.

    Animated images are resized frame by frame.

    Args:
        width: Target width in pixels.
        height: Target height in pixels.

    Returns:
        The resized image as PNG bytes.

    Raises:
        ValueError: If a dimension is not positive.
    """


@expect("google", "Delete a file.", {"path": "Path of the file to delete."})
def google_missing_blank_line(path: str) -> None:
    """Delete a file.
    Args:
        path: Path of the file to delete.
    Returns:
        Whether the file existed.
    Raises:
        PermissionError: If the file is read-only.
    """


@expect("google", "Translate text.", {"text": "What to translate.", "target": "Language code, e.g. `fr`."})
def google_arguments_alias(text: str, target: str) -> None:
    """Translate text.

    Arguments:
        text: What to translate.
        target: Language code, e.g. `fr`.
    """


@expect("google", "Round a number.", {"value": "The number.", "digits": "Decimal places to keep."})
def google_parameters_alias(value: float, digits: int) -> None:
    """Round a number.

    Parameters:
        value: The number.
        digits: Decimal places to keep.
    """


@expect("google", "Toggle a feature flag.", {"name": "Flag name.", "enabled": ""})
def google_empty_param_description(name: str, enabled: bool) -> None:
    """Toggle a feature flag.

    Args:
        name: Flag name.
        enabled:
    """


@expect("google", "Stream log lines.", {"service": "Service whose logs to follow."})
def google_yields(service: str) -> None:
    """Stream log lines.

    Args:
        service: Service whose logs to follow.

    Yields:
        One log line at a time.
    """


@expect("google", "Add two numbers.", {"a": "First addend.", "b": "Second addend."})
def google_examples_and_notes(a: int, b: int) -> None:
    """Add two numbers.

    Args:
        a: First addend.
        b: Second addend.

    Examples:
        >>> google_examples_and_notes(1, 2)
        3

    Note:
        Integers never overflow in Python.

    Notes:
        Floats are not accepted.
    """


@expect("google", "Book a room.", {"room": "Room identifier.", "hours": "Duration of the booking in hours."})
def google_sections_reordered(room: str, hours: int) -> None:
    """Book a room.

    Returns:
        The booking reference.

    Raises:
        LookupError: If the room does not exist.

    Args:
        room: Room identifier.
        hours: Duration of the booking
            in hours.

    Warning:
        Bookings cannot be cancelled.
    """


@expect(
    "google",
    "Send an e-mail.",
    {"to": "Recipient address.", "subject": "Subject line.", "cc": "Addresses to copy.", "urgent": "Flag as urgent."},
)
def google_keyword_args(to: str, subject: str, *, cc: list[str], urgent: bool) -> None:
    """Send an e-mail.

    Args:
        to: Recipient address.
        subject: Subject line.

    Keyword Args:
        cc: Addresses to copy.
        urgent: Flag as urgent.
    """


@expect(
    "google",
    "Open a ticket.",
    {"priority": "1 (urgent) to 4.", "notify": "Page the on-call engineer.", "title": "One-line summary."},
)
def google_keyword_args_first(title: str, *, priority: int, notify: bool) -> None:
    """Open a ticket.

    Keyword Arguments:
        priority: 1 (urgent) to 4.
        notify: Page the on-call engineer.

    Raises:
        PermissionError: If the caller may not open tickets.

    Args:
        title: One-line summary.
    """


@expect(
    "google",
    "Greet a person — politely.",
    {"name": "Nom de la personne, e.g. « Zoë ».", "emoji": "An emoji, 👋 by default."},
)
def google_unicode(name: str, emoji: str) -> None:
    """Greet a person — politely.

    Args:
        name: Nom de la personne, e.g. « Zoë ».
        emoji: An emoji, 👋 by default.
    """


@expect(
    "google",
    "Run a SQL query.",
    {
        "sql": "The statement.\n\nOnly `SELECT` statements are allowed; anything else is rejected.",
        "timeout": "Seconds.",
    },
)
def google_param_paragraphs(sql: str, timeout: float) -> None:
    """Run a SQL query.

    Args:
        sql: The statement.

            Only `SELECT` statements are allowed;
            anything else is rejected.
        timeout: Seconds.
    """


@expect(
    "google",
    "Render a template.\n\nFor instance:\n\n```python\nArgs:\n    x: not a section, this is code\n```",
    {"template": "Template source."},
)
def google_code_fence_in_body(template: str) -> None:
    """Render a template.

    For instance:

    ```python
    Args:
        x: not a section, this is code
    ```

    Args:
        template: Template source.
    """


@expect(
    "google",
    "Convert an image.\n\nSupported formats:\n    - PNG\n    - JPEG",
    {"path": "Image to convert."},
)
def google_unknown_heading_stays_in_description(path: str) -> None:
    """Convert an image.

    Supported formats:
        - PNG
        - JPEG

    Args:
        path: Image to convert.
    """


@expect(
    "google",
    'Archive old rows.\n\nFor example:\n    archive("events", days=30)',
    {"table": "Table name.", "days": "Age in days."},
)
def google_unknown_heading_after_args(table: str, days: int) -> None:
    """Archive old rows.

    Args:
        table: Table name.
        days: Age in days.

    For example:
        archive("events", days=30)
    """


# --- NumPy ---------------------------------------------------------------------------------------


@expect("numpy", "Compute a moving average.", {"values": "The series.", "window": "Number of points per average."})
def numpy_parameters(values: list[float], window: int) -> None:
    """Compute a moving average.

    Parameters
    ----------
    values : list of float
        The series.
    window : int
        Number of points per average.
    """


@expect("numpy", "Compute a moving average.", {"values": "The series.", "window": "Number of points per average."})
def numpy_no_types(values: list[float], window: int) -> None:
    """Compute a moving average.

    Parameters
    ----------
    values
        The series.
    window
        Number of points per average.
    """


@expect(
    "numpy",
    "Fit a line.",
    {
        "x": "Sample positions, sorted in increasing order, without duplicates.",
        "y": "Sample values, one per position.",
    },
)
def numpy_multiline_params(x: list[float], y: list[float]) -> None:
    """Fit a line.

    Parameters
    ----------
    x : array_like
        Sample positions, sorted in increasing order,
        without duplicates.
    y : array_like
        Sample values,
        one per position.
    """


@expect(
    "numpy",
    "Interpolate missing values.\n\nGaps are filled linearly.\nLeading and trailing gaps are left alone.",
    {"data": "Series with gaps.", "limit": "Longest gap to fill."},
)
def numpy_body_and_sections(data: list[float], limit: int) -> None:
    """Interpolate missing values.

    Gaps are filled linearly.
    Leading and trailing gaps are left alone.

    Parameters
    ----------
    data : list of float
        Series with gaps.
    limit : int
        Longest gap to fill.

    Returns
    -------
    list of float
        The filled series.

    Raises
    ------
    ValueError
        If `limit` is negative.
    """


@expect("numpy", "Normalise a vector.", {"v": "The vector."})
def numpy_missing_blank_line(v: list[float]) -> None:
    """Normalise a vector.
    Parameters
    ----------
    v : list of float
        The vector.
    Returns
    -------
    list of float
        A unit vector.
    """


@expect("numpy", "Integrate a function.", {"f": "Integrand.", "a": "Lower bound.", "b": "Upper bound."})
def numpy_notes_and_examples(f: Callable[[float], float], a: float, b: float) -> None:
    """Integrate a function.

    Parameters
    ----------
    f : callable
        Integrand.
    a : float
        Lower bound.
    b : float
        Upper bound.

    Notes
    -----
    Uses Simpson's rule.

    Examples
    --------
    >>> numpy_notes_and_examples(lambda x: x, 0, 1)
    0.5
    """


@expect("numpy", "Generate primes.", {"limit": "Largest candidate."})
def numpy_yields(limit: int) -> None:
    """Generate primes.

    Parameters
    ----------
    limit : int
        Largest candidate.

    Yields
    ------
    int
        The next prime.
    """


@expect("numpy", "Merge two tables.", {"left": "Left table.", "right": "Right table.", "on": "Join column."})
def numpy_sections_reordered(left: str, right: str, on: str) -> None:
    """Merge two tables.

    Returns
    -------
    str
        Name of the merged table.

    See Also
    --------
    numpy_parameters : Unrelated, but listed.

    Parameters
    ----------
    left : str
        Left table.
    right : str
        Right table.
    on : str
        Join column.
    """


@expect("numpy", "Plot a histogram.", {"data": "Values to bin.", "bins": "Number of bins.", "color": "Bar colour."})
def numpy_other_parameters(data: list[float], bins: int, color: str) -> None:
    """Plot a histogram.

    Parameters
    ----------
    data : list of float
        Values to bin.
    bins : int
        Number of bins.

    Other Parameters
    ----------------
    color : str
        Bar colour.
    """


@expect("numpy", "Clear the cache.", {"region": "Region to clear.", "force": ""})
def numpy_empty_param_description(region: str, force: bool) -> None:
    """Clear the cache.

    Parameters
    ----------
    region : str
        Region to clear.
    force : bool
    """


@expect("numpy", "Convert °C to °F.", {"celsius": "Température en degrés — e.g. 21.5."})
def numpy_unicode(celsius: float) -> None:
    """Convert °C to °F.

    Parameters
    ----------
    celsius : float
        Température en degrés — e.g. 21.5.
    """


@expect("numpy", "Sample rows.", {"n": "How many rows. Default is 10.", "seed": "Random seed."})
def numpy_optional_and_default(n: int = 10, seed: int | None = None) -> None:
    """Sample rows.

    Parameters
    ----------
    n : int, optional
        How many rows. Default is 10.
    seed : int or None, default None
        Random seed.
    """


@expect("numpy", "Move the cursor.", {"x": "Screen coordinates.", "y": "Screen coordinates.", "animate": "Glide."})
def numpy_shared_description(x: int, y: int, animate: bool) -> None:
    """Move the cursor.

    Parameters
    ----------
    x, y : int
        Screen coordinates.
    animate : bool
        Glide.
    """


# --- Sphinx --------------------------------------------------------------------------------------


@expect("sphinx", "Fetch a URL.", {"url": "Address to fetch.", "timeout": "Seconds to wait."})
def sphinx_params(url: str, timeout: float) -> None:
    """Fetch a URL.

    :param url: Address to fetch.
    :param timeout: Seconds to wait.
    """


@expect("sphinx", "Fetch a URL.", {"url": "Address to fetch.", "timeout": "Seconds to wait."})
def sphinx_type_fields(url: str, timeout: float) -> None:
    """Fetch a URL.

    :param url: Address to fetch.
    :type url: str
    :param timeout: Seconds to wait.
    :type timeout: float
    """


@expect("sphinx", "Fetch a URL.", {"url": "Address to fetch.", "timeout": "Seconds to wait."})
def sphinx_inline_types(url: str, timeout: float) -> None:
    """Fetch a URL.

    :param str url: Address to fetch.
    :param float timeout: Seconds to wait.
    """


@expect(
    "sphinx",
    "Archive a project.",
    {"project": "Project slug, as shown in the address bar.", "reason": "Free text kept in the audit log."},
)
def sphinx_multiline_params(project: str, reason: str) -> None:
    """Archive a project.

    :param project: Project slug, as shown
        in the address bar.
    :param reason: Free text kept
        in the audit log.
    """


@expect(
    "sphinx",
    "Transfer money.\n\nBoth accounts are locked for the duration\nof the transfer.",
    {"source": "Account to debit.", "target": "Account to credit.", "amount": "Amount in cents."},
)
def sphinx_body_and_sections(source: str, target: str, amount: int) -> None:
    """Transfer money.

    Both accounts are locked for the duration
    of the transfer.

    :param source: Account to debit.
    :param target: Account to credit.
    :param amount: Amount in cents.
    :returns: The transaction id.
    :rtype: str
    :raises ValueError: If the amount is not positive.
    """


@expect("sphinx", "Restart a service.", {"name": "Service name."})
def sphinx_missing_blank_line(name: str) -> None:
    """Restart a service.
    :param name: Service name.
    :returns: Whether it came back up.
    """


@expect("sphinx", "Lock a door.", {"door": "Door id.", "quiet": ""})
def sphinx_empty_param_description(door: str, quiet: bool) -> None:
    """Lock a door.

    :param door: Door id.
    :param quiet:
    """


@expect("sphinx", "Count words.", {"text": "Input text.", "unique": "Count distinct words only."})
def sphinx_fields_reordered(text: str, unique: bool) -> None:
    """Count words.

    :returns: The count.
    :rtype: int
    :raises TypeError: If `text` is not a string.
    :param text: Input text.
    :param unique: Count distinct words only.
    """


@expect("sphinx", "Look up a word — in any language.", {"word": "Le mot à chercher, e.g. « café »."})
def sphinx_unicode(word: str) -> None:
    """Look up a word — in any language.

    :param word: Le mot à chercher, e.g. « café ».
    """


@expect(
    "sphinx", "Rename a file.", {"old": "Current name.", "new": "New name.", "overwrite": "Replace an existing file."}
)
def sphinx_field_aliases(old: str, new: str, overwrite: bool) -> None:
    """Rename a file.

    :arg old: Current name.
    :parameter new: New name.
    :keyword overwrite: Replace an existing file.
    """


@expect("sphinx", "Return the server time.\n\nThe clock is synchronised over NTP.")
def sphinx_returns_only() -> None:
    """Return the server time.

    The clock is synchronised over NTP.

    :returns: ISO 8601 timestamp.
    :rtype: str
    """


CASES = [value for value in list(globals().values()) if isinstance(value, Case)]


# --- Tests ---------------------------------------------------------------------------------------


def test_corpus_covers_every_style() -> None:
    counts = {style: sum(c.style == style for c in CASES) for style in ("google", "numpy", "sphinx")}
    assert min(counts.values()) >= 10
    assert len(CASES) >= 36


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_docstring_parses_to_expected_description_and_params(case: Case) -> None:
    assert parse_docstring(case.function.__doc__) == case.expected


@pytest.mark.parametrize("case", [c for c in CASES if c.style is not None], ids=lambda c: c.id)
def test_explicit_style_gives_the_same_result_as_detection(case: Case) -> None:
    assert parse_docstring(case.function.__doc__, style=case.style) == case.expected


def half_migrated(width: int) -> None:
    """Resize the canvas.

    Args:
        width: New width.

    :param width: New width, in pixels.
    """


def test_detection_prefers_google_when_styles_are_mixed() -> None:
    parsed = parse_docstring(half_migrated.__doc__)

    assert parsed == ParsedDocstring(
        description="Resize the canvas.\n\n:param width: New width, in pixels.", params={"width": "New width."}
    )


def test_explicit_style_overrides_detection() -> None:
    parsed = parse_docstring(half_migrated.__doc__, style="sphinx")

    assert parsed == ParsedDocstring(
        description="Resize the canvas.\n\nArgs:\n    width: New width.", params={"width": "New width, in pixels."}
    )


def test_explicit_style_that_does_not_match_leaves_the_docstring_as_description() -> None:
    parsed = parse_docstring(google_args.function.__doc__, style="numpy")

    assert parsed == ParsedDocstring(
        description="Search the index.\n\nArgs:\n    query: Text to look for.\n    limit: Maximum number of hits.",
        params={},
    )


def test_plain_docstrings_do_not_import_the_parser() -> None:
    code = (
        "import sys, toolkit._definition.docstrings as d\n"
        "d.parse_docstring('Ping.\\n\\nBody: text.')\n"
        "assert 'griffe' not in sys.modules and 'docstring_parser' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_common_google_shape_is_read_without_importing_the_parser() -> None:
    # A summary, Args with `name (type): text` and wrapped lines, Returns and Raises: most tools' docstrings, and
    # a fifth of a one-tool server's start-up when griffe is imported for it.
    code = (
        "import json, sys, toolkit._definition.docstrings as d\n"
        "p = d.parse_docstring('Add.\\n\\nMore text.\\n\\nArgs:\\n    a (int): The first\\n        addend.\\n'\n"
        "    '    b: The second.\\n\\nReturns:\\n    The sum.\\n\\nRaises:\\n    ValueError: never.')\n"
        "print(json.dumps([p.description, p.params, 'griffe' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(out.stdout) == ["Add.\n\nMore text.", {"a": "The first addend.", "b": "The second."}, False]


def test_parser_warnings_are_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    def sloppy(x: int) -> None:
        """Do it.

        Args:
            x (list[int): Broken type.
              Confusing indentation.
            ghost: Not a parameter of this function.
        """

    with caplog.at_level(logging.DEBUG):
        parsed = parse_docstring(sloppy.__doc__)

    assert caplog.records == []
    assert parsed.params["ghost"] == "Not a parameter of this function."
