"""The performance claims README.md makes, each tied to the rows that measure it, and the check that reruns them.

`python -m benchmarks --check-claims` reruns the rows behind the in-memory, stdio and start-up claims (toolkit, mcp
and the floor, interleaved, five rounds unless `--rounds` says otherwise) and `python -m benchmarks.http
--check-claims` the rows behind the Streamable HTTP claims; both print, for every claim, the range it quotes, what
this run measured (the median of the per-round ratios, and their range) and whether the claim still holds. A claim
holds when every row it covers measures at least the low end of its range: a figure above the range is reported
("understated") but is not a failure. Run it before changing a figure, on a quiet machine and on a busy one.

tests/test_claims.py keeps this list and README.md in step: every figure of README's "Fast" line is a claim here,
quoted word for word.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ._report import EN_DASH, TIMES

__all__ = ["CLAIMS", "Claim", "Verdict", "judge", "report"]


@dataclass(frozen=True)
class Claim:
    """One figure README.md quotes: its words, the range of "times better than mcp" they give, and its rows."""

    words: str
    """The claim as README.md words it, `{range}` standing for the quoted range (see `text`)."""
    low: float
    """The low end of the quoted range, as an advantage over mcp (above 1 is better, whatever the unit)."""
    high: float
    """The high end of the quoted range."""
    rows: tuple[str, ...]
    """The rows that measure it: `python -m benchmarks` row keys, or `http:<era>:<metric>` for benchmarks.http."""

    @property
    def http(self) -> bool:
        """Whether `python -m benchmarks.http` measures it (else `python -m benchmarks`)."""
        return self.rows[0].startswith("http:")

    @property
    def text(self) -> str:
        """The claim as README.md prints it."""
        return self.words.format(range=f"{self.low:g}{EN_DASH}{self.high:g}{TIMES}")


# Advantages are "times better": a quarter of the time is 4, a third of the p99 latency is 3.
CLAIMS = (
    Claim("{range} faster to define tools", 6.0, 12.0, ("define-500", "define-1500")),
    Claim("{range} faster `tools/list` (500 tools)", 6.0, 12.0, ("list-memory",)),
    Claim(
        "{range} more `tools/call`s per second (in memory and over stdio)",
        1.5,
        7.0,
        ("call-memory-sync", "call-memory-async", "call-stdio-client"),
    ),
    Claim("a 501-tool server up {range} faster", 3.5, 6.0, ("spawn-501",)),
    Claim("half the memory", 2.0, 2.5, ("rss-501",)),
    Claim("{range} mcp's `tools/call`s per second in 2026-07-28", 3.0, 10.0, ("http:2026-07-28:calls",)),
    Claim("{range} in 2025-11-25", 5.0, 15.0, ("http:2025-11-25:calls",)),
    Claim("a p99 latency {range} lower", 3.0, 20.0, ("http:2025-11-25:p99", "http:2026-07-28:p99")),
    Claim("{range} less memory per idle session", 20.0, 25.0, ("http:session-memory",)),
)


@dataclass(frozen=True)
class Verdict:
    """What one run says of one claim's row."""

    claim: Claim
    row: str
    ratios: tuple[float, ...]
    """The per-round advantages over mcp this run measured (empty: the row was not measured)."""

    @property
    def median(self) -> float | None:
        return statistics.median(self.ratios) if self.ratios else None

    @property
    def holds(self) -> bool | None:
        """Whether the claim holds on this row (`None`: not measured, nothing can be told)."""
        return None if self.median is None else self.median >= self.claim.low

    def describe(self) -> str:
        quoted = f"{self.claim.low:g}-{self.claim.high:g}x better than mcp"
        if self.median is None:
            return f"{self.row}: quoted {quoted}, not measured"
        spread = f"{min(self.ratios):.1f}-{max(self.ratios):.1f}x, {len(self.ratios)} per-round ratio(s)"
        if not self.holds:
            state = "DOES NOT HOLD"
        elif self.median > self.claim.high:
            state = "holds (understated: above the quoted range)"
        else:
            state = "holds"
        return f"{self.row}: quoted {quoted}, measured {self.median:.1f}x ({spread}): {state}"


def judge(claims: Iterable[Claim], ratios: Mapping[str, Iterable[float]]) -> list[Verdict]:
    """Every claim's verdict on each of its rows, from the per-round advantages measured for each row."""
    return [Verdict(claim, row, tuple(ratios.get(row, ()))) for claim in claims for row in claim.rows]


def report(verdicts: list[Verdict]) -> tuple[str, bool]:
    """The printed check (one block per claim) and whether every measured claim holds."""
    lines = ["", "README.md's claims, rerun:"]
    last = None
    for verdict in verdicts:
        if verdict.claim is not last:
            lines.append(f'- "{verdict.claim.text}"')
            last = verdict.claim
        lines.append(f"    {verdict.describe()}")
    broken = [v for v in verdicts if v.holds is False]
    lines.append(
        f"{len(broken)} claim row(s) no longer hold: change the README's figure (quote what a quiet and a busy "
        "run both measure) or the code"
        if broken
        else "every measured claim holds"
    )
    return "\n".join(lines), not broken
