"""Every module in `examples/` imports, and its tools work through a real client."""

import base64
import contextlib
import importlib.util
import os
import shutil
import sqlite3
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from toolkit import CallToolResult, Client, ImageContent, ProtocolError, SampleResult, Server, Tool
from toolkit.testing import ToolTester, assert_error

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


def load(name: str) -> ModuleType:
    """Import `examples/<name>.py` as `examples_<name>` (the examples folder is not a package)."""
    module_name = f"examples_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # pydantic resolves the models' string annotations through it
    spec.loader.exec_module(module)
    return module


def error(text: str) -> tuple[bool, str]:
    return (True, text)


def outcome(result: CallToolResult) -> tuple[bool, str]:
    """`(is_error, text)`: results from a client also carry protocol fields such as `resultType`."""
    return (result.is_error, result.text)


def test_every_example_module_is_tested() -> None:
    # tcp_transport.py is a transport, not a tool module: tests/transports/test_tcp_example.py drives it end to end.
    assert sorted(p.stem for p in EXAMPLES.glob("*.py")) == [
        "calculator",
        "files",
        "inventory",
        "notes",
        "sales",
        "tcp_transport",
        "trips",
    ]


@pytest.mark.parametrize("name", ["calculator", "files", "inventory", "notes", "trips"])
def test_every_example_imports_and_defines_tools(name: str) -> None:
    module = load(name)
    tools = [value for value in vars(module).values() if isinstance(value, Tool)]
    classes = [
        value for value in vars(module).values() if isinstance(value, type) and value.__module__ == module.__name__
    ]
    methods = [v for cls in classes for v in vars(cls).values() if isinstance(v, Tool)]
    assert len(tools) + len(methods) >= 4


@pytest.mark.anyio
async def test_calculator_tools_compute_and_explain_their_errors() -> None:
    calculator = load("calculator")
    async with Client(calculator.server) as client:
        names = [t.name for t in await client.list_tools()]
        assert names == ["add", "divide", "combine", "summarize", "convert_distance", "round_money", "evaluate"]
        assert (await client.call_tool("add", {"a": 2, "b": "3"})).text == "5.0"
        assert (await client.call_tool("divide", {"dividend": 1, "divisor": 4})).text == "0.25"
        assert outcome(await client.call_tool("divide", {"dividend": 1, "divisor": 0})) == error(
            "Cannot divide by zero: choose a non-zero divisor."
        )
        assert (await client.call_tool("combine", {"operation": "product", "values": [2, 3, 4]})).text == "24.0"
        summary = await client.call_tool("summarize", {"values": [1, 2, 3, 4]})
        assert summary.structured_content == {
            "count": 4,
            "mean": 2.5,
            "median": 2.5,
            "stdev": 1.2909944487358056,
            "minimum": 1.0,
            "maximum": 4.0,
        }
        miles = await client.call_tool("convert_distance", {"value": 1.609344, "source": "km", "target": "mi"})
        assert miles.text == "1.0"
        assert (await client.call_tool("round_money", {"amount": "2.675"})).text == "2.68"
        assert (await client.call_tool("evaluate", {"expression": "(2 + 3) * 4 / 5"})).text == "4.0"
        assert outcome(await client.call_tool("evaluate", {"expression": "__import__('os')"})) == error(
            "Unsupported syntax: \"__import__('os')\". Use numbers, + - * / % ** and parentheses."
        )
        assert outcome(await client.call_tool("combine", {"operation": "mean", "values": []})) == error(
            "Invalid arguments for tool 'combine':\n"
            "- operation: Input should be 'sum', 'product', 'min' or 'max' (got \"mean\")\n"
            "- values: List should have at least 1 item after validation, not 0 (got [])"
        )


@pytest.mark.anyio
async def test_notes_tools_are_bound_to_their_notebook() -> None:
    notes = load("notes")
    notebook = notes.Notebook()
    server = Server(
        "notes", tools=[notebook.add_note, notebook.search_notes, notebook.update_note, notebook.delete_note]
    )
    async with Client(server) as client:
        added = await client.call_tool(
            "add_note",
            {"title": "Call Ada", "body": "About the engine", "tags": ["work"], "priority": 3, "due": "2030-01-02"},
        )
        await client.call_tool("add_note", {"title": "Buy milk", "body": "Two litres"})
        note_id = added.structured_content["id"]
        assert added.structured_content["tags"] == ["work"]
        found = await client.call_tool("search_notes", {"query": "ADA", "tag": "work", "due_before": "2031-01-01"})
        assert [n["title"] for n in found.structured_content["notes"]] == ["Call Ada"]
        everything = await client.call_tool("search_notes", {"limit": 1})
        assert (everything.structured_content["total"], len(everything.structured_content["notes"])) == (2, 1)
        updated = await client.call_tool("update_note", {"note_id": note_id, "changes": {"title": "Call Ada Lovelace"}})
        assert updated.structured_content["title"] == "Call Ada Lovelace"
        assert (await client.call_tool("delete_note", {"note_id": note_id})).text == "Deleted 'Call Ada Lovelace'."
        missing = str(uuid.UUID(int=0))
        assert outcome(await client.call_tool("delete_note", {"note_id": missing})) == error(
            f"No note with id {missing}; it may already be deleted."
        )
        bad_tag = await client.call_tool("add_note", {"title": "x", "body": "y", "tags": ["Not A Tag"]})
        assert bad_tag.is_error
        assert bad_tag.text.startswith("Invalid arguments for tool 'add_note':\n- tags.0: String should match pattern")
    assert [n.title for n in notebook.search_notes().notes] == ["Buy milk"]


@pytest.mark.anyio
async def test_files_tools_stay_inside_their_sandbox(tmp_path: Path) -> None:
    files = load("files")
    progress: list[tuple[float, float | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    async with Client(files.make_server(tmp_path)) as client:
        wrote = await client.call_tool("write_file", {"path": "docs/a.txt", "text": "alpha\nbeta\n"})
        assert wrote.text == "Wrote 11 bytes to docs/a.txt."
        image = {"path": "logo.png", "data": base64.b64encode(PNG).decode()}
        assert (await client.call_tool("write_file", image)).text == "Wrote 16 bytes to logo.png."
        assert outcome(await client.call_tool("write_file", {"path": "logo.png", "text": "x"})) == error(
            "'logo.png' exists; pass overwrite=true to replace it."
        )
        listing = await client.call_tool("list_files", {"pattern": "*.txt"})
        assert [(f["path"], f["size"]) for f in listing.structured_content["files"]] == [("docs/a.txt", 11)]
        assert (await client.call_tool("read_text", {"path": "docs/a.txt", "max_chars": 5})).text == (
            "alpha\n[... 6 more characters]"
        )
        assert outcome(await client.call_tool("read_text", {"path": "../secret"})) == error(
            "'../secret' is outside the sandbox; use a relative path such as 'notes/todo.txt'."
        )
        found = await client.call_tool("search", {"needle": "beta"}, progress=on_progress)
        assert found.text == '[{"path":"docs/a.txt","line":2,"text":"beta"}]'
        assert progress == [(1, 2), (2, 2)]
        shown = await client.call_tool("view_image", {"path": "logo.png"})
        assert shown.content == [ImageContent(data=base64.b64encode(PNG).decode(), mime_type="image/png")]


@pytest.mark.anyio
async def test_inventory_tools_share_the_database_its_lifespan_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inventory = load("inventory")
    database = tmp_path / "stock.db"
    monkeypatch.setenv("INVENTORY_DB", str(database))
    async with Client(inventory.server) as client:
        added = await client.call_tool("add_item", {"sku": "TEA-001", "name": "Green tea", "quantity": 3})
        assert added.structured_content == {"sku": "TEA-001", "name": "Green tea", "quantity": 3}
        await client.call_tool("add_item", {"sku": "JAM-002", "name": "Plum jam"})
        assert (await client.call_tool("receive_delivery", {"sku": "JAM-002", "quantity": 5})).structured_content == {
            "sku": "JAM-002",
            "name": "Plum jam",
            "quantity": 5,
        }
        sold = await client.call_tool("record_sale", {"sku": "TEA-001", "quantity": 2})
        assert sold.structured_content["quantity"] == 1
        assert outcome(await client.call_tool("record_sale", {"sku": "TEA-001", "quantity": 2})) == error(
            "Only 1 of 'TEA-001' in stock; cannot take 2."
        )
        assert outcome(await client.call_tool("receive_delivery", {"sku": "NOPE", "quantity": 1})) == error(
            "No item with SKU 'NOPE'; add it with add_item first."
        )
        low = await client.call_tool("stock_report", {"below": 2})
        assert low.text == '[{"sku":"TEA-001","name":"Green tea","quantity":1}]'
    # The lifespan committed and closed the database: a new server process would find the stock.
    with contextlib.closing(sqlite3.connect(database)) as db:
        assert db.execute("SELECT sku, quantity FROM items ORDER BY sku").fetchall() == [("JAM-002", 5), ("TEA-001", 1)]


@pytest.mark.anyio
async def test_inventory_keeps_its_stock_beside_its_file_wherever_the_client_starts_it(tmp_path: Path) -> None:
    # A client starts the server in a folder of its own choosing: a relative inventory.db was a file there.
    shop, elsewhere = tmp_path / "shop", tmp_path / "elsewhere"
    shop.mkdir()
    elsewhere.mkdir()
    shutil.copy(EXAMPLES / "inventory.py", shop / "inventory.py")
    env = {key: value for key, value in os.environ.items() if key != "INVENTORY_DB"}
    async with Client.stdio([sys.executable, str(shop / "inventory.py")], env=env, cwd=elsewhere) as client:
        added = await client.call_tool("add_item", {"sku": "TEA-001", "name": "Green tea", "quantity": 3})

    assert not added.is_error, added.text
    assert sorted(path.name for path in shop.iterdir()) == ["inventory.db", "inventory.py"]
    assert list(elsewhere.iterdir()) == []


def test_inventory_tools_run_on_a_fake_stock_in_a_unit_test() -> None:
    inventory = load("inventory")

    @contextlib.asynccontextmanager
    async def fake_stock(server: Server) -> AsyncIterator[Any]:
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.execute("CREATE TABLE items (sku TEXT PRIMARY KEY, name TEXT NOT NULL, quantity INTEGER)")
        db.execute("INSERT INTO items VALUES ('SOAP-9', 'Olive soap', 0)")
        yield inventory.Stock(db)
        db.close()

    with ToolTester(inventory.server, lifespan=fake_stock) as tester:
        assert tester.call("stock_report").text == '[{"sku":"SOAP-9","name":"Olive soap","quantity":0}]'


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
def test_trips_ask_their_user_in_both_eras(protocol: Any) -> None:
    trips = load("trips")
    trips.TRIPS.clear()
    booking = {"traveller": "Ada Lovelace", "departure": "2026-12-24", "seat": "aisle"}
    with ToolTester(trips.server, protocol=protocol, elicitation=booking, sampling="Tram 28.\nCastle.\nFado.") as t:
        booked = t.call("book_trip", city="Lisbon")
        assert booked.text == "Booked LIS-001: Ada Lovelace to Lisbon on 2026-12-24, 3 nights."
        assert t.elicitations[0].message == "Book a trip to Lisbon: who travels, and when?"
        assert trips.TRIPS["LIS-001"]["seat"] == "aisle"
        assert t.call("suggest_activities", city="Lisbon").text == "Tram 28.\nCastle.\nFado."
        t.sampling = [SampleResult.use_tool("forecast", {"city": "Lisbon"}), "Beach, since it is sunny."]
        assert t.call("suggest_activities", city="Lisbon").text == "Beach, since it is sunny."
        assert t.samplings[1].messages[2].blocks[0].content[0].text == "Lisbon: 21°C, sunny"
        t.elicitation = "decline"
        assert outcome(t.call("cancel_trip", reference="LIS-001")) == error("The user declined to run cancel_trip.")
        t.elicitation = "accept"
        assert t.call("cancel_trip", reference="LIS-001").text == "Cancelled LIS-001."
        assert t.elicitations[0].message == "Cancel trip LIS-001? This cannot be undone."
        assert t.call("list_trips").text == "[]"
    with ToolTester(trips.server, protocol=protocol) as t:  # a client that can neither elicit nor sample
        assert t.call("suggest_activities", city="Porto").text == "Walk around Porto."
        if protocol == "handshake":
            assert_error(t.call("book_trip", city="Porto"), "cannot ask the user")
        else:
            with pytest.raises(ProtocolError) as caught:
                t.call("book_trip", city="Porto")
            assert caught.value.code == -32021


def test_sales_serves_its_page_to_a_host_and_text_to_the_others() -> None:
    sales = load("sales")
    with ToolTester(sales.server) as host:
        page = host.ui("sales_report")
        north = host.call("region_sales", region="north")
    with ToolTester(sales.server, apps=False) as text_only:
        names = [t.name for t in text_only.list_tools()]
        report = text_only.call("sales_report")

    assert (page.uri, page.meta) == ("ui://sales/report", {"ui": {"prefersBorder": True}})
    assert "new McpApps.App(" in page.text
    assert 'src="toolkit:ext-apps"' not in page.text
    assert north.structured_content == {
        "region": "north",
        "total": 425,
        "rows": [
            {"month": "2026-09", "region": "north", "units": 120},
            {"month": "2026-10", "region": "north", "units": 140},
            {"month": "2026-11", "region": "north", "units": 165},
        ],
    }
    assert names == ["sales_report"]
    assert '"total":710' in report.text
