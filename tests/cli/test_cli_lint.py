"""`toolkit lint`: the report, its formats, select and ignore, exit statuses, a remote server over stdio, the
silences in code, `--call`, and the lint badge of `toolkit docs`.

The command runs for real in a subprocess where the process is what is shown (the report and its status, a call that
outlasts --timeout, a server at a URL); the other tests read what `main` says, in this process (`in_process`).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from cli_helpers import PYTHON, InProcess, outcome, serving, toolkit

SHOP = '''
from typing import Annotated

import anyio
from pydantic import Field

from toolkit import Server, ToolError, tool


@tool(read_only=True)
def delete_order(order_id: Annotated[str, Field(description="The order's id.")]) -> str:
    """Delete an order for good; it cannot be restored afterwards."""
    return order_id


@tool(read_only=True, idempotent=True, open_world=False)
def order_total(order_id: Annotated[str, Field(description="The order's id.")]) -> str:
    """The total of one order in euros, taxes included; use find_orders first to get the id."""
    if order_id == "missing":
        raise ToolError("no such order; use find_orders to get ids")
    return "x" * int(order_id)


@tool(read_only=True, idempotent=True)
async def wait_for_order(order_id: Annotated[str, Field(description="The order's id.")]) -> str:
    """Wait until an order ships and say when; it may wait for days."""
    await anyio.sleep_forever()
    return order_id


@tool(lint_ignore={"TK301": "resolved inside the export directory"})
def export_orders(path: Annotated[str, Field(description="Where to write them.")]) -> str:
    """Write every order of the shop to a CSV file, replacing what was there."""
    return path


server = Server("shop", tools=[delete_order, order_total, wait_for_order, export_orders])

if __name__ == "__main__":
    server.run()
'''


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    (tmp_path / "shop.py").write_text(SHOP, encoding="utf-8")
    return tmp_path


def test_lint_prints_one_line_a_finding_at_the_tools_function_and_exits_1_on_an_error(shop: Path) -> None:
    run = toolkit("lint", "shop.py", cwd=shop)

    assert (run.returncode, run.stderr) == (1, "")
    assert run.stdout == (
        "shop.py:10: TK201 [delete_order] is marked read-only, but its name or description says it does: delete "
        "[error]\n1 finding in 4 tools: 1 error, 0 warnings\n"
    )


def test_select_ignore_and_json(shop: Path, in_process: InProcess) -> None:
    ignored = in_process("lint", "shop.py", "--ignore", "TK201", cwd=shop)
    selected = in_process("lint", "shop.py", "--select", "TK2", "--format", "json", cwd=shop)

    assert ignored.returncode == 0
    assert "TK201" not in ignored.stdout
    assert selected.returncode == 1
    report = json.loads(selected.stdout)
    assert (report["tools"], report["errors"]) == (4, 1)
    assert report["findings"][0] == {
        "code": "TK201",
        "name": "destructive-marked-read-only",
        "level": "error",
        "tool": "delete_order",
        "location": "shop.py:10",
        "message": "is marked read-only, but its name or description says it does: delete",
        "hint": "drop read_only=True; mark it destructive",
        "source": "https://modelcontextprotocol.io/specification/2025-11-25/schema#toolannotations",
    }
    assert {f["code"] for f in report["findings"]} <= {"TK201", "TK202", "TK203", "TK204", "TK205"}


def test_a_silenced_finding_is_left_out_locally_and_seen_over_stdio(shop: Path, in_process: InProcess) -> None:
    local = in_process("lint", "shop.py", "--select", "TK301", cwd=shop)
    remote = in_process("lint", "--select", "TK301", "--stdio", "--", PYTHON, "shop.py", cwd=shop)

    assert (local.returncode, local.stdout) == (0, "0 findings in 4 tools\n")
    # Over stdio the tools are what any client sees: the name and the fix instead of the line, no silences.
    assert (remote.returncode, remote.stdout) == (
        0,
        "export_orders: TK301 parameter 'path' is a free-form string used as a path, with no enum, pattern or "
        "format [warning] (fix: narrow it (an enum, a pattern, a format) or take structured fields and build the "
        "command in code)\n1 finding in 4 tools: 0 errors, 1 warning\n",
    )


def test_call_measures_a_read_only_idempotent_tool_against_the_budget(shop: Path, in_process: InProcess) -> None:
    small = in_process("lint", "shop.py", "--select", "TK4", "--call", 'order_total={"order_id": "40"}', cwd=shop)
    large = in_process(
        "lint", "shop.py", "--select", "TK4", "--call", 'order_total={"order_id": "4000"}', "--budget", "100", cwd=shop
    )

    assert (small.returncode, small.stdout) == (0, "0 findings in 4 tools\n")
    assert (large.returncode, large.stdout) == (
        1,
        "shop.py:16: TK402 [order_total] returned ≈ 1,000 tokens (4,000 characters), over the budget of 100 [error]\n"
        "1 finding in 4 tools: 1 error, 0 warnings\n",
    )


def test_call_calls_a_read_only_tool_not_marked_idempotent(shop: Path, in_process: InProcess) -> None:
    # The spec gives idempotentHint meaning only when readOnlyHint is false: delete_order is marked read-only only.
    run = in_process("lint", "shop.py", "--select", "TK4", "--call", 'delete_order={"order_id": "1"}', cwd=shop)

    assert outcome(run) == (0, "0 findings in 4 tools\n", "")


ASKS_IN_CODE = """
from toolkit import Context, Server, tool


@tool
async def delete_file(path: str, ctx: Context) -> str:
    \"""Delete a file of the workspace.\"""
    answer = await ctx.confirm(f"Delete {path}?")
    return "deleted" if answer.action == "accept" else "kept"


@tool
async def delete_folder(path: str) -> str:
    \"""Delete a folder of the workspace.\"""
    return path


server = Server("files", tools=[delete_file, delete_folder])
"""


def test_a_tool_whose_code_confirms_is_not_found_to_delete_without_asking(
    tmp_path: Path, in_process: InProcess
) -> None:
    (tmp_path / "files.py").write_text(ASKS_IN_CODE, encoding="utf-8")

    run = in_process("lint", "files.py", "--select", "TK203", cwd=tmp_path)

    assert outcome(run) == (
        0,
        "files.py:12: TK203 [delete_folder] deletes without asking the user (no confirm=) [warning]\n"
        "1 finding in 2 tools: 0 errors, 1 warning\n",
        "",
    )


def test_call_refuses_a_tool_that_is_not_read_only(shop: Path, in_process: InProcess) -> None:
    run = in_process("lint", "shop.py", "--call", 'export_orders={"path": "x"}', cwd=shop)
    unknown = in_process("lint", "shop.py", "--call", "order_totl", cwd=shop)
    bad = in_process("lint", "shop.py", "--call", "order_total=[1]", cwd=shop)
    broken = in_process("lint", "shop.py", "--call", "order_total={", cwd=shop)
    typo = in_process("lint", "shop.py", "--select", "TK2,TK9", cwd=shop)
    budget = in_process("lint", "shop.py", "--budget", "0", cwd=shop)

    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == (
        "toolkit: error: --call export_orders: lint calls only tools marked read-only; export_orders is not "
        "(readOnlyHint)\n"
    )
    assert unknown.stderr == "toolkit: error: --call: no tool named 'order_totl'; did you mean 'order_total'?\n"
    assert bad.stderr == "toolkit: error: --call order_total=[1] (the arguments after '=') must be a JSON object\n"
    assert broken.stderr.startswith(
        "toolkit: error: --call order_total={ (the arguments after '=') is not valid JSON: "
    )
    assert (budget.returncode, budget.stderr.splitlines()[-1]) == (
        2,
        "toolkit lint: error: argument --budget: '0' is not a number of tokens above 0",
    )
    assert (typo.returncode, typo.stderr) == (
        2,
        "toolkit: error: no lint rule has the code 'TK9' (the codes: TK001, TK101, TK102, TK103, TK104, TK105, TK106, "
        "TK107, TK201, TK202, TK203, TK204, TK205, TK301, TK401, TK402, TK501, TK601, TK602, TK701, TK702, TK703)\n",
    )


def test_a_call_that_returns_an_error_result_says_nothing_was_measured_and_exits_1(
    shop: Path, in_process: InProcess
) -> None:
    run = in_process("lint", "shop.py", "--select", "TK4", "--call", 'order_total={"order_id": "missing"}', cwd=shop)

    assert outcome(run) == (
        1,
        "0 findings in 4 tools\n",
        "toolkit lint: --call order_total returned an error result, so nothing was measured: no such order; use "
        "find_orders to get ids\n",
    )


RAISES = """
from toolkit import ProtocolError, Server, tool


@tool(read_only=True, idempotent=True, lint_ignore={"TK105": "the name says it"})
def lookup(key: str) -> str:
    \"\"\"Look up the value stored under a key and return it; an empty key is refused.\"\"\"
    if not key:
        raise ProtocolError(-32602, "empty key")
    return key


server = Server("more", tools=[lookup])
"""


def test_a_tool_that_raises_a_protocol_error_under_call_is_a_finding_not_a_traceback(
    tmp_path: Path, in_process: InProcess
) -> None:
    (tmp_path / "more.py").write_text(RAISES, encoding="utf-8")

    run = in_process("lint", "more.py", "--call", 'lookup={"key": ""}', cwd=tmp_path)

    assert outcome(run) == (
        1,
        "more.py:5: TK501 [lookup] raises ProtocolError for a failed run; clients get an opaque error, not its text "
        "[error]\n1 finding in 1 tool: 1 error, 0 warnings\n",
        "toolkit lint: --call lookup returned an error result, so nothing was measured: Error executing tool "
        "'lookup'\n",
    )


PROTOCOL_ERROR_SERVER = """
import json
import sys

TOOL = {
    "name": "read_config",
    "description": "Read one setting of the service's configuration by its key.",
    "inputSchema": {"type": "object", "properties": {"key": {"type": "string", "description": "The key."}}},
    "annotations": {"readOnlyHint": True, "idempotentHint": True},
}
SIGN_IN = {**TOOL, "name": "show_secrets", "description": "Show the service's secrets, once the user has signed in."}
NEEDS_URL = {"elicitations": [{"mode": "url", "elicitationId": "1", "url": "https://127.0.0.1/", "message": "Sign in"}]}
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "raw", "version": "1"}}
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    elif message["method"] == "tools/list":
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [TOOL, SIGN_IN]}}
    elif message["params"]["name"] == "show_secrets":
        error = {"code": -32042, "message": "sign in first", "data": NEEDS_URL}
        reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
    else:
        reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": "no such key"}}
    print(json.dumps(reply), flush=True)
"""


def test_call_reports_a_protocol_error_for_a_failed_run(tmp_path: Path, in_process: InProcess) -> None:
    (tmp_path / "raw.py").write_text(PROTOCOL_ERROR_SERVER, encoding="utf-8")

    run = in_process(
        "lint",
        "--select",
        "TK5",
        "--call",
        'read_config={"key": "nope"}',
        "--stdio",
        "--",
        PYTHON,
        "raw.py",
        cwd=tmp_path,
    )

    assert (run.returncode, run.stderr) == (1, "")
    # -32042 is the spec's answer for a call that needs the user on a web page first: not a failure.
    assert run.stdout.splitlines() == [
        "read_config: TK501 answered a call with a protocol error (-32603: no such key) [error] (fix: raise "
        "ToolError('what went wrong and what to do') (a result with isError))",
        "1 finding in 2 tools: 1 error, 0 warnings",
    ]


def test_docs_show_each_tools_findings_as_a_badge(shop: Path, in_process: InProcess) -> None:
    run = in_process("docs", "shop.py", cwd=shop)

    assert run.returncode == 0
    assert "| `delete_order` | `read-only` `open-world` `lint: TK201` | `order_id` |" in run.stdout
    assert "**Lint:** `TK201` is marked read-only, but its name or description says it does: delete" in run.stdout
    assert "`lint: TK301`" not in run.stdout  # silenced in the code


def test_docs_without_lint_leave_out_every_badge_and_lint_line(shop: Path, in_process: InProcess) -> None:
    shown = in_process("docs", "shop.py", cwd=shop)
    run = in_process("docs", "shop.py", "--no-lint", cwd=shop)

    assert (run.returncode, run.stderr) == (0, "")
    assert "| `delete_order` | `read-only` `open-world` | `order_id` |" in run.stdout
    assert [line for line in run.stdout.splitlines() if "lint" in line.lower()] == []
    # Only the findings differ: the badges and the **Lint:** lines are all that --no-lint leaves out.
    assert run.stdout == re.sub(r" `lint: TK\d+`|\*\*Lint:\*\*[^\n]*\n\n", "", shown.stdout)


def test_the_pytest_helper_fails_a_test_on_findings(shop: Path) -> None:
    (shop / "test_shop.py").write_text(
        "from shop import server\nfrom toolkit.testing import assert_lint_clean\n\n\n"
        "def test_lint():\n    assert_lint_clean(server)\n",
        encoding="utf-8",
    )

    run = subprocess.run(
        [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_shop.py"],
        capture_output=True,
        text=True,
        cwd=shop,
        timeout=120,
        check=False,
    )

    assert run.returncode == 1
    assert "toolkit lint: 1 finding:" in run.stdout
    assert "- shop.py:10: TK201 [delete_order] is marked read-only" in run.stdout


def test_a_call_that_does_not_finish_within_the_timeout_exits_124(shop: Path) -> None:
    run = toolkit("lint", "shop.py", "--call", 'wait_for_order={"order_id": "1"}', "--timeout", "0.5", cwd=shop)

    assert (run.returncode, run.stdout) == (124, "")
    assert run.stderr == "toolkit: error: lint: the calls gave no result within 0.5 seconds (--timeout)\n"


def test_a_server_at_a_url_is_linted_and_called_as_any_client_sees_it(shop: Path) -> None:
    with serving(shop / "shop.py") as served:
        run = toolkit(
            "lint",
            served.url,
            "--select",
            "TK2,TK4",
            "--call",
            'order_total={"order_id": "400"}',
            "--budget",
            "10",
            cwd=shop,
        )

    assert (run.returncode, run.stderr) == (1, "")
    assert run.stdout.splitlines() == [
        "delete_order: TK201 is marked read-only, but its name or description says it does: delete [error] (fix: drop "
        "read_only=True; mark it destructive)",
        "order_total: TK402 returned ≈ 100 tokens (400 characters), over the budget of 10 [error] (fix: return less "
        "by default: page, filter or summarise)",
        "2 findings in 4 tools: 2 errors, 0 warnings",
    ]
