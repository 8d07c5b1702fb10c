"""The server the MCP conformance suite tests: the tools its in-scope scenarios call (names and behaviour from the
suite's scenario sources), served over Streamable HTTP by `tests/test_conformance.py`.

Run by hand: `python tests/conformance/server.py` (port 0: it prints the URL it listens on).
"""

from __future__ import annotations

import base64
import importlib.util
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from toolkit import (
    Audio,
    Context,
    EmbeddedResource,
    Image,
    Server,
    TextContent,
    TextResourceContents,
    ToolError,
    tool,
)

# A 1x1 transparent PNG and a tiny WAV (the suite checks the MIME types and that data is non-empty).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
WAV = (
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00\x80>\x00\x00\x02\x00\x10\x00"
    b"data\x00\x00\x00\x00"
)

server = Server("toolkit-conformance", version="1.0.0")


# Lower case: the suite looks for `$defs.address`, and pydantic names a definition after its class.
class address(BaseModel):
    """A postal address."""

    model_config = ConfigDict(json_schema_extra={"$anchor": "addressDef"})  # SEP-2106: `$anchor` in `$defs`

    street: str
    city: str


@server.tool
def test_simple_text() -> str:
    """Return a simple text response."""
    return "This is a simple text response for testing."


@server.tool
def test_image_content() -> Image:
    """Return an image."""
    return Image(data=PNG, mime_type="image/png")


@server.tool
def test_audio_content() -> Audio:
    """Return audio."""
    return Audio(data=WAV, mime_type="audio/wav")


@server.tool
def test_embedded_resource() -> EmbeddedResource:
    """Return an embedded resource."""
    return EmbeddedResource(
        resource=TextResourceContents(
            uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
        )
    )


@server.tool
def test_multiple_content_types() -> list[Any]:
    """Return text, an image and an embedded resource."""
    return [
        TextContent(text="Multiple content types test:"),
        Image(data=PNG, mime_type="image/png"),
        EmbeddedResource(
            resource=TextResourceContents(
                uri="test://mixed-content-resource", mime_type="application/json", text='{"test":"data","value":123}'
            )
        ),
    ]


@server.tool
async def test_tool_with_logging(ctx: Context) -> str:
    """Log three messages while running."""
    for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.info(message)
        await anyio.sleep(0.05)  # the suite expects the messages spread over the call
    return "Tool with logging executed successfully"


@server.tool
def test_error_handling() -> str:
    """Always fail."""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool
async def test_tool_with_progress(ctx: Context) -> str:
    """Report progress 0, 50, 100."""
    for done in (0, 50, 100):
        await ctx.report_progress(done, total=100)
        await anyio.sleep(0.05)
    return "Progress test completed"


@server.tool
async def test_reconnection(ctx: Context) -> str:
    """Close the call's SSE stream, then answer: the client gets the answer by resuming (SEP-1699 polling)."""
    await ctx.close_sse_stream()
    await anyio.sleep(0.1)
    return "Reconnection test completed"


@server.tool
def test_logging_tool(ctx: Context) -> str:
    """Log one message (2026-07-28: only when the request asks for a log level)."""
    ctx.info("logging tool ran")
    return "logged"


@server.tool
def test_trigger_tool_change() -> str:
    """Add or remove a tool, so that subscribers hear that the list changed."""
    if "test_dynamic_tool" in server.tools:
        server.remove_tool("test_dynamic_tool")
    else:
        server.add_tool(_dynamic)
    return "tool list changed"


# SEP-2106's wider vocabulary at the root: a phone or an email, and the phone when it is the contact method.
CONTACT_RULES: dict[str, Any] = {
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
}


@server.tool(schema_dialect=True, inline_defs=False, input_schema_extra=CONTACT_RULES)
def json_schema_2020_12_tool(
    name: str,
    address: address | None = None,
    contactMethod: Literal["phone", "email"] | None = None,
    phone: str | None = None,
    email: str | None = None,
) -> str:
    """Take arguments described with JSON Schema 2020-12: `$defs` and `$ref`, `$anchor`, `allOf`, `if`/`then`/`else`."""
    needed = "phone" if contactMethod == "phone" else "email"  # input_schema_extra is advertised, not enforced
    if (phone if needed == "phone" else email) is None:
        raise ToolError(f"{needed} is required")
    return f"{name} lives in {address.city}" if address is not None else name


@server.tool
def test_custom_header(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Echo a parameter that HTTP clients also send as the `Mcp-Param-Region` header (2026-07-28)."""
    return f"region: {region}"


@tool(name="test_dynamic_tool")
def _dynamic() -> str:
    """A tool that comes and goes."""
    return "dynamic"


def _asking_tools() -> None:
    """The suite's elicitation, sampling and input-required tools: those of tests/servers/hitl_server.py, the server
    the human-in-the-loop tests drive in memory, over stdio and over HTTP."""
    path = Path(__file__).resolve().parents[1] / "servers" / "hitl_server.py"
    spec = importlib.util.spec_from_file_location("hitl_server", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("hitl_server", module)
    spec.loader.exec_module(module)
    for asking in module.build().tools.values():
        if asking.name.startswith("test_"):
            server.add_tool(asking)


_asking_tools()


# -- the tasks extension's scenarios (tasks-*, SEP-2663) --------------------------------------------------------


@server.tool
def greet(name: str) -> str:
    """Greet (never a task)."""
    return f"Hello, {name}!"


@server.tool(task="optional")
async def slow_compute(seconds: float = 0, label: str = "") -> str:
    """Sleep `seconds`, then answer (a task when the client speaks tasks)."""
    await anyio.sleep(seconds)
    return f"computed {label} after {seconds}s"


@server.tool(task="required")
async def failing_job() -> str:
    """Fail as a tool after a second (only ever a task)."""
    await anyio.sleep(1)
    raise ToolError("the job failed")


@server.tool(task="optional")
async def protocol_error_job(ctx: Context) -> str:
    """Ask for the client's roots, which the suite's client does not declare: the task fails with -32021."""
    roots = await ctx.list_roots()
    return str(len(roots))


class Confirmation(BaseModel):
    confirm: bool


@server.tool(task="optional")
async def confirm_delete(filename: str, ctx: Context) -> str:
    """Ask for a confirmation, then answer."""
    answer = await ctx.elicit(f"Delete {filename}?", Confirmation)
    done = answer.action == "accept" and answer.data is not None and answer.data.confirm
    return f"{'deleted' if done else 'kept'} {filename}"


class Named(BaseModel):
    name: str = ""
    confirm: bool = False


@server.tool(task="optional")
async def multi_input(ctx: Context) -> str:
    """Ask two questions at once."""
    async with ctx.together():
        first = ctx.elicit("First?", Named)
        second = ctx.elicit("Second?", Named)
    return f"{first.action} {second.action}"


class UserName(BaseModel):
    name: str


@server.tool(task="required")
async def test_tool_with_task(ctx: Context) -> str:
    """Ask the user's name in the request's own rounds, then go on as a task."""
    answer = await ctx.elicit("What is your name?", UserName, key="user_name")
    await ctx.begin_task()
    return f"Hello, {answer.data.name if answer.data else 'nobody'}!"


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server.run(transport="http", host="127.0.0.1", port=port)
