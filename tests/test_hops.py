"""The hop figure (docs/architecture.md): one `tools/call` runs a handful of toolkit functions in a handful of modules.

A count, not a time: it changes only when the path changes. Measured by `benchmarks/hops.py` with a profiler hook.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import hops

MAX_FUNCTIONS = 12
MAX_MODULES = 5


@pytest.mark.parametrize("backend", hops.BACKENDS)
@pytest.mark.parametrize("name", hops.TOOLS)
@pytest.mark.parametrize("era", hops.ERAS)
def test_one_tools_call_runs_at_most_12_toolkit_functions_in_at_most_5_modules(
    era: str, name: str, backend: str
) -> None:
    functions = hops.count(name, backend, era)
    assert len(functions) <= MAX_FUNCTIONS, sorted(functions)
    assert len(hops.modules(functions)) <= MAX_MODULES, sorted(functions)
    # One argument validation and one serialization of the reply, whatever else changes.
    assert "_definition.tool:call_tool" in functions
    assert sum(function.startswith("_protocol.jsonrpc:encode") for function in functions) == 1
    # No Context for a tool without one.
    assert not any(function.startswith("_engine.context:") for function in functions)
