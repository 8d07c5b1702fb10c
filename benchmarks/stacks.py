"""Summarize a py-spy raw (collapsed stacks) profile: each function's share of samples, inclusive and self.

    py-spy record -r 2000 -f raw -o stacks.txt -- python -m benchmarks._worker call-memory toolkit \\
        '{"tool": "add", "calls": 30000, "tools_dir": "/tmp/gen"}'
    python -m benchmarks.stacks stacks.txt --match toolkit --top 30

`--within FUNCTION` keeps only the samples whose stack passes through FUNCTION (the timed loop, say), so
start-up does not dilute the shares.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

_LINE = re.compile(r" \(([^:]+):\d+\)$")


def _frame(frame: str) -> str:
    """`name (path/to/module.py:42)` -> `module.py:name`, one key per function rather than per line."""
    match = _LINE.search(frame)
    if match is None:
        return frame
    path = match.group(1).rsplit("/", 1)[-1]
    return f"{path}:{frame[: match.start()]}"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stacks", description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--match", default="", help="show only functions whose key contains this text")
    parser.add_argument("--within", help="count only samples whose stack contains this function name")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    with open(args.file, encoding="utf-8") as file:
        for line in file:
            stack, _, count_text = line.rstrip("\n").rpartition(" ")
            frames = [_frame(f) for f in stack.split(";")]
            if args.within and not any(f.endswith(f":{args.within}") for f in frames):
                continue
            count = int(count_text)
            total += count
            for key in set(frames):
                inclusive[key] += count
            own[frames[-1]] += count
    print(f"{total} samples")
    print(f"{'inclusive':>9} {'self':>6}  function")
    shown = [(k, n) for k, n in inclusive.most_common() if args.match in k][: args.top]
    for key, count in shown:
        print(f"{count / total:9.1%} {own[key] / total:6.1%}  {key}")


if __name__ == "__main__":
    main()
