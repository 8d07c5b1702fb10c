"""`UI` and `@tool(ui=..., visibility=...)`: what is derived and checked when a tool's page is defined."""

from __future__ import annotations

from pathlib import Path

import pytest
import servers
from servers.apps_demo import PAGE

from toolkit import UI, ProtocolError, Server, ToolDefinitionError, tool
from toolkit.testing import ToolTester


def page_tool(ui: UI, name: str = "show") -> object:
    @tool(name=name, ui=ui)
    def show() -> str:
        """Show it."""
        return "shown"

    return show


def test_a_page_from_a_file_is_read_once_when_it_is_defined(tmp_path: Path) -> None:
    file = tmp_path / "page.html"
    file.write_text("<p>first</p>", encoding="utf-8")
    ui = UI("ui://demo/page", file)
    file.write_text("<p>second</p>", encoding="utf-8")

    assert (ui.html, ui.path, ui.name) == ("<p>first</p>", file, "demo/page")


def test_a_missing_file_is_refused_when_the_page_is_defined(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="ui://demo/page"):
        UI("ui://demo/page", tmp_path / "missing.html")


def test_the_options_become_the_resources_meta_ui_as_the_spec_names_them() -> None:
    ui = UI(
        "ui://demo/page",
        "<p>hi</p>",
        csp={"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://*.cdn.example.com"]},
        permissions=["camera", "clipboardWrite"],
        domain="demo.example-host.com",
        prefers_border=False,
        name="Demo",
        description="A demo page",
    )

    meta = {
        "ui": {
            "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://*.cdn.example.com"]},
            "permissions": {"camera": {}, "clipboardWrite": {}},
            "domain": "demo.example-host.com",
            "prefersBorder": False,
        }
    }
    assert ui.resource() == {
        "uri": "ui://demo/page",
        "name": "Demo",
        "mimeType": "text/html;profile=mcp-app",
        "description": "A demo page",
        "_meta": meta,
    }
    assert ui.contents() == {
        "uri": "ui://demo/page",
        "mimeType": "text/html;profile=mcp-app",
        "text": "<p>hi</p>",
        "_meta": meta,
    }


def test_every_problem_of_a_page_is_reported_at_once() -> None:
    with pytest.raises(ValueError, match=r"^UI 'https://demo/page': ") as raised:
        UI(
            "https://demo/page",
            "<p>hi</p>",
            csp={"connect_domains": ["https://a.example.com"], "frameDomains": ["not an origin"]},
            permissions=["camera", "bluetooth"],
            prefers_border="yes",  # type: ignore[arg-type]
        )

    message = str(raised.value)
    for expected in (
        "must start with 'ui://'",
        "csp has no key 'connect_domains'; did you mean 'connectDomains'?",
        "csp['frameDomains']: 'not an origin' is not an origin",
        "permissions: 'bluetooth' is not one of",
        "prefers_border must be True, False or None",
    ):
        assert expected in message


def test_the_tools_meta_names_its_page_nested_and_flat_and_who_may_call_it() -> None:
    ui = UI("ui://demo/page", "<p>hi</p>")

    @tool(ui=ui, visibility=["app"], meta={"com.example/owner": "me"})
    def refresh() -> str:
        """Refresh."""
        return "ok"

    assert refresh.definition.meta == {
        "com.example/owner": "me",
        "ui/resourceUri": "ui://demo/page",
        "ui": {"resourceUri": "ui://demo/page", "visibility": ["app"]},
    }
    assert (refresh.ui, refresh.app_only) == (ui, True)


def test_visibility_and_ui_are_checked_with_the_other_options() -> None:
    with pytest.raises(ToolDefinitionError) as raised:

        @tool(ui="ui://demo/page", visibility=["agent"], meta={"ui": {}})  # type: ignore[call-overload, untyped-decorator]
        def broken() -> str:
            """Broken."""
            return ""

    assert [line.strip() for line in str(raised.value).splitlines()[1:]] == [
        "- visibility must list 'model' and/or 'app', each once, not ['agent']",
        "- ui must be a toolkit.UI (the page and its ui:// URI), not 'ui://demo/page'",
        "- meta={'ui': ...} with ui=/visibility=: toolkit writes _meta['ui'] from those; give it once",
    ]


def test_two_different_pages_at_one_uri_are_refused_and_one_page_may_serve_two_tools() -> None:
    shared = UI("ui://demo/page", "<p>one</p>")
    server = Server("demo", tools=[page_tool(shared, "a"), page_tool(UI("ui://demo/page", "<p>one</p>"), "b")])  # type: ignore[list-item]

    with pytest.raises(ValueError, match="ui://demo/page is already the URI of another page"):
        server.add_tool(page_tool(UI("ui://demo/page", "<p>two</p>"), "c"))  # type: ignore[arg-type]

    assert list(server.registry.uis) == ["ui://demo/page"]


def test_the_app_sdk_tag_puts_the_vendored_bundle_inline() -> None:
    ui = UI("ui://demo/page", '<head><script src="toolkit:ext-apps"></script></head><body></body>')

    assert 'src="toolkit:ext-apps"' not in ui.html
    assert "McpApps" in ui.html
    assert ui.html.count("</script>") == 1


# -- ToolTester --------------------------------------------------------------------------------------------------


def test_the_tester_reads_a_tools_page_and_calls_its_app_only_tool() -> None:
    server = servers.build(servers.APPS_DEMO)
    with ToolTester(server) as tester:
        page = tester.ui("table")
        refreshed = tester.call("refresh", rows=1)
        with pytest.raises(LookupError, match="no MCP App page"):
            tester.ui("add")

    assert (page.uri, page.mime_type, page.text) == ("ui://apps-demo/table", "text/html;profile=mcp-app", PAGE.html)
    assert page.meta == {"ui": PAGE.meta}
    assert refreshed.structured_content == {"rows": [{"n": 0, "square": 0}]}


def test_a_tester_without_apps_sees_what_a_text_only_client_sees() -> None:
    with ToolTester(servers.build(servers.APPS_DEMO), apps=False) as tester:
        names = [t.name for t in tester.list_tools()]
        with pytest.raises(ProtocolError) as refused:
            tester.call("refresh")

    assert names == ["table", "add"]
    assert refused.value.code == -32602
