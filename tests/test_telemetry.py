"""OpenTelemetry: spans and metrics per the semantic conventions for MCP, and trace context in `params._meta`.

Read with the SDK's in-memory span exporter and metric reader, providers given to the `Server` and `Client` (the
global provider can be set once per process: the tests that need it run in a child process). Every attribute and
metric name is checked against the conventions' own list (tests/otel_semconv_mcp.json, vendored).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx
import pytest
import wire
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from typing_extensions import TypedDict

from toolkit import Client, Context, ElicitRequest, ElicitResult, Server, StreamingASGITransport
from toolkit.testing import ToolTester

HERE = Path(__file__).resolve().parent
CONVENTIONS = json.loads((HERE / "otel_semconv_mcp.json").read_text(encoding="utf-8"))
ERAS = ["2025-11-25", "2026-07-28"]
# What `Client(protocol=...)` is given for each era.
PROTOCOL: dict[str, Literal["handshake", "2026-07-28"]] = {"2025-11-25": "handshake", "2026-07-28": "2026-07-28"}
URL = "http://127.0.0.1:8000/mcp"

pytestmark = pytest.mark.anyio


class GoOn(TypedDict):
    value: bool


class Otel:
    """One tracer and one meter provider, read in memory."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.tracer = self.tracer_provider.get_tracer("tests")

    @property
    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def span(self, name: str, kind: SpanKind) -> ReadableSpan:
        found = [span for span in self.spans if span.name == name and span.kind == kind]
        assert len(found) == 1, [(span.name, span.kind) for span in self.spans]
        return found[0]

    def points(self) -> dict[str, list[dict[str, Any]]]:
        """Each metric's data points' attributes, by metric name."""
        data = self.reader.get_metrics_data()
        found: dict[str, list[dict[str, Any]]] = {}
        for resource in data.resource_metrics if data is not None else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found.setdefault(metric.name, []).extend(dict(p.attributes or {}) for p in metric.data.data_points)
        return found


@pytest.fixture
def otel() -> Iterator[Otel]:
    telemetry = Otel()
    yield telemetry
    check_names(telemetry)


def check_names(otel: Otel) -> None:
    """Every span's attributes and every metric's attributes are the conventions' own names, for its kind."""
    for span in otel.spans:
        if span.instrumentation_scope is None or span.instrumentation_scope.name != "toolkit":
            continue
        allowed = CONVENTIONS["spans"]["mcp.server" if span.kind == SpanKind.SERVER else "mcp.client"]
        assert set(span.attributes or {}) <= set(allowed), (span.name, set(span.attributes or {}) - set(allowed))
    for name, points in otel.points().items():
        assert name in CONVENTIONS["metrics"], name
        for attributes in points:
            assert set(attributes) <= set(CONVENTIONS["metrics"][name]), (name, attributes)


def make_server(otel: Otel | None) -> Server:
    options: dict[str, Any] = {}
    if otel is not None:
        options = {"tracer_provider": otel.tracer_provider, "meter_provider": otel.meter_provider}
    server = Server("traced", **options)
    tracer = otel.tracer if otel is not None else None

    @server.tool
    def add(a: int, b: int) -> int:
        """Add, inside a span of the tool's own (a sync tool: on a worker thread)."""
        assert tracer is not None
        with tracer.start_as_current_span("add's own work"):
            return a + b

    @server.tool
    async def add_async(a: int, b: int, ctx: Context) -> int:
        """Add, inside a span of the tool's own, with progress (over HTTP: streamed, or a connection of its own)."""
        assert tracer is not None
        with tracer.start_as_current_span("add_async's own work"):
            await ctx.report_progress(1, 1)
            return a + b

    @server.tool
    def fails() -> int:
        """Always fails."""
        raise ValueError("no")

    @server.tool
    async def asks(ctx: Context) -> str:
        """Ask the user a question."""
        answer = await ctx.elicit("Go on?", GoOn)
        return f"answer: {answer.data['value'] if answer.data is not None else None}"

    return server


def traced_client(target: Any, otel: Otel, era: str, **options: Any) -> Client:
    return Client(
        target,
        protocol=PROTOCOL[era],
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        **options,
    )


def assert_child(child: ReadableSpan, parent: ReadableSpan) -> None:
    assert child.context.trace_id == parent.context.trace_id
    assert child.parent is not None
    assert child.parent.span_id == parent.context.span_id


# -- in memory -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_is_one_trace_client_span_server_span_and_the_tools_own_span(otel: Otel, era: str) -> None:
    server = make_server(otel)
    async with traced_client(server, otel, era) as client:
        with otel.tracer.start_as_current_span("the application's work") as root:
            assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3"
            assert (await client.call_tool("add_async", {"a": 1, "b": 2})).text == "3"
    for tool in ("add", "add_async"):
        sent = otel.span(f"tools/call {tool}", SpanKind.CLIENT)
        served = otel.span(f"tools/call {tool}", SpanKind.SERVER)
        own = otel.span(f"{tool}'s own work", SpanKind.INTERNAL)
        assert sent.parent is not None
        assert sent.parent.span_id == root.get_span_context().span_id
        assert_child(served, sent)
        assert_child(own, served)
        assert dict(served.attributes or {}) == {
            "mcp.method.name": "tools/call",
            "gen_ai.tool.name": tool,
            "gen_ai.operation.name": "execute_tool",
            "mcp.protocol.version": era,
            "network.transport": "inproc",
            "jsonrpc.request.id": (served.attributes or {}).get("jsonrpc.request.id"),
        }
        assert str((served.attributes or {})["jsonrpc.request.id"]).isdigit()
        assert served.status.status_code == StatusCode.UNSET
        assert dict(sent.attributes or {}) == {
            "mcp.method.name": "tools/call",
            "gen_ai.tool.name": tool,
            "gen_ai.operation.name": "execute_tool",
            "mcp.protocol.version": era,
            "network.transport": "inproc",
            "jsonrpc.request.id": (served.attributes or {})["jsonrpc.request.id"],  # the same request, both sides
        }
    points = otel.points()
    server_calls = [p for p in points["mcp.server.operation.duration"] if p.get("gen_ai.tool.name") == "add"]
    assert server_calls == [
        {
            "mcp.method.name": "tools/call",
            "gen_ai.tool.name": "add",
            "gen_ai.operation.name": "execute_tool",
            "mcp.protocol.version": era,
            "network.transport": "inproc",
        }
    ]
    assert any(p.get("gen_ai.tool.name") == "add" for p in points["mcp.client.operation.duration"])
    assert points["mcp.client.session.duration"] == [{"mcp.protocol.version": era}]


@pytest.mark.parametrize("era", ERAS)
async def test_errors_set_error_type_and_status_as_the_conventions_say(otel: Otel, era: str) -> None:
    server = make_server(otel)
    async with traced_client(server, otel, era) as client:
        assert (await client.call_tool("fails", {})).is_error
        with pytest.raises(Exception, match="Unknown tool"):
            await client.call_tool("nope", {})
    for kind in (SpanKind.SERVER, SpanKind.CLIENT):
        failed = otel.span("tools/call fails", kind)
        assert (failed.attributes or {})["error.type"] == "tool_error"
        assert failed.status.status_code == StatusCode.ERROR
    # -32602 (an unknown tool): the caller's mistake, not the server's error (mcp.server.status.attributes); every
    # JSON-RPC error is an error to the client.
    served = otel.span("tools/call nope", SpanKind.SERVER)
    assert (served.attributes or {})["rpc.response.status_code"] == "-32602"
    assert "error.type" not in (served.attributes or {})
    sent = otel.span("tools/call nope", SpanKind.CLIENT)
    assert (sent.attributes or {})["error.type"] == "-32602"
    assert (sent.attributes or {})["rpc.response.status_code"] == "-32602"
    assert sent.status.status_code == StatusCode.ERROR
    assert "Unknown tool" in (sent.status.description or "")


async def test_a_server_span_for_each_notification_and_a_session_duration(otel: Otel) -> None:
    server = make_server(otel)
    async with traced_client(server, otel, "2025-11-25") as client:
        await client.ping()
    initialized = otel.span("notifications/initialized", SpanKind.SERVER)
    assert "jsonrpc.request.id" not in (initialized.attributes or {})
    assert_child(initialized, otel.span("notifications/initialized", SpanKind.CLIENT))  # its context sent too
    otel.span("ping", SpanKind.SERVER)
    assert otel.points()["mcp.server.session.duration"] == [{"mcp.protocol.version": "2025-11-25"}]


async def test_a_question_the_tool_asks_is_a_client_span_of_the_calls_trace(otel: Otel) -> None:
    def answer(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({"value": True})

    server = make_server(otel)
    async with traced_client(server, otel, "2025-11-25", elicitation_handler=answer) as client:
        assert (await client.call_tool("asks", {})).text == "answer: True"
    served = otel.span("tools/call asks", SpanKind.SERVER)
    question = otel.span("elicitation/create", SpanKind.CLIENT)
    assert_child(question, served)
    assert (question.attributes or {})["mcp.protocol.version"] == "2025-11-25"
    assert (question.attributes or {})["jsonrpc.request.id"]
    # The client answers it inside a SERVER span of its own: the receiver's side of the question.
    answered = otel.span("elicitation/create", SpanKind.SERVER)
    assert_child(answered, question)


async def test_the_rounds_of_a_multi_round_trip_call_are_requests_of_one_trace(otel: Otel) -> None:
    def answer(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({"value": True})

    server = make_server(otel)
    async with traced_client(server, otel, "2026-07-28", elicitation_handler=answer) as client:
        with otel.tracer.start_as_current_span("the application's work") as root:
            assert (await client.call_tool("asks", {})).text == "answer: True"
    rounds = [span for span in otel.spans if span.name == "tools/call asks" and span.kind == SpanKind.CLIENT]
    served = [span for span in otel.spans if span.name == "tools/call asks" and span.kind == SpanKind.SERVER]
    assert len(rounds) == len(served) == 2
    assert {span.context.trace_id for span in rounds + served} == {root.get_span_context().trace_id}
    for sent, answered in zip(rounds, served, strict=True):
        assert_child(answered, sent)


async def test_the_servers_request_to_the_client_carries_traceparent_and_stays_valid(otel: Otel) -> None:
    """The raw peer checks every message the server sends against the vendored schema: `elicitation/create` with
    `traceparent` in its `_meta` too."""
    server = make_server(otel)
    async with wire.memory(server) as peer:
        await peer.initialize(capabilities={"elicitation": {"form": {}}})
        with otel.tracer.start_as_current_span("client side"):
            pass
        traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "asks", "arguments": {}, "_meta": {"traceparent": traceparent}},
            }
        )
        request = await peer.receive()
        assert request["method"] == "elicitation/create"
        sent = request["params"]["_meta"]["traceparent"]
        assert sent.split("-")[1] == "0af7651916cd43dd8448eb211c80319c"
        await peer.send(
            {"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"value": True}}}
        )
        reply = await peer.receive()
        assert reply["result"]["content"][0]["text"] == "answer: True"
    served = otel.span("tools/call asks", SpanKind.SERVER)
    assert format(served.context.trace_id, "032x") == "0af7651916cd43dd8448eb211c80319c"
    assert served.parent is not None
    assert format(served.parent.span_id, "016x") == "b7ad6b7169203331"


async def test_without_a_provider_nothing_is_traced_and_no_traceparent_is_sent() -> None:
    server = make_server(None)
    assert server.telemetry is None
    async with wire.memory(server) as peer:
        await peer.initialize(capabilities={"elicitation": {"form": {}}})
        await peer.send(
            {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "asks", "arguments": {}}}
        )
        request = await peer.receive()
        assert "_meta" not in request["params"]
        await peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "decline"}})
        await peer.receive()
    assert server.telemetry is None


# -- over HTTP (the app in process), both eras, each way of serving ------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_over_http_each_serving_path_continues_the_clients_trace(otel: Otel, era: str) -> None:
    server = make_server(otel)
    app = server.http_app()
    async with (
        httpx.AsyncClient(transport=StreamingASGITransport(app)) as http,
        Client.http(
            URL,
            http_client=http,
            protocol=PROTOCOL[era],
            tracer_provider=otel.tracer_provider,
        ) as client,
    ):
        assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3"  # answered alone
        seen: list[float] = []
        # 2026-07-28: streamed; 2025-11-25: a session's Context call runs on a connection of its own
        result = await client.call_tool("add_async", {"a": 1, "b": 2}, progress=lambda p, t, m: seen.append(p))
        assert (result.text, seen) == ("3", [1])
    for tool in ("add", "add_async"):
        sent = otel.span(f"tools/call {tool}", SpanKind.CLIENT)
        served = otel.span(f"tools/call {tool}", SpanKind.SERVER)
        assert_child(served, sent)
        assert_child(otel.span(f"{tool}'s own work", SpanKind.INTERNAL), served)
        for span in (sent, served):
            assert (span.attributes or {})["network.transport"] == "tcp"
            assert (span.attributes or {})["network.protocol.name"] == "http"
        # A 2025-11-25 session's requests carry its id (Mcp-Session-Id); 2026-07-28 has no sessions.
        assert ("mcp.session.id" in (served.attributes or {})) == (era == "2025-11-25")
    if era == "2025-11-25":  # a notification POSTed in a session has its SERVER span too
        initialized = otel.span("notifications/initialized", SpanKind.SERVER)
        assert (initialized.attributes or {})["network.transport"] == "tcp"
        assert (initialized.attributes or {})["mcp.session.id"] == (served.attributes or {})["mcp.session.id"]


# -- over stdio: the server in a child process reports the trace it saw -------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_over_stdio_the_server_continues_the_clients_trace(otel: Otel, era: str) -> None:
    command = [sys.executable, str(HERE / "servers" / "otel_stdio.py")]
    async with Client.stdio(
        command,
        protocol=PROTOCOL[era],
        tracer_provider=otel.tracer_provider,
    ) as client:
        result = await client.call_tool("trace_of_this_call", {})
    seen = json.loads(result.text)
    sent = otel.span("tools/call trace_of_this_call", SpanKind.CLIENT)
    assert seen["trace_id"] == format(sent.context.trace_id, "032x")
    assert seen["parent_id"] == format(sent.context.span_id, "016x")  # the server span's parent: the client's span
    assert seen["network.transport"] == "pipe"
    assert (sent.attributes or {})["network.transport"] == "pipe"


# -- a real peer, both ways, and the global provider (a child process: it sets the global provider) ---------------


def test_the_official_sdk_and_toolkit_continue_each_others_traces() -> None:
    done = subprocess.run(
        [sys.executable, str(HERE / "otel_peer.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=HERE.parent,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    for mode, version in (("legacy", "2025-11-25"), ("auto", "2026-07-28")):
        sent, served = pair(report["sdk_to_toolkit"][mode], client="mcp-python-sdk", server="toolkit")
        assert (served["trace"], served["parent"]) == (sent["trace"], sent["span"])
        assert served["attributes"]["mcp.protocol.version"] == version
    sent, served = pair(report["toolkit_to_sdk"]["2026-07-28"], client="toolkit", server="mcp-python-sdk")
    assert (served["trace"], served["parent"]) == (sent["trace"], sent["span"])


def pair(spans: list[dict[str, Any]], *, client: str, server: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The CLIENT span of the `tools/call` and the SERVER span of it, each from the side named."""

    def one(kind: str, scope: str) -> dict[str, Any]:
        found = [s for s in spans if s["kind"] == kind and s["scope"] == scope and "tools/call" in s["name"]]
        assert len(found) == 1, spans
        return found[0]

    return one("CLIENT", client), one("SERVER", server)


def test_without_opentelemetry_imported_toolkit_does_not_import_it() -> None:
    code = (
        "import sys, anyio\n"
        "from toolkit import Client, Server\n"
        "server = Server('s')\n"
        "@server.tool\n"
        "def echo(a: int) -> int:\n"
        "    return a\n"
        "async def main():\n"
        "    async with Client(server) as client:\n"
        "        await client.call_tool('echo', {'a': 1})\n"
        "anyio.run(main)\n"
        "print(server.telemetry, 'opentelemetry' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["None", "False"]


# -- ToolTester ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
def test_tooltester_collects_the_spans_of_each_call(protocol: Literal["handshake", "2026-07-28"]) -> None:
    server = Server("tested")

    @server.tool
    def fails() -> int:
        """Always fails."""
        raise ValueError("no")

    with ToolTester(server, trace=True, protocol=protocol) as tester:
        assert tester.call("fails").is_error
        names = [(span.name, span.kind) for span in tester.spans]
        assert names == [("tools/call fails", SpanKind.SERVER), ("tools/call fails", SpanKind.CLIENT)]
        served, sent = tester.spans
        assert served.parent is not None
        assert served.parent.span_id == sent.context.span_id
        assert (served.attributes or {})["error.type"] == "tool_error"
        assert tester.call("fails").is_error
        assert len(tester.spans) == 2  # the last call's only
    assert server.registry.tracer_provider is None  # the server's own again


def test_every_name_toolkit_writes_is_the_conventions_own() -> None:
    from toolkit._engine import telemetry

    spans = set(CONVENTIONS["spans"]["mcp.server"]) | set(CONVENTIONS["spans"]["mcp.client"])
    assert spans >= telemetry.ATTRIBUTES, telemetry.ATTRIBUTES - spans
    assert set(telemetry.METRICS) == set(CONVENTIONS["metrics"])


async def test_a_meter_provider_alone_records_the_histograms_and_no_span(otel: Otel) -> None:
    server = Server("measured", meter_provider=otel.meter_provider)

    @server.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    async with Client(server, protocol="2026-07-28") as client:
        assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3"
    assert otel.spans == []
    calls = [p for p in otel.points()["mcp.server.operation.duration"] if p.get("gen_ai.tool.name") == "add"]
    assert calls == [
        {
            "mcp.method.name": "tools/call",
            "gen_ai.tool.name": "add",
            "gen_ai.operation.name": "execute_tool",
            "mcp.protocol.version": "2026-07-28",
            "network.transport": "inproc",
        }
    ]


async def test_a_call_given_up_on_is_a_timeout_to_the_client_and_cancelled_to_the_server(otel: Otel) -> None:
    server = Server("hangs", tracer_provider=otel.tracer_provider)

    @server.tool
    async def hang() -> str:
        """Never returns."""
        await anyio.sleep_forever()
        return "never"

    async with Client(server, protocol="2026-07-28", tracer_provider=otel.tracer_provider) as client:
        with pytest.raises(TimeoutError):
            await client.call_tool("hang", {}, timeout=0.2)  # the tool never returns: only the bound ends it
    sent = otel.span("tools/call hang", SpanKind.CLIENT)
    assert (sent.attributes or {})["error.type"] == "cancelled"  # given up on: the client cancels the request
    served = otel.span("tools/call hang", SpanKind.SERVER)
    assert (served.attributes or {})["error.type"] == "cancelled"
    assert served.status.status_code == StatusCode.ERROR
