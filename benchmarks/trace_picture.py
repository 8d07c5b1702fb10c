"""`python -m benchmarks.trace_picture`: draw docs/img/trace.svg, the waterfall of one real traced call.

Nothing in the picture is drawn by hand: a toolkit `Client` calls a toolkit server over Streamable HTTP (the app in
process, on the streaming ASGI transport), 2025-11-25, a tool that asks the user a question and does two pieces of
work of its own; both sides trace to one SDK tracer provider with an in-memory exporter, and the spans it exported
are drawn where their real start and end times put them (matplotlib, the `bench` extra).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from typing_extensions import TypedDict

from toolkit import Client, Context, ElicitRequest, ElicitResult, Server, StreamingASGITransport

OUT = Path(__file__).resolve().parent.parent / "docs" / "img" / "trace.svg"
URL = "http://127.0.0.1:8000/mcp"
COLOURS = {SpanKind.CLIENT: "#4c72b0", SpanKind.SERVER: "#dd8452", SpanKind.INTERNAL: "#55a868"}


class Approval(TypedDict):
    approve: bool


def _work(steps: int) -> int:
    return sum(i * i for i in range(steps))


def traced_call() -> list[ReadableSpan]:
    """Run the call; the spans it produced, as exported."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("app")
    server = Server("orders", tracer_provider=provider)

    @server.tool
    async def refund(order: str, ctx: Context) -> str:
        """Refund an order, once the user approves."""
        with tracer.start_as_current_span("load order"):
            _work(20_000)  # stands in for a database query
        answer = await ctx.elicit(f"Refund order {order}?", Approval)
        with tracer.start_as_current_span("payments API: refund"):
            _work(40_000)  # stands in for a call to another service (which would carry the trace on)
        return "refunded" if answer.data is not None and answer.data["approve"] else "kept"

    def approve(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({"approve": True})

    async def main() -> None:
        async with (
            httpx.AsyncClient(transport=StreamingASGITransport(server.http_app())) as http,
            Client.http(
                URL, http_client=http, protocol="handshake", tracer_provider=provider, elicitation_handler=approve
            ) as client,
        ):
            await client.call_tool("refund", {"order": "A-1041"})  # warm (first imports, the tool list): not drawn
            with tracer.start_as_current_span("agent: handle the user's request"):
                result = await client.call_tool("refund", {"order": "A-1042"})
        assert result.text == "refunded", result

    anyio.run(main)
    trace_id = next(s.context.trace_id for s in exporter.get_finished_spans() if s.name.startswith("agent"))
    return [span for span in exporter.get_finished_spans() if span.context.trace_id == trace_id]


def _depth(span: ReadableSpan, by_id: dict[int, ReadableSpan]) -> int:
    depth = 0
    while span.parent is not None and span.parent.span_id in by_id:
        span = by_id[span.parent.span_id]
        depth += 1
    return depth


def draw(spans: list[ReadableSpan], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "toolkit"  # stable ids in the SVG
    spans = sorted(spans, key=lambda span: span.start_time or 0)
    by_id = {span.context.span_id: span for span in spans}
    start = min(span.start_time or 0 for span in spans)
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(spans) + 1.2))
    for row, span in enumerate(spans):
        begin = ((span.start_time or 0) - start) / 1e6
        width = max(((span.end_time or 0) - (span.start_time or 0)) / 1e6, 0.05)
        ax.barh(row, width, left=begin, color=COLOURS.get(span.kind, "#8172b3"), height=0.6)
        scope = span.instrumentation_scope.name if span.instrumentation_scope is not None else "?"
        label = f"{'  ' * _depth(span, by_id)}{span.name}  [{span.kind.name}, {scope}]"
        ax.text(begin, row - 0.38, label, fontsize=8, va="bottom")
    ax.set_yticks([])
    ax.invert_yaxis()
    ax.set_xlabel("ms since the first span started (one trace: every span has the same trace id)")
    ax.set_title("One tools/call over Streamable HTTP (2025-11-25), a question to the user inside it")
    ax.spines[["top", "right", "left"]].set_visible(False)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="svg", metadata={"Date": None})
    plt.close(fig)


def main(argv: list[str]) -> None:
    out = Path(argv[0]) if argv else OUT
    spans = traced_call()
    draw(spans, out)
    for span in sorted(spans, key=lambda span: span.start_time or 0):
        took = ((span.end_time or 0) - (span.start_time or 0)) / 1e6
        print(f"{span.kind.name:8} {took:7.2f} ms  {span.name}")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
