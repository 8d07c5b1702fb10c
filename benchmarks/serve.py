"""Start one side's stdio server: `python benchmarks/serve.py SIDE TOOLS_DIR N`.

It serves `add` plus the first N generated tools. Run by path, not with `-m`, and with nothing but `sys`
and `os.path` (both loaded by the interpreter already) before the side's own imports, so start-up time and
memory belong to the framework.
"""

import os.path
import sys


def main() -> None:
    side_name, tools_dir, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(1, tools_dir)
    side = __import__(f"benchmarks.side_{side_name}", fromlist=["side"])
    from benchmarks._fixtures import add

    server = side.new_server()
    if count and hasattr(side, "register_generated"):
        side.register_generated(server, tools_dir, count)
    elif count:
        from bench_tools import TOOLS  # type: ignore[import-not-found]

        for fn in TOOLS[:count]:
            side.register(server, fn)
    side.register(server, add)
    side.run_stdio(server)


if __name__ == "__main__":
    main()
