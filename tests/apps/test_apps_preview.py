"""`toolkit preview`, without a browser: it opens `$BROWSER` on its index, lists the tools that have a page, serves
the host page and its scripts, answers the host page's requests from the server, refuses what is not from this
machine, and tells open pages to reload when a page's file changes. (The page rendered by a real browser:
test_apps_browser.py.)"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from preview_process import TIMEOUT, preview

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"


@pytest.fixture
def sales(tmp_path: Path) -> Path:
    """A copy of examples/sales.py and its page, in a folder of the test's own (the preview watches it)."""
    folder = tmp_path / "app"
    folder.mkdir()
    for name in ("sales.py", "sales.html"):
        shutil.copy(EXAMPLES / name, folder / name)
    return folder / "sales.py"


def rpc(http: httpx.Client, method: str, params: dict[str, object]) -> dict[str, object]:
    reply = http.post("rpc", json={"method": method, "params": params})
    assert reply.status_code == 200
    body: dict[str, object] = reply.json()
    return body


def test_the_preview_opens_browser_on_its_index_of_the_tools_with_a_page(sales: Path, tmp_path: Path) -> None:
    with preview(sales, tmp_path) as url, httpx.Client(base_url=url, timeout=TIMEOUT) as http:
        index = http.get("/").text
        host = http.get(f"/?tool=sales_report&arguments={quote(json.dumps({'region': 'north'}))}").text
        bad = http.get("/?tool=sales_report&arguments=%7B")
        bundle = http.get("/ext-apps.js")
        script = http.get("/host.js")

    assert url.startswith("http://127.0.0.1:")
    assert url.endswith("/")
    assert 'name="tool" value="sales_report"' in index
    assert 'value="region_sales"' in index
    assert "region_sales (app-only)" in index
    assert '{"tool": "sales_report", "arguments": {"region": "north"}' in host
    assert bad.status_code == 400
    assert bundle.status_code == script.status_code == 200
    assert "AppBridge" in bundle.text
    assert "McpApps.AppBridge" in script.text


def test_the_host_pages_requests_are_answered_by_the_server_as_an_apps_host_sees_it(
    sales: Path, tmp_path: Path
) -> None:
    with preview(sales, tmp_path) as url, httpx.Client(base_url=url, timeout=TIMEOUT) as http:
        tools = rpc(http, "tools/list", {})
        called = rpc(http, "tools/call", {"name": "region_sales", "arguments": {"region": "south"}})
        read = rpc(http, "resources/read", {"uri": "ui://sales/report"})
        unknown = rpc(http, "prompts/list", {})
        simple = http.post("rpc", content=b'{"method": "tools/list"}', headers={"content-type": "text/plain"})
        rebound = http.get("/", headers={"host": "attacker.example:80"})

    assert [tool["name"] for tool in tools["result"]["tools"]] == ["sales_report", "region_sales"]  # type: ignore[index]
    assert called["result"]["structuredContent"]["total"] == 285  # type: ignore[index]
    [page] = read["result"]["contents"]  # type: ignore[index]
    assert page["mimeType"] == "text/html;profile=mcp-app"
    assert "McpApps" in page["text"]
    assert unknown["error"]["code"] == -32601  # type: ignore[index]
    assert (simple.status_code, rebound.status_code) == (415, 403)


def test_an_edited_page_reloads_the_open_pages_and_is_served_new(sales: Path, tmp_path: Path) -> None:
    page = sales.with_name("sales.html")
    with preview(sales, tmp_path) as url, httpx.Client(base_url=url, timeout=TIMEOUT) as http:
        with http.stream("GET", "/events") as events:
            lines = events.iter_lines()
            assert next(lines) == ": watching"  # said once the watcher has looked: it sees the edit below
            page.write_text(page.read_text(encoding="utf-8").replace("<h2 id=", "<h2 data-edited id="), "utf-8")
            told = [line for line in lines if line]
        read = rpc(http, "resources/read", {"uri": "ui://sales/report"})

    assert told == ["data: reload"]
    assert "data-edited" in read["result"]["contents"][0]["text"]  # type: ignore[index]


def test_toolkit_dev_ui_runs_the_same_preview(sales: Path, tmp_path: Path) -> None:
    with preview(sales, tmp_path, ("dev", "--ui")) as url, httpx.Client(base_url=url, timeout=TIMEOUT) as http:
        index = http.get("/").text

    assert url.startswith("http://127.0.0.1:")
    assert 'name="tool" value="sales_report"' in index


def test_a_body_over_the_servers_message_size_gets_413_and_the_preview_keeps_serving(
    sales: Path, tmp_path: Path
) -> None:
    source = sales.read_text(encoding="utf-8")
    declared = 'Server("sales", version="1.0.0",'
    assert declared in source
    sales.write_text(source.replace(declared, f"{declared} max_message_size=4096,"), encoding="utf-8")
    over = json.dumps({"method": "tools/list", "params": {"padding": "x" * 5000}}).encode()  # past 4096 bytes
    json_type = {"content-type": "application/json"}

    def chunked() -> Iterator[bytes]:  # no Content-Length: the limit is found while reading
        yield over[:3000]
        yield over[3000:]

    with preview(sales, tmp_path) as url, httpx.Client(base_url=url, timeout=TIMEOUT) as http:
        declared_too_large = http.post("rpc", content=over, headers=json_type)
        sent_in_chunks = http.post("rpc", content=chunked(), headers=json_type)
        within = http.post("rpc", json={"method": "tools/list", "params": {"padding": "x" * 3500}})

    assert "content-length" in declared_too_large.request.headers
    assert "content-length" not in sent_in_chunks.request.headers
    assert (declared_too_large.status_code, sent_in_chunks.status_code) == (413, 413)
    assert within.status_code == 200
    assert [tool["name"] for tool in within.json()["result"]["tools"]] == ["sales_report", "region_sales"]
