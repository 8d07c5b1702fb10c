"""The scale rows' plots, drawn from the measured numbers: `python -m benchmarks --scale --plots`.

Redraw them from a saved run with `python -m benchmarks._plots RESULTS.json [DIR]`. Each figure is drawn
only when its rows were measured; matplotlib (in the `bench` extra) loads only here.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from . import _plan

COLOURS = {"toolkit": "#1f77b4", "mcp": "#ff7f0e", "fastmcp": "#2ca02c", "floor": "#7f7f7f"}
SIDES = tuple(COLOURS)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.grid": True, "grid.alpha": 0.3, "figure.dpi": 110})
    return plt


class _Figures:
    """Medians and ranges of a run's rows, by key and side."""

    def __init__(self, report: dict[str, Any]) -> None:
        self.rows = {r["key"]: r for r in report["rows"]}
        self.series: dict[str, dict[str, Any]] = report.get("series", {})
        self.rounds = report.get("rounds")

    def has(self, *keys: str) -> bool:
        return all(k in self.rows for k in keys)

    def sides(self, key: str) -> list[str]:
        return [s for s in SIDES if s in self.rows[key]["medians"]]

    def median(self, key: str, side: str) -> float | None:
        value = self.rows[key]["medians"].get(side)
        return None if value is None else float(value)

    def spread(self, key: str, side: str) -> tuple[float, float]:
        """(median - min, max - median), for error bars."""
        values = [v for v in self.rows[key]["samples"].get(side, []) if v is not None]
        middle = statistics.median(values)
        return middle - min(values), max(values) - middle


def _concurrency(plt: Any, f: _Figures, directory: Path) -> Path | None:
    keys = [f"conc-{n}-{m}" for n in _plan.IN_FLIGHT for m in ("rate", "p50", "p99")]
    if not f.has(*keys):
        return None
    figure, (rate, latency) = plt.subplots(1, 2, figsize=(10, 4))
    x = list(_plan.IN_FLIGHT)
    for side in f.sides("conc-1-rate"):
        colour = COLOURS[side]
        rates = [f.median(f"conc-{n}-rate", side) for n in x]
        errors = list(zip(*(f.spread(f"conc-{n}-rate", side) for n in x), strict=True))
        rate.errorbar(x, rates, yerr=errors, marker="o", color=colour, label=side, capsize=2)
        p50 = [f.median(f"conc-{n}-p50", side) for n in x]
        p99 = [f.median(f"conc-{n}-p99", side) for n in x]
        latency.plot(x, p50, marker="o", color=colour, label=f"{side} p50")
        latency.plot(x, p99, marker="^", linestyle="--", color=colour, label=f"{side} p99")
        if f.has("conns-rate") and (conns := f.median("conns-rate", side)) is not None:
            label = f"{_plan.CONNECTIONS} connections, 1 in flight on each" if side == "toolkit" else None
            rate.scatter([_plan.CONNECTIONS], [conns], s=90, facecolors="none", edgecolors=colour, label=label)
    for axes in (rate, latency):
        axes.set_xscale("log")
        axes.set_xticks(x, [f"{n:,}" for n in x])
        axes.minorticks_off()
    rate.set(xlabel="calls in flight on one connection", ylabel="calls/s (median, min-max)")
    rate.set_title("Throughput: async tool awaiting 1 ms", fontsize=9)
    rate.set_ylim(bottom=0)
    rate.legend(fontsize=8, loc="upper left")
    latency.set(yscale="log", xlabel="calls in flight on one connection", ylabel="latency (ms, median)")
    latency.set_title("Latency per call: p50 (solid), p99 (dashed)", fontsize=9)
    latency.legend(fontsize=7, ncol=2)
    return _save(plt, figure, directory / "scale-concurrency.png")


def _bars(axes: Any, f: _Figures, bars: dict[str, str], unit: str, *, log: bool = False) -> None:
    """One group of bars per figure key (`bars` maps each key to its label), one bar per side in each group."""
    keys, labels = list(bars), list(bars.values())
    sides = [s for s in SIDES if any(f.median(k, s) is not None for k in keys)]
    width = 0.8 / max(len(sides), 1)
    for i, side in enumerate(sides):
        xs = [j + (i - (len(sides) - 1) / 2) * width for j in range(len(keys))]
        values = [f.median(k, side) for k in keys]
        shown = [(x, v, k) for x, v, k in zip(xs, values, keys, strict=True) if v is not None]
        if not shown:
            continue
        errors = list(zip(*(f.spread(k, side) for _, _, k in shown), strict=True))
        axes.bar(
            [x for x, _, _ in shown],
            [v for _, v, _ in shown],
            width,
            yerr=errors,
            color=COLOURS[side],
            label=side,
            error_kw={"elinewidth": 0.8, "ecolor": "0.35", "capsize": 2},
        )
        for (x, v, _), top in zip(shown, errors[1], strict=True):
            axes.annotate(
                _short(v), (x, v + top), ha="center", va="bottom", fontsize=6, xytext=(0, 2), textcoords="offset points"
            )
    axes.set_xticks(range(len(keys)), labels, fontsize=8)
    axes.set_ylabel(unit)
    if log:
        axes.set_yscale("log")
    axes.grid(axis="x", visible=False)


def _short(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def _size(plt: Any, f: _Figures, directory: Path) -> Path | None:
    kinds = ("text-arg", "records-arg", "records-result")
    labels = ["1 MB str argument", "1 MB of records\nas argument", "1 MB of records\nas result"]
    memory = [f"size-{k}" for k in kinds]
    stdio = [f"size-stdio-{k}" for k in kinds]
    if not f.has(*memory, *stdio):
        return None
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    _bars(left, f, dict(zip(memory, labels, strict=True)), "ms per call (log)", log=True)
    left.set_title("In memory, each framework's own client (checks output)", fontsize=9)
    _bars(right, f, dict(zip(stdio, labels, strict=True)), "ms per call (log)", log=True)
    right.set_title("Over stdio, hand-written client (server alone)", fontsize=9)
    right.legend(fontsize=8)
    return _save(plt, figure, directory / "scale-size.png")


def _many_tools(plt: Any, f: _Figures, directory: Path) -> Path | None:
    keys = ("tools-10k-spawn", "tools-10k-first", "tools-10k-list", "tools-10k-paged", "tools-10k-rss")
    if not f.has(*keys):
        return None
    figure, (start, listing, memory) = plt.subplots(1, 3, figsize=(11, 4), width_ratios=[1, 3, 1])
    _bars(start, f, {"tools-10k-spawn": "spawn to\ninitialize response"}, "ms")
    _bars(
        listing,
        f,
        {
            "tools-10k-first": "first listing,\none page",
            "tools-10k-list": "warm listing,\none page",
            "tools-10k-paged": f"warm listing, pages\nof {_plan.PAGE_SIZE} (all)",
            "tools-10k-page": "one page\n(warm)",
        },
        "ms (log)",
        log=True,
    )
    _bars(memory, f, {"tools-10k-rss": "RSS after\nlisting"}, "MiB")
    figure.suptitle(f"A stdio server with {_plan.MANY_TOOLS:,} tools (hand-written client)", fontsize=10)
    handles, labels = listing.get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8)
    return _save(plt, figure, directory / "scale-many-tools.png", bottom=0.07)


def _long_run(plt: Any, f: _Figures, directory: Path) -> Path | None:
    samples = f.series.get("long-run", {})
    if not samples:
        return None
    figure, axes = plt.subplots(figsize=(8, 4))
    for side in SIDES:
        if side not in samples:
            continue
        points = samples[side]["rss"]
        axes.plot([x / 1000 for x, _ in points], [y for _, y in points], color=COLOURS[side], label=side)
    axes.set(xlabel="calls made (thousands)", ylabel="process RSS (MiB)")
    axes.set_ylim(bottom=0)
    axes.set_title(
        f"Sequential in-memory calls on one connection, RSS every {_plan.LONG_SAMPLE_EVERY:,} calls "
        f"(stopped at {_plan.LONG_CALLS:,} or {_plan.LONG_SECONDS} s)",
        fontsize=9,
    )
    axes.legend(fontsize=8)
    return _save(plt, figure, directory / "scale-long-run.png")


def _save(plt: Any, figure: Any, path: Path, *, bottom: float = 0.0) -> Path:
    figure.tight_layout(rect=(0, bottom, 1, 1))
    figure.savefig(path)
    plt.close(figure)
    return path


def draw(report: dict[str, Any], directory: Path) -> list[Path]:
    """Draw every plot whose rows `report` (the JSON of a run) holds into `directory`; return the files."""
    directory.mkdir(parents=True, exist_ok=True)
    plt = _pyplot()
    f = _Figures(report)
    drawn = [draw_one(plt, f, directory) for draw_one in (_concurrency, _size, _many_tools, _long_run)]
    return [p for p in drawn if p is not None]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._plots", description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a run's JSON (python -m benchmarks --json PATH)")
    parser.add_argument("directory", type=Path, nargs="?", default=Path("docs/img"))
    args = parser.parse_args()
    for path in draw(json.loads(args.results.read_text(encoding="utf-8")), args.directory):
        print(f"drew {path}")


if __name__ == "__main__":
    main()
