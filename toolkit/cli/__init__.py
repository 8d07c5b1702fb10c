"""The `toolkit` command: serve, list, search, call, document and check the tools of a module or of any stdio server.

Exit codes: 0 success; 1 when the answer is "no" (a tool call returned `isError`, docs are out of date, a
breaking change was found, no tool matched a search); 2 for usage errors and targets that cannot be loaded or
reached; 124 when `--timeout` expired; 130 on Ctrl-C; 141 when standard output was closed early (`| head`).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence

from toolkit._shadowing import shadowing_module

from ._common import CommandError, CommandTimeout
from ._parser import parse_arguments

__all__ = ["main"]

_TIMEOUT_STATUS = 124  # as timeout(1)
_BROKEN_PIPE_STATUS = 141  # 128 + SIGPIPE, what a shell reports for a reader that closed early


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `toolkit` command with `argv` (default: `sys.argv[1:]`) and return its exit status."""
    args = parse_arguments(sys.argv[1:] if argv is None else argv)
    try:
        status: int = args.run(args)
        sys.stdout.flush()
    except CommandTimeout as exc:
        _report(exc, args.traceback)
        return _TIMEOUT_STATUS
    except CommandError as exc:
        _report(exc, args.traceback)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader left (`toolkit docs | head -1`): nothing more to say, and nobody to say it to. Standard output
        # points at /dev/null from here, so that the interpreter's last flush at exit cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return _BROKEN_PIPE_STATUS
    except Exception:
        # A module of the user's named as a standard one (`json.py` next to the server) breaks what imports it later.
        shadow = shadowing_module()
        if shadow is None:
            raise
        print(f"toolkit: error: {shadow}", file=sys.stderr)
        return 2
    return status


def _report(exc: CommandError, full: bool) -> None:
    if full:
        # The first cause is what went wrong (the module's own exception, the server's end); the chain
        # above it only says how toolkit passed it on.
        cause: BaseException = exc
        while cause.__cause__ is not None:
            cause = cause.__cause__
        if cause is not exc:
            traceback.print_exception(type(cause), cause, cause.__traceback__, chain=False, file=sys.stderr)
    print(f"toolkit: error: {exc}", file=sys.stderr)
