"""Start one side's stdio server: `python benchmarks/serve.py SIDE TOOLS_DIR N [MODULE [PAGE_SIZE]]`.

It serves `add` plus the first N generated tools of MODULE (default `bench_tools`), in `tools/list` pages
of PAGE_SIZE when given; a MODULE inside `benchmarks` is imported and all of its `TOOLS` are served. Run by
path, not with `-m`, and with nothing but `sys` and `os.path` (both loaded by the interpreter already) before
the side's own imports, so start-up time and memory belong to the framework.

With `BENCH_PHASES=FILE` in its environment it writes to FILE, before it serves, the wall-clock time and the
process's CPU time (`time.time()`, `time.process_time()`: `time` is loaded with the interpreter) at which its first
line ran, the side's import ended and its tools were defined (`python -m benchmarks.startup` reads them).
"""

import os.path
import sys
import time


def main() -> None:
    began = (time.time(), time.process_time())
    side_name, tools_dir, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    module = sys.argv[4] if len(sys.argv) > 4 else "bench_tools"
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(1, tools_dir)
    side = __import__(f"benchmarks.side_{side_name}", fromlist=["side"])
    from benchmarks._fixtures import add

    imported = (time.time(), time.process_time())

    server = side.new_server(page_size=int(sys.argv[5])) if len(sys.argv) > 5 else side.new_server()
    if module.startswith("benchmarks."):  # hand-written tools (`TOOLS`): every side, the floor too, registers them
        __import__(module)
        for fn in sys.modules[module].TOOLS:
            side.register(server, fn)
    elif count and hasattr(side, "register_generated"):
        side.register_generated(server, tools_dir, count, module)
    elif count:
        for fn in __import__(module).TOOLS[:count]:
            side.register(server, fn)
    side.register(server, add)
    phases = os.environ.get("BENCH_PHASES")
    if phases:
        with open(phases, "w") as file:
            marks = (*began, *imported, time.time(), time.process_time())
            file.write(" ".join(map(str, marks)))
    side.run_stdio(server)


if __name__ == "__main__":
    main()
