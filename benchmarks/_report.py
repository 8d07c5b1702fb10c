"""Medians, ranges and ratios per row, as a Markdown table."""

from __future__ import annotations

import statistics
from typing import Any

from ._plan import Row
from ._sides import BASELINE, FLOOR

# Spelled as escapes so the source stays ASCII; the table wants the real signs.
EN_DASH, TIMES = "\u2013", "\u00d7"
RANGE = f"min{EN_DASH}max"


def number(value: float) -> str:
    """Three significant figures at most, thousands separated: 1,926 / 47.6 / 0.93 / -0.41."""
    if value < 0:
        return f"-{number(-value)}"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def advantage(row: Row, value: float, reference: float) -> float:
    """How many times better `value` is than `reference`: above 1 is better, whatever the unit."""
    return value / reference if row.higher_is_better else reference / value


def per_round_ratio(row: Row, samples: dict[str, list[float | None]], side: str, reference: str) -> float | None:
    """The median over rounds of `side`'s advantage over `reference` measured in the same round."""
    if not row.ratios:
        return None
    pairs = zip(samples.get(side, []), samples.get(reference, []), strict=False)
    ratios = [advantage(row, a, b) for a, b in pairs if a is not None and b is not None and a > 0 and b > 0]
    return statistics.median(ratios) if ratios else None


def cell(values: list[float | None]) -> str:
    measured = [v for v in values if v is not None]
    if not measured:
        return "—"
    median = number(statistics.median(measured))
    if len(measured) == 1:
        return median
    return f"{median} ({number(min(measured))}{EN_DASH}{number(max(measured))})"


def summarize(row: Row, samples: dict[str, list[float | None]], sides: list[str]) -> dict[str, Any]:
    """The JSON record of one row: raw samples, medians and the per-round ratios of every framework."""
    medians = {s: statistics.median(v) for s in sides if (v := [x for x in samples.get(s, []) if x is not None])}
    ratios = {
        s: {"vs_mcp": per_round_ratio(row, samples, s, BASELINE), "vs_floor": per_round_ratio(row, samples, s, FLOOR)}
        for s in sides
        if s != FLOOR
    }
    return {
        "key": row.key,
        "label": row.label,
        "unit": row.unit,
        "higher_is_better": row.higher_is_better,
        "samples": samples,
        "medians": medians,
        "ratios": ratios,
    }


def _ratio(value: float | None, *, percent: bool) -> str:
    if value is None:
        return ""
    return f"{value:.0%}" if percent else f"{value:.1f}{TIMES}"


def met(row: Row, record: dict[str, Any]) -> str:
    """Whether toolkit's per-round ratio reaches the target: "yes", "no", or "" when it cannot be told."""
    if row.target is None or "toolkit" not in record["ratios"]:
        return ""
    against, least, _ = row.target
    ratio = record["ratios"]["toolkit"]["vs_mcp" if against == BASELINE else "vs_floor"]
    if ratio is None:
        return ""
    return "yes" if ratio >= least else "no"


def table(records: list[dict[str, Any]], sides: list[str], rows: list[Row]) -> str:
    """The Markdown table: one column per side, then each framework's advantage over mcp and share of the floor."""
    frameworks = [s for s in sides if s != FLOOR]
    header = ["measure", *sides]
    versus_mcp = BASELINE in frameworks and len(frameworks) > 1
    if versus_mcp:
        header += [f"{s} vs mcp" for s in frameworks if s != BASELINE]
    if FLOOR in sides:
        header += [f"{s} vs floor" for s in frameworks]
    targets = "toolkit" in frameworks and any(r.target for r in rows)
    if targets:
        header += ["toolkit target", "met"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for row, record in zip(rows, records, strict=True):
        samples = record["samples"]
        cells = [f"{row.label} ({row.unit})"] + [cell(samples.get(s, [])) for s in sides]
        if versus_mcp:
            cells += [_ratio(record["ratios"][s]["vs_mcp"], percent=False) for s in frameworks if s != BASELINE]
        if FLOOR in sides:
            cells += [_ratio(record["ratios"][s]["vs_floor"], percent=True) for s in frameworks]
        if targets:
            cells += [row.target[2] if row.target else "", met(row, record)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
