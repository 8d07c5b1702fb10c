"""`toolkit lint` on MCP Apps: a page that loads from origins its CSP does not declare (TK701), an app-only tool no
page can call (TK702), a page and a tool that do not meet (TK703)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import toolkit_here

from toolkit import UI, Server, tool
from toolkit._lint import Finding, lint
from toolkit.cli._breaking_changes import compare
from toolkit.testing import assert_lint_clean

CHART = (
    "<html><head>"
    '<script src="https://cdn.jsdelivr.net/npm/chart.js"></script>'
    '<link rel="stylesheet" href="//fonts.example.com/a.css">'
    '<script src="page.js"></script>'
    "<style>@import url('https://styles.other.net/x.css');</style>"
    "</head><body></body></html>"
)


def chart_server(page: UI, *, app_only_too: bool = True) -> Server:
    @tool(ui=page, read_only=True)
    def weekly_chart(region: str) -> str:
        """Chart the units sold each week in one sales region.

        Args:
            region: The region's name, as the sales system spells it.
        """
        return region

    @tool(visibility=["app"], read_only=True)
    def weekly_rows(region: str) -> str:
        """List every row behind the weekly chart of one sales region, for the page's table.

        Args:
            region: The region's name, as the sales system spells it.
        """
        return region

    return Server("charts", tools=[weekly_chart, weekly_rows] if app_only_too else [weekly_rows])


def test_a_page_loading_from_undeclared_origins_is_an_error_per_origin() -> None:
    page = UI("ui://charts/weekly", CHART, csp={"resourceDomains": ["https://*.example.com"]})
    findings = [(f.rule.code, f.tool, f.message) for f in lint_of(chart_server(page))]

    assert findings == [
        (
            "TK701",
            "weekly_chart",
            "ui://charts/weekly loads https://cdn.jsdelivr.net/npm/chart.js from https://cdn.jsdelivr.net, which its "
            "csp's resourceDomains does not declare",
        ),
        (
            "TK701",
            "weekly_chart",
            "ui://charts/weekly loads https://styles.other.net/x.css from https://styles.other.net, which its csp's "
            "resourceDomains does not declare",
        ),
    ]


def test_a_page_that_declares_its_origins_is_clean() -> None:
    page = UI(
        "ui://charts/weekly",
        CHART,
        csp={"resourceDomains": ["https://cdn.jsdelivr.net", "https://*.example.com", "https://styles.other.net"]},
    )
    assert_lint_clean(chart_server(page))


def test_an_app_only_tool_no_page_can_call_is_an_error() -> None:
    server = chart_server(UI("ui://charts/weekly", "<p>chart</p>"), app_only_too=False)

    assert [(f.rule.code, f.tool) for f in lint_of(server)] == [("TK702", "weekly_rows")]


def test_a_tool_naming_a_page_nobody_serves_is_reported() -> None:
    @tool(meta={"ui": {"resourceUri": "ui://charts/missing"}}, read_only=True)
    def weekly_total(region: str) -> int:
        """Add up the units sold this week in one sales region.

        Args:
            region: The region's name, as the sales system spells it.
        """
        return len(region)

    server = chart_server(UI("ui://charts/weekly", "<p>chart</p>"))
    server.add_tool(weekly_total)

    assert [(f.rule.code, f.tool, f.message) for f in lint_of(server)] == [
        ("TK703", "weekly_total", "names the page ui://charts/missing, which the server does not serve")
    ]


CHART_MODULE = """\
from toolkit import UI, Server, tool

PAGE = UI("ui://c/p", '<script src="https://cdn.example.org/x.js"></script>')


@tool(ui=PAGE, read_only=True)
def weekly_chart(region: str) -> str:
    \"\"\"Chart the units sold each week in one sales region.

    Args:
        region: The region's name, as the sales system spells it.
    \"\"\"
    return region


server = Server("charts", tools=[weekly_chart])

if __name__ == "__main__":
    server.run()
"""


@pytest.mark.parametrize("how", ["module", "stdio"])
def test_toolkit_lint_reports_them_from_the_command_line(
    tmp_path: Path, how: str, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "charts.py"
    module.write_text(CHART_MODULE, encoding="utf-8")
    # A module is linted in process; a server over stdio is read as an MCP Apps host reads it (resources/read). The
    # command's `main` runs in the test's process (its own process shows nothing more: tests/cli has those tests).
    target = [str(module)] if how == "module" else ["--stdio", "--", sys.executable, str(module)]
    done = toolkit_here("lint", "--select", "TK7", *target, cwd=tmp_path, capfd=capfd, monkeypatch=monkeypatch)

    assert done.returncode == 1, done.stderr
    assert "ui://c/p loads https://cdn.example.org/x.js from https://cdn.example.org, which" in done.stdout


def lint_of(server: Server) -> list[Finding]:
    return [f for f in lint(server) if f.rule.code.startswith("TK7")]


def test_toolkit_check_reports_a_tool_gone_app_only_as_breaking_and_a_page_as_compatible() -> None:
    def wire(name: str, **ui: object) -> dict[str, object]:
        return {"name": name, "inputSchema": {"type": "object"}, "_meta": {"ui": ui} if ui else {}}

    old = [wire("chart"), wire("rows"), wire("refresh", visibility=["app"]), wire("table", resourceUri="ui://a")]
    new = [
        wire("chart", resourceUri="ui://c"),
        wire("rows", visibility=["app"]),
        wire("refresh", visibility=["model", "app"]),
        wire("table", resourceUri="ui://b"),
    ]

    assert [(c.severity, c.kind, c.tool, c.message) for c in compare(old, new)] == [
        ("compatible", "page-changed", "chart", "page ui://c added"),
        ("compatible", "now-for-the-model", "refresh", "no longer app-only: the model may call it"),
        ("breaking", "now-app-only", "rows", "now app-only: the model can no longer call it"),
        ("compatible", "page-changed", "table", "page moved from ui://a to ui://b"),
    ]


@pytest.mark.parametrize("how", ["module", "stdio"])
def test_toolkit_check_reports_the_pages_problems_beside_the_changes(
    tmp_path: Path, how: str, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "charts.py"
    module.write_text(CHART_MODULE, encoding="utf-8")
    target = [str(module)] if how == "module" else ["--stdio", "--", sys.executable, str(module)]

    def check(*args: str) -> subprocess.CompletedProcess[str]:
        return toolkit_here("check", *args, *target, cwd=tmp_path, capfd=capfd, monkeypatch=monkeypatch)

    written = check("--write", "tools.json")
    checked = check("--against", "tools.json")
    as_json = check("--against", "tools.json", "--format", "json")

    assert written.returncode == 0, written.stderr
    # No change since the snapshot, and yet an error: the page loads a script from an origin its CSP does not declare.
    assert checked.returncode == 1, checked.stderr
    assert checked.stdout.startswith("No changes.\n")
    assert "TK701" in checked.stdout
    assert "ui://c/p loads https://cdn.example.org/x.js from https://cdn.example.org" in checked.stdout
    report = json.loads(as_json.stdout)
    assert (as_json.returncode, report["breaking"], [f["code"] for f in report["pages"]]) == (1, 0, ["TK701"])
