"""README.md's performance claims and `benchmarks/claims.py` stay in step (`python -m benchmarks --check-claims`).

Every figure README's "Fast" line quotes is a registered claim, word for word, with the rows that measure it; the
check itself is judged here on samples made up for the purpose (the rerun is a benchmark, not a test).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks import _plan, claims

ROOT = Path(__file__).resolve().parents[1]

HTTP_ROWS = {f"http:{era}:{metric}" for era in ("2025-11-25", "2026-07-28") for metric in ("calls", "p99")} | {
    "http:session-memory"
}


def _fast_line() -> str:
    """README's "Fast" bullet, its lines joined."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^- \*\*Fast\*\*(.*?)(?=^- \*\*|^#)", text, re.MULTILINE | re.DOTALL)
    assert match is not None, "README.md has no '- **Fast**' bullet"
    return " ".join(match.group(1).split())


@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.text)
def test_every_claim_is_in_the_readme_word_for_word(claim: claims.Claim) -> None:
    assert claim.text in _fast_line()
    assert claim.low < claim.high


def test_every_figure_of_the_readme_fast_line_is_a_claim() -> None:
    rest = _fast_line()
    for claim in claims.CLAIMS:
        rest = rest.replace(claim.text, "")
    # What remains may name commands and versions, not figures: a number next to a times sign, a "fold", or a unit.
    assert not re.findall(r"\d[\d.,]*\s*(?:\u00d7|x\b|KiB|MiB|ms\b|%)", rest), rest


def test_every_claim_names_rows_that_exist() -> None:
    keys = {row.key for row in _plan.rows(quick=False)}
    for claim in claims.CLAIMS:
        assert claim.rows, claim
        known = HTTP_ROWS if claim.http else keys
        assert set(claim.rows) <= known, claim


def test_a_claim_holds_when_every_row_reaches_its_low_end() -> None:
    claim = claims.Claim("{range} faster", 2.0, 4.0, ("a", "b"))
    verdicts = claims.judge([claim], {"a": [2.5, 3.0, 1.5], "b": [5.0, 6.0, 7.0]})
    assert [v.median for v in verdicts] == [2.5, 6.0]
    assert [v.holds for v in verdicts] == [True, True]
    assert "understated" in verdicts[1].describe()
    text, held = claims.report(verdicts)
    assert held
    assert text.count("): holds") == 2


def test_a_claim_that_one_row_misses_does_not_hold_and_an_unmeasured_row_tells_nothing() -> None:
    claim = claims.Claim("{range} faster", 2.0, 4.0, ("a", "b", "c"))
    verdicts = claims.judge([claim], {"a": [3.0], "b": [1.0, 1.9, 2.5]})
    assert [v.holds for v in verdicts] == [True, False, None]
    text, held = claims.report(verdicts)
    assert not held
    assert "b: quoted 2-4x better than mcp, measured 1.9x (1.0-2.5x, 3 per-round ratio(s)): DOES NOT HOLD" in text
    assert "c: quoted 2-4x better than mcp, not measured" in text
    assert "1 claim row(s) no longer hold" in text


def test_a_claim_prints_its_range_as_the_readme_does() -> None:
    assert claims.Claim("{range} more calls", 2.0, 5.5, ("a",)).text == "2\u20135.5\u00d7 more calls"
