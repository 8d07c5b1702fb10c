"""`python -m toolkit`: the `toolkit` command."""

import sys

try:
    from toolkit.cli import main
except Exception:
    # `python -m` puts the current directory first on the path: a `json.py` there breaks toolkit's own imports.
    from toolkit._shadowing import shadowing_module

    shadow = shadowing_module()
    if shadow is None:
        raise
    sys.stderr.write(f"toolkit: error: {shadow}\n")
    sys.exit(2)

sys.exit(main())
