"""Side-by-side benchmarks of toolkit, the official `mcp` SDK and `fastmcp`.

Run `python -m benchmarks --help`. Every measurement runs in a fresh subprocess (`benchmarks._worker`),
frameworks interleaved round by round; see `docs/performance.md`.

This package imports nothing at import time: the stdio servers it spawns start through it, so anything
imported here would count against every framework's start-up figures.
"""
