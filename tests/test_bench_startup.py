"""`python -m benchmarks.startup`'s split of a stdio server's spawn (interpreter, import, definition of the tools,
serving until `initialize`), and the Node sides' installer saying why it cannot install."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import _node, startup


def test_a_spawn_is_split_into_the_phases_a_host_waits_for(tmp_path: Path) -> None:
    phases = startup.run_phases("toolkit", str(tmp_path), 0)  # `add` alone
    assert all(phases[phase] > 0 for phase in startup.PHASES), phases
    assert sum(phases[phase] for phase in startup.PHASES) == pytest.approx(phases["total"])
    assert phases["cpu import"] > 0
    assert phases["cpu total"] >= phases["cpu import"]  # /proc's ticks: a whole number of them, at least the import


def test_the_node_sides_say_why_they_cannot_be_installed_without_npm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLKIT_BENCH_NODE", str(tmp_path / "node"))
    monkeypatch.setenv("PATH", str(tmp_path))  # no npm on it
    with pytest.raises(_node.NodeMissing, match="npm is not installed"):
        _node.install()
    assert not (tmp_path / "node" / "node_modules").exists()
