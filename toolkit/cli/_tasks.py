"""`toolkit call` on a tool the server runs as a task (its status shown, detached with a printed id), and
`toolkit task get|result|cancel ID TARGET`, which picks a task up again."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

import anyio

from toolkit import CallToolResult, ProtocolError, TaskCancelledError, TaskInfo, ToolTask

from ._common import CommandError, CommandTimeout, connect, data_on_stdout, is_url, run, say, seconds
from ._output import ProgressBar, print_result
from ._prompt import TerminalPrompt

if TYPE_CHECKING:
    from toolkit import Client

__all__ = ["detached", "follow", "going_on", "refuse_detach", "resume_hint", "run_call", "task_command", "tasks_ended"]


def resume_hint(task_id: str, args: argparse.Namespace) -> str:
    """How to pick the task up again: the `toolkit task` command for this target."""
    target = "--stdio -- ..." if args.stdio else args.target
    return f"toolkit task result {task_id} {target}"


def status_line(info: TaskInfo) -> str:
    """One line for a task's state: `task ID: working (step 2 of 5)`."""
    return f"task {info.task_id}: {info.status}" + (f" ({info.status_message})" if info.status_message else "")


async def follow(task: ToolTask, bar: ProgressBar | None) -> CallToolResult:
    """Wait for a task's result, showing each change of its state on `bar` (none: quiet)."""
    async for info in task.watch():
        if bar is not None:
            bar.line(status_line(info))
    return await task.result()


async def run_call(
    client: Client, name: str, arguments: dict[str, Any], args: argparse.Namespace, bar: ProgressBar | None
) -> CallToolResult | None:
    """`toolkit call`'s call: its result, at once or once the task the server runs it as has ended (its state shown
    on `bar`); `None` once detached (`--detach`). The task's id goes in `args.started` as soon as it is known."""
    progress = None if bar is None else bar.update
    with anyio.fail_after(math.inf if args.timeout is None else args.timeout):
        # The server decides (2026-07-28), or the tool's taskSupport says (2025-11-25), whether it runs as a task.
        task = await client.start_task(name, arguments, progress=progress)
        if task.id is None:
            return await task
        args.started.append(task.id)
        return None if args.detach else await follow(task, bar)


def going_on(args: argparse.Namespace) -> str:
    """What to add when `toolkit call` stopped waiting for the task it started (none: nothing). Only a server at a URL
    outlives the command: one in this process, or started by it (`--stdio`), ends with it, and its tasks too."""
    started = getattr(args, "started", None)
    if not started:
        return ""
    if is_url(args.target):
        return f"; task {started[0]} goes on: {resume_hint(started[0], args)}"
    where = "the server this command started (--stdio)" if args.stdio else "this process, which serves it"
    return f"; task {started[0]} ends with {where}"


@contextmanager
def tasks_ended(args: argparse.Namespace) -> Iterator[None]:
    """Around `toolkit call`: Ctrl-C names the task left running; a cancelled task is reported in one line."""
    try:
        yield
    except KeyboardInterrupt:
        if args.started:
            say(f"stopped waiting{going_on(args)}")
        raise
    except TaskCancelledError as exc:
        raise CommandError(str(exc)) from exc


def refuse_detach(args: argparse.Namespace) -> None:
    """`--detach` leaves the task to a server that goes on without this command: one at a URL."""
    if args.detach and not is_url(args.target):
        where = "--stdio" if args.stdio else "in this process"
        raise CommandError(
            f"--detach needs a server at a URL: a server started {where} stops when toolkit call exits, and its "
            "tasks with it"
        )


# -- toolkit task ------------------------------------------------------------------------------------------------


@data_on_stdout
def task_command(args: argparse.Namespace, out: TextIO) -> int:
    """`toolkit task get|result|cancel ID TARGET`: a task's state, its result (waited for), or its cancellation."""
    if args.headers and (args.stdio or not is_url(args.target)):
        raise CommandError("-H applies to URL targets (http://... or https://...)")
    prompt = TerminalPrompt(yes=args.yes)
    bar = None if args.quiet else ProgressBar(sys.stderr)

    async def act() -> Any:
        options: dict[str, Any] = {"elicitation_handler": prompt.elicit, "sampling_handler": prompt.sample}
        async with connect(args, **options) as client:
            return await _act(client, args, bar)

    try:
        outcome = run(act)
    except TimeoutError as exc:
        raise CommandTimeout(
            f"task {args.task_id} gave no result within {seconds(args.timeout)} (--timeout); it goes on: "
            f"{resume_hint(args.task_id, args)}"
        ) from exc
    except TaskCancelledError as exc:
        raise CommandError(str(exc)) from exc
    except ProtocolError as exc:
        raise CommandError(f"the server refused: {exc.message} (code {exc.code})") from exc
    finally:
        if bar is not None:
            bar.close()
    return _printed(outcome, args, out)


def _printed(outcome: Any, args: argparse.Namespace, out: TextIO) -> int:
    """What the action came to, printed: the result, the task's state (as JSON with `--raw`), or its cancellation."""
    if isinstance(outcome, CallToolResult):
        return print_result(outcome, raw=args.raw, out=out)
    if isinstance(outcome, TaskInfo):
        if args.raw:
            print(json.dumps(dataclasses.asdict(outcome), indent=2, ensure_ascii=False), file=out)
        else:
            print(status_line(outcome), file=out)
        return 0
    print(f"cancelled {args.task_id}", file=out)
    return 0


async def _act(client: Client, args: argparse.Namespace, bar: ProgressBar | None) -> Any:
    task = client.task(args.task_id)
    if args.action == "get":
        return await task.status()
    if args.action == "cancel":
        await task.cancel()
        return None
    if args.timeout is None:
        return await follow(task, bar)
    with anyio.fail_after(args.timeout):
        return await follow(task, bar)


def detached(task_id: str, args: argparse.Namespace, out: TextIO) -> int:
    """`toolkit call --detach`: the task's id on standard output, and how to pick it up on standard error."""
    print(task_id, file=out)
    say(f"task {task_id} runs on; its result: {resume_hint(task_id, args)}")
    return 0
