"""The client side of Streamable HTTP: a `Transport` over httpx, for `Client.http(url)`, in both eras.

Each message the client sends is one POST, made in a task of its own so that calls run concurrently; what comes
back (one JSON answer, or the SSE events of that request) is handed to `receive()`. The era is learned from the
messages themselves: an `initialize` answer opens a 2025-11-25 session (its `Mcp-Session-Id` then goes with every
request, a GET stream carries the server's own messages, and DELETE ends it on close); a request with the
2026-07-28 `_meta` gets that revision's metadata headers and is cancelled by closing its response.

A 2025-11-25 SSE stream that ends before its answer (the server closed it to be polled, SEP-1699, or the connection
broke) is resumed with GET + `Last-Event-ID` after the server's `retry` delay, until the answer comes; the GET
stream is reopened the same way.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import logging
import math
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import anyio
import anyio.abc
import httpx

from toolkit._protocol.client_eras import HANDSHAKE_ERA
from toolkit._protocol.jsonrpc import decode, encode, error_response, is_valid_id
from toolkit._protocol.meta import NAME_PARAMS, VERSION_KEY

from .base import UNREACHABLE

if TYPE_CHECKING:
    import ssl

__all__ = ["HttpTransport", "open_http"]

logger = logging.getLogger("toolkit.client")

_ACCEPT = "application/json, text/event-stream"
_RETRY = 1.0  # seconds before reconnecting when the server gave no `retry`
_MAX_RETRY = 30.0  # the longest wait between failed reconnections (the delay doubles from `retry` up to this)
# The requests sent once more when they failed on a reused keep-alive connection before any answer came: reads,
# which change nothing on the server. A call (`tools/call`), an answer or a notification is never repeated (RFC 9110
# 9.2.2: the client cannot know whether the server acted on it before the connection broke).
_REPEATABLE = frozenset(
    {
        "ping",
        "server/discover",
        "tools/list",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
        "tasks/get",
        "tasks/list",
        "tasks/result",
    }
)
_ATTEMPTS = 5  # reconnections in a row that fail (no HTTP answer at all) before giving up


def header_value(value: str) -> str:
    """A header value for `value`: itself when it is plain visible ASCII, else the `=?base64?...?=` form."""
    if value and value.isascii() and value.isprintable() and value == value.strip():
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


class _Outgoing(NamedTuple):
    """One message to POST, and what its answer is matched by."""

    text: str
    headers: dict[str, str]
    request_id: Any  # the request it is (None for a notification or an answer)
    method: Any
    answering: Any  # the call whose question this message answers (failed if the answer is refused), or None


class _Sent(NamedTuple):
    """What `send` reads of a message the client sends."""

    method: Any  # None for an answer to the server's question
    params: dict[str, Any]  # empty when it has none
    meta: Any  # its params' `_meta`
    stateless: bool  # a message of the stateless era, 2026-07-28 (its `_meta` names the revision; never `initialize`)
    request_id: Any  # the request it is (None for a notification or an answer)
    answered: Any  # the id of the server's question it answers (None for a request or a notification)


def _read_sent(message: str) -> _Sent:
    """Read a message the client sends (one at a time: never a batch).

    Raises:
        ValueError: the message is not one JSON-RPC object.
    """
    parsed = decode(message)
    if not isinstance(parsed, dict):
        raise ValueError("toolkit's client sends one message at a time over HTTP")
    method = parsed.get("method")
    raw = parsed.get("params")
    params: dict[str, Any] = raw if isinstance(raw, dict) else {}
    meta = params.get("_meta")
    stateless = isinstance(meta, dict) and VERSION_KEY in meta and method != "initialize"
    if method is None:
        return _Sent(None, params, meta, stateless, None, parsed.get("id"))
    return _Sent(method, params, meta, stateless, parsed.get("id"), None)


def _repeatable(method: Any, request_id: Any) -> bool:
    """Whether a message may be sent twice: a request that only reads (`_REPEATABLE`)."""
    return request_id is not None and isinstance(method, str) and method in _REPEATABLE


def _content_type(response: httpx.Response) -> str:
    """The media type of a response's body, without its parameters, in lower case."""
    header: str = response.headers.get("content-type", "")
    return header.split(";", 1)[0].strip().lower()


def _marked_params(tool: Any) -> list[tuple[str, str]]:
    """A listed tool's parameters marked `x-mcp-header`, each with its `Mcp-Param-*` header (2026-07-28)."""
    schema = tool.get("inputSchema") if isinstance(tool, dict) else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return []
    return [
        (prop, f"Mcp-Param-{sub['x-mcp-header']}")
        for prop, sub in properties.items()
        if isinstance(sub, dict) and isinstance(sub.get("x-mcp-header"), str)
    ]


class _Resume:
    """What an SSE stream said about resuming it: the last event id seen, and the `retry` delay in seconds."""

    __slots__ = ("last_id", "retry")

    def __init__(self) -> None:
        self.last_id: str | None = None
        self.retry = _RETRY


async def _sse_data(response: httpx.Response, resume: _Resume) -> AsyncGenerator[str, None]:
    """The `data` of each `message` event of an SSE body (comments, priming events and other types skipped).

    `id` and `retry` fields are noted in `resume` as they come (HTML's EventSource rules: an id counts even on an
    event without data, such as a priming event; `retry` takes only digits).
    """
    data: list[str] = []
    event = "message"
    async with contextlib.aclosing(cast(AsyncGenerator[str, None], response.aiter_lines())) as lines:
        async for line in lines:
            if not line:  # the end of an event
                text = _message(data, event)
                if text is not None:
                    yield text
                data, event = [], "message"
            elif not line.startswith(":"):  # a comment otherwise
                field, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if field == "data":
                    data.append(value)
                elif field == "event":
                    event = value
                else:
                    _note(field, value, resume)
    text = _message(data, event)
    if text is not None:
        yield text


def _message(data: list[str], event: str) -> str | None:
    """The message an SSE event carries: its data lines, if it is a `message` event with any."""
    if data and event == "message":
        text = "\n".join(data)
        if text.strip():
            return text
    return None


def _note(field: str, value: str, resume: _Resume) -> None:
    """Note an `id` or `retry` field in `resume`."""
    if field == "id" and "\0" not in value:
        resume.last_id = value
    elif field == "retry" and value.isdigit():
        resume.retry = int(value) / 1000


def _request_id(text: str) -> Any:
    """The id of a request of the server (a question to the client), or None for any other message."""
    if '"method"' not in text:  # a result or an error: no need to decode it
        return None
    try:
        message = decode(text)
    except ValueError:
        return None
    return message.get("id") if isinstance(message, dict) and "method" in message else None


def _refusal(body: bytes, response: httpx.Response) -> str:
    """What the server said when it refused a message: its JSON-RPC error's message, else the HTTP status."""
    try:
        error = decode(body.decode("utf-8", "replace")).get("error")
    except (ValueError, AttributeError):
        error = None
    message = error.get("message") if isinstance(error, dict) else None
    status = f"HTTP {response.status_code} {response.reason_phrase}"
    return (
        f"the server refused the answer to its question ({status}): {message}" if isinstance(message, str) else status
    )


def _ends(text: str, request_id: Any) -> bool:
    """Whether a message ends the wait for `request_id`: its answer, or the server's cancellation of it."""
    try:
        message = decode(text)
    except ValueError:
        return False
    if not isinstance(message, dict):
        return False
    if message.get("method") == "notifications/cancelled":
        params = message.get("params")
        return isinstance(params, dict) and params.get("requestId") == request_id
    return "method" not in message and message.get("id") == request_id


class HttpTransport:
    """A [`Transport`][toolkit.Transport] to an MCP server's Streamable HTTP endpoint (made by `Client.http`)."""

    def __init__(self, url: str, client: httpx.AsyncClient, tg: anyio.abc.TaskGroup) -> None:
        self.url = url
        self._http = client
        self._tg = tg
        self._in, self._incoming = anyio.create_memory_object_stream[str](math.inf)
        self.session_id: str | None = None
        """The 2025-11-25 session's id, once `initialize` answered."""
        self.protocol_version: str | None = None
        """The negotiated handshake revision (None before `initialize`, and in 2026-07-28)."""
        self._stateless_calls: dict[Any, anyio.CancelScope] = {}
        # Each tool's parameters marked `x-mcp-header`, learned from the tools/list answers that pass through.
        self._param_headers: dict[str, list[tuple[str, str]]] = {}
        self._stream_open = False
        # The server's requests that came on a call's stream (2025-11-25), by id: the call to fail if the server
        # refuses the answer (it reached a worker that did not ask: docs/deploy.md#several-workers).
        self._asked_by: dict[Any, Any] = {}

    async def send(self, message: str, /) -> None:
        sent = _read_sent(message)
        if sent.method == "notifications/cancelled" and not sent.stateless and self._closed_call(sent.params):
            return
        scope = anyio.CancelScope()
        if sent.stateless and is_valid_id(sent.request_id):
            self._stateless_calls[sent.request_id] = scope
        call = self._asked_by.pop(sent.answered, None) if is_valid_id(sent.answered) else None
        out = _Outgoing(message, self._headers(sent), sent.request_id, sent.method, call)
        self._tg.start_soon(self._post, out, scope)

    def _closed_call(self, params: dict[str, Any]) -> bool:
        """2026-07-28: closing a request's stream is its cancellation; whether the request cancelled was one."""
        scope = self._stateless_calls.pop(params.get("requestId"), None)
        if scope is None:
            return False
        scope.cancel()
        return True

    def _headers(self, sent: _Sent) -> dict[str, str]:
        """The headers of a POST: the revision's (2026-07-28's metadata headers), or the session's."""
        headers = {"accept": _ACCEPT, "content-type": "application/json"}
        if sent.stateless:
            headers["mcp-protocol-version"] = str(sent.meta[VERSION_KEY])
            self._add_metadata_headers(headers, str(sent.method), sent.params)
        else:
            self._add_session_headers(headers)
        return headers

    def _add_session_headers(self, headers: dict[str, str]) -> None:
        """2025-11-25: the revision negotiated and the session's id, once `initialize` answered."""
        if self.protocol_version is not None:
            headers["mcp-protocol-version"] = self.protocol_version
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id

    def _add_metadata_headers(self, headers: dict[str, str], method: str, params: dict[str, Any]) -> None:
        """2026-07-28: the headers that repeat what the body says (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`)."""
        headers["mcp-method"] = method
        key = NAME_PARAMS.get(method)
        name = params.get(key) if key is not None else None
        if not isinstance(name, str):
            return
        headers["mcp-name"] = header_value(name)
        arguments = params.get("arguments")
        if method == "tools/call" and isinstance(arguments, dict):
            for prop, header in self._param_headers.get(name, ()):
                value = arguments.get(prop)
                if value is not None:  # streamable-http: no header for an absent or null value
                    text = value if isinstance(value, str) else json.dumps(value)
                    headers[header] = header_value(text)

    async def _post(self, out: _Outgoing, scope: anyio.CancelScope) -> None:
        """POST one message (cancelled with `scope`)."""
        text, headers, request_id, method, answering = out
        try:
            with scope:
                async with self._exchange(text.encode(), headers, _repeatable(method, request_id)) as response:
                    if answering is not None and response.status_code >= 400:
                        await self._fail(answering, _refusal(await response.aread(), response))
                        return
                    resume = await self._answer(response, request_id, method)
                if resume is not None:
                    await self._resume(request_id, resume)
        except httpx.HTTPError as exc:
            if request_id is not None:
                await self._fail(request_id, f"HTTP request failed: {type(exc).__name__}: {exc}", lost=True)
        finally:
            self._ended(request_id)
        self._open_stream(method)

    @contextlib.asynccontextmanager
    async def _exchange(
        self, content: bytes, headers: dict[str, str], repeatable: bool
    ) -> AsyncIterator[httpx.Response]:
        """POST `content`: the response (its headers read), closed on exit."""
        response = await self._send(content, headers, repeatable)
        try:
            yield response
        finally:
            await response.aclose()

    async def _send(self, content: bytes, headers: dict[str, str], repeatable: bool) -> httpx.Response:
        """Send a POST. A `repeatable` one that failed on a reused keep-alive connection before any of its answer came
        is sent once more: the server closed that connection, idle, as the request reached it (a race no client sees
        coming: it happens when a request follows the last answer by about the server's keep-alive timeout)."""
        reused = True

        async def trace(event: str, info: dict[str, Any]) -> None:
            nonlocal reused
            reused = reused and not event.startswith("connection.connect_")

        extensions = {"trace": trace} if repeatable else None
        request = self._http.build_request("POST", self.url, content=content, headers=headers, extensions=extensions)
        try:
            return await self._http.send(request, stream=True)
        except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError) as exc:
            if not (repeatable and reused):
                raise
            logger.debug("a kept-alive connection broke before the answer (%r): sending the request again", exc)
        request = self._http.build_request("POST", self.url, content=content, headers=headers)
        return await self._http.send(request, stream=True)

    def _ended(self, request_id: Any) -> None:
        """A POST ended: its request is no longer cancelled by closing it, and its questions left unanswered (nothing
        to fail now) are forgotten."""
        self._stateless_calls.pop(request_id, None)
        if self._asked_by and request_id is not None:
            for asked in [a for a, call in self._asked_by.items() if call == request_id]:
                del self._asked_by[asked]

    def _open_stream(self, method: Any) -> None:
        """2025-11-25: once `notifications/initialized` is sent in a session, the GET stream of the server's own
        messages is opened (once)."""
        if method == "notifications/initialized" and self.session_id is not None and not self._stream_open:
            self._stream_open = True
            self._tg.start_soon(self._listen)

    async def _answer(self, response: httpx.Response, request_id: Any, method: Any) -> _Resume | None:
        """Hand the answer to `receive()`; what to resume from when an SSE stream ended before it (else None)."""
        if response.status_code == 202 or request_id is None:
            await response.aread()
            return None
        if response.status_code == 404 and self.session_id is not None:
            # streamable-http: the session has ended; the client MUST start a new one (a caller that keeps a
            # connection makes it again: the error says the server dropped it, whatever the body says)
            await response.aread()
            await self._fail(request_id, self._failure(response), lost=True)
            return None
        kind = _content_type(response)
        if kind == "text/event-stream" and response.is_success:
            return await self._streamed(response, request_id, method)
        body = (await response.aread()).decode("utf-8", "replace")
        answer = _json_answer(body) if kind == "application/json" else None
        if answer is None:
            await self._fail(request_id, self._failure(response))
            return None
        self._note(answer, response, method)
        # An HTTP-level refusal (403, 404...) answers this request, whatever id it gives: none, or one of its own (the
        # Python SDK 1.x refuses a request outside a session with HTTP 400 and the id "server-error").
        if answer.get("id") is None or not response.is_success:
            answer["id"] = request_id
        await self._in.send(encode(answer))
        return None

    async def _streamed(self, response: httpx.Response, request_id: Any, method: Any) -> _Resume | None:
        """Relay an SSE answer; what to resume from when the stream ended before the answer (a 2025-11-25 session's
        stream that gave event ids), else None (the request failed when it cannot be resumed)."""
        resume = _Resume()
        if await self._relay(response, request_id, resume, method):
            return None
        if resume.last_id is not None and self.session_id is not None:
            return resume
        await self._fail(request_id, "the server ended the response stream without an answer", lost=True)
        return None

    def _failure(self, response: httpx.Response) -> str:
        """Why a request failed, from an HTTP answer that is no JSON-RPC answer."""
        if response.status_code == 404 and self.session_id is not None:
            return "the session has ended or expired (HTTP 404): connect again"
        return f"HTTP {response.status_code} {response.reason_phrase}"

    def _note(self, answer: dict[str, Any], response: httpx.Response, method: Any) -> None:
        """What this transport learns from an answer: the tools' parameter headers, the session and its version."""
        if method == "tools/list":
            self._learn(answer.get("result"))
        if method == "initialize" and isinstance(answer.get("result"), dict):
            version = answer["result"].get("protocolVersion")
            self.protocol_version = version if HANDSHAKE_ERA.speaks(version) else None
            self.session_id = response.headers.get("mcp-session-id")

    async def _relay(self, response: httpx.Response, request_id: Any, resume: _Resume, method: Any = None) -> bool:
        """Hand each message of an SSE response to `receive()`; True once the wait for `request_id` ended.

        An `initialize` answered on an SSE stream (the official SDK's server does so) opens the session as a JSON one
        does: noted before the answer is handed on, so that the client's next message already carries its id.
        """
        last = None
        try:
            async with contextlib.aclosing(_sse_data(response, resume)) as events:
                async for data in events:
                    self._learn_from_event(data, response, request_id, method)
                    await self._in.send(data)
                    last = data
        except httpx.HTTPError:  # the connection broke mid-stream: resumed, when the stream gave an id
            logger.debug("an SSE stream broke off", exc_info=True)
        # A stream ends with its answer (transports: "After the JSON-RPC response has been sent, the server SHOULD
        # terminate the SSE stream"), so only the last message needs reading.
        return request_id is not None and last is not None and _ends(last, request_id)

    def _learn_from_event(self, data: str, response: httpx.Response, request_id: Any, method: Any) -> None:
        """What this transport learns from a message of a request's stream before it is handed on: the session an
        `initialize` answer opens, and which call a question of the server's belongs to (2025-11-25)."""
        if method == "initialize" and (answer := _json_answer(data)) is not None:
            self._note(answer, response, method)
        if request_id is not None and self.session_id is not None:
            asked = _request_id(data)
            if asked is not None:
                self._asked_by[asked] = request_id

    def _session_headers(self, resume: _Resume) -> dict[str, str]:
        """The headers of a GET: the session's, and the last event id seen (to resume after it)."""
        headers = {"accept": "text/event-stream"}
        self._add_session_headers(headers)
        if resume.last_id is not None:
            headers["last-event-id"] = resume.last_id
        return headers

    async def _resume(self, request_id: Any, resume: _Resume) -> None:
        """A request's stream ended before its answer: GET + Last-Event-ID (after `retry`) until the answer comes.

        transports §Resumability: "Resumption is always via HTTP GET with Last-Event-ID", also for a stream a POST
        began; the client "MUST respect the retry field". Each 200 is progress (a polling server closes streams
        that carry nothing new); only failures to get an answer at all count towards giving up.
        """
        failures = 0
        while True:
            await anyio.sleep(min(resume.retry * 2**failures, max(resume.retry, _MAX_RETRY)))
            try:
                async with self._http.stream("GET", self.url, headers=self._session_headers(resume)) as response:
                    if response.status_code != 200 or _content_type(response) != "text/event-stream":
                        await response.aread()
                        why = "the server ended the stream" if response.status_code == 204 else "HTTP"
                        why = f"cannot resume the response stream: {why} {response.status_code}"
                        await self._fail(request_id, why, lost=True)
                        return
                    failures = 0
                    if await self._relay(response, request_id, resume):
                        return
            except httpx.TransportError:
                failures += 1
                if failures >= _ATTEMPTS:
                    raise

    def _learn(self, result: Any) -> None:
        """Note each listed tool's parameters marked `x-mcp-header` (a `tools/list` answer)."""
        tools = result.get("tools") if isinstance(result, dict) else None
        for tool in tools if isinstance(tools, list) else ():
            marked = _marked_params(tool)
            if marked:
                self._param_headers[str(tool.get("name"))] = marked

    async def _fail(self, request_id: Any, message: str, *, lost: bool = False) -> None:
        """Answer the request with an error of the transport's: `lost` when the server is unreachable, or dropped the
        request or its session (`UNREACHABLE`)."""
        data = UNREACHABLE if lost else None
        await self._in.send(encode(error_response(request_id, -32603, message, data=data)))

    async def _listen(self) -> None:
        """The 2025-11-25 GET stream: the server's messages that belong to no request (tools/list_changed).

        Reopened when it ends, after `retry`, with `Last-Event-ID` once the server gave ids; not after a 4xx (405:
        the server offers no such stream, which is allowed; 404: the session is gone), nor after failing
        `_ATTEMPTS` times in a row (409, another GET stream of the session still open, counts as a failure).
        """
        resume = _Resume()
        failures = 0
        while failures < _ATTEMPTS:
            try:
                async with self._http.stream("GET", self.url, headers=self._session_headers(resume)) as response:
                    if response.status_code == 200:
                        failures = 0
                        await self._relay(response, None, resume)
                    elif response.status_code == 409:
                        failures += 1
                    else:
                        return
            except httpx.TransportError:
                failures += 1
            await anyio.sleep(min(resume.retry * 2**failures, max(resume.retry, _MAX_RETRY)))

    async def receive(self) -> str:
        try:
            return await self._incoming.receive()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None

    async def aclose(self) -> None:
        self._in.close()
        self._incoming.close()


@contextlib.asynccontextmanager
async def open_http(
    url: str,
    headers: Mapping[str, str] | None,
    timeout: float,  # noqa: ASYNC109 (httpx's connect/write/pool timeout, not a deadline for the caller)
    client: httpx.AsyncClient | None,
    auth: httpx.Auth | None = None,
) -> AsyncIterator[HttpTransport]:
    """Connect to `url`; on exit end the session (DELETE) and close what was opened here."""
    async with contextlib.AsyncExitStack() as stack:
        if client is None:
            # No read timeout: an SSE stream (a long call, a subscription) may stay quiet for as long as it likes.
            client = httpx.AsyncClient(timeout=httpx.Timeout(timeout, read=None), auth=auth, verify=_tls())
            await stack.enter_async_context(client)
        if headers:
            client.headers.update(headers)
        tg = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(tg.cancel_scope.cancel)
        transport = HttpTransport(url, client, tg)
        try:
            yield transport
        finally:
            if transport.session_id is not None:
                with anyio.move_on_after(timeout, shield=True), contextlib.suppress(httpx.HTTPError):
                    await client.delete(url, headers={"mcp-session-id": transport.session_id})
            await transport.aclose()


@functools.cache
def _tls() -> ssl.SSLContext:
    """The TLS context of the clients `open_http` makes, made once a process (httpx's own default, from the
    environment's `SSL_CERT_FILE`/`SSL_CERT_DIR` or certifi's store as first read): httpx otherwise builds one for
    every client, loading the certificate store each time, about 40 ms of a core, even for an `http://` URL."""
    return httpx.create_ssl_context()


def _json_answer(body: str) -> dict[str, Any] | None:
    """The JSON-RPC answer a JSON body holds (a result or an error), or None."""
    try:
        answer = decode(body)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) and ("result" in answer or "error" in answer) else None
