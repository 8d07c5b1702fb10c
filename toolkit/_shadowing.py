"""Which file of the user's shadows a module of Python's standard library (a `json.py` next to the server's file).

Such a file is found first on `sys.path` (the target's directory, or the current one under `python -m`), so the
standard module's users import it instead and fail far from the cause, with a traceback that never names it. Only
the standard library is imported here, so that `python -m toolkit` can say so when importing toolkit itself failed.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig

__all__ = ["shadowing_module"]


def shadowing_module() -> str | None:
    """`'/path/json.py' shadows the standard library's 'json' module: rename it`, for the first imported module named
    as a standard one whose file is not in the standard library; None when there is none."""
    names: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())  # Python 3.10 and later
    # Installed packages are no user's file: setuptools' own `distutils` (its `_distutils`, put in place by a .pth
    # once anything imports distutils) would otherwise be blamed for every unrelated error.
    library = tuple(
        os.path.realpath(path) + os.sep
        for path in {sysconfig.get_path(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
        if path
    )
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if name not in names or not isinstance(path, str):
            continue
        if not os.path.realpath(path).startswith(library):
            with contextlib.suppress(ValueError):  # another drive, on Windows
                path = os.path.relpath(path)
            return f"{path!r} shadows the standard library's {name!r} module: rename it"
    return None
