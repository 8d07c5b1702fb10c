"""Reading a tool's signature (toolkit/_definition/signature.py) stands on its own floor: it spots the Context
parameter by its marker base (toolkit/_markers.py), so it loads none of the engine or the asking code."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from toolkit import Context, tool


def test_reading_a_signature_loads_no_asking_or_engine_module() -> None:
    # The package's `__init__` re-exports everything, so the package is stood up empty (its path only): what loads
    # then is the signature module's own imports, which is what this pins.
    code = (
        "import importlib.util, json, sys, types\n"
        "spec = importlib.util.find_spec('toolkit')\n"
        "package = types.ModuleType('toolkit')\n"
        "package.__path__ = list(spec.submodule_search_locations)\n"
        "sys.modules['toolkit'] = package\n"
        "import toolkit._definition.signature\n"
        "print(json.dumps(sorted(name for name in sys.modules if name.startswith('toolkit.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    loaded = json.loads(out.stdout)
    assert "toolkit._definition.signature" in loaded
    assert [name for name in loaded if name.startswith(("toolkit._asking", "toolkit._engine"))] == []


def test_a_context_parameter_is_recognised_by_its_marker_in_every_spelling() -> None:
    @tool
    def plain(x: int, ctx: Context) -> int:
        return x

    @tool
    def typed(x: int, ctx: Context[dict[str, Any]]) -> int:
        return x

    @tool
    def optional(x: int, ctx: Context | None = None) -> int:
        return x

    expected: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    expected["additionalProperties"] = False
    assert [t.definition.input_schema for t in (plain, typed, optional)] == [expected] * 3
    assert [t.may_ask for t in (plain, typed, optional)] == [True] * 3
