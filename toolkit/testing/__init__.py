"""Test your tools: a synchronous `ToolTester`, short result assertions, schema snapshots, and a pytest plugin.

Everything here works without pytest. The pytest fixtures (`toolkit_client`, `toolkit_tester`,
`toolkit_snapshot`, ...) live in `toolkit.testing._plugin`, which pytest loads through the `pytest11` entry
point, so installing toolkit adds them to every test run, and importing `toolkit.testing` in a script costs no
pytest import.
"""

from ._assertions import assert_error, assert_lint_clean, assert_ok, assert_portable, structured, text
from ._snapshots import Snapshot, assert_tools_snapshot, tools_payload
from ._stdio import stdio_command, stdio_environment
from ._tester import Progress, ToolTester

__all__ = [
    "Progress",
    "Snapshot",
    "ToolTester",
    "assert_error",
    "assert_lint_clean",
    "assert_ok",
    "assert_portable",
    "assert_tools_snapshot",
    "stdio_command",
    "stdio_environment",
    "structured",
    "text",
    "tools_payload",
]

# The helpers defined in private modules say they come from here, where users import them.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
