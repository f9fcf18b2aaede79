"""A loopback stand-in for the OpenAI API: the real openai SDK talks to it over HTTP.

It speaks two routes, `POST /v1/responses` (the Responses API) and
`POST /v1/chat/completions` (Chat Completions), and `GET /v1/models` (the listing of
`api.models`, unless a script is queued for "models"). Each route has a queue of scripted
replies; every request is logged. Replies are shaped like the real API's (a test parses
them with the SDK's own types), so what works here works against the service.

    with FakeAPI() as api:
        api.enqueue("responses", response(function_call("get_order_status", {"order_id": "ORD-1001"})))
        api.enqueue("responses", lambda req: response(message(f"saw {len(req.body['input'])} items")))
        ...  # point the program at api.url (http://127.0.0.1:PORT/v1)
        assert len(api.requests) == 2

A queued entry is a `Reply`, a plain dict (sent as a 200 JSON body), or a function of the
`Request` returning either. When a route's queue is empty its `fallback` answers (by
default a 500 saying the script ran out), so `api.fallback["chat"] = error(500, ...)` is
"fail forever". Behaviours beyond a status and a body: `hang()` never answers (until the
server closes), `stall(partial)` sends the headers and part of a body then hangs,
`trickle(every)` sends a byte now and then forever, `reset()` drops the connection with
a TCP reset.

Streaming: a request with `"stream": true` gets a scripted dict reply as Server-Sent
Events, shaped like the real API's stream (`sse()`): text in small deltas, then the end.
`FakeAPI(streams=False)` plays a server that ignores `stream` and answers with plain JSON;
`stream_of(...)` scripts a stream by hand (e.g. megabytes of deltas, or a first event and
then silence); `api.sent_bytes` and `api.closed` say how much of a stream went out before
the client hung up.

`WIRES["openai"]` and `WIRES["chat"]` write the same scripts for either provider: a turn
of calls, a text turn, and the tool outputs a request carried.

Nothing here sleeps blindly: hanging and trickling handlers wait on an event that
`close()` sets, so the server always shuts down promptly.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from typing import Any

ROUTES = {"/v1/responses": "responses", "/v1/chat/completions": "chat", "/v1/models": "models"}


# ---- what the server can do -----------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    behaviour: str = "respond"  # respond, hang, stall, trickle, reset, stream
    every: float = 0.0  # trickle: seconds between bytes
    chunks: Any = None  # stream: an iterable of bytes, sent one by one (None after it: hang)


@dataclass(frozen=True)
class Request:
    route: str  # "responses", "chat" or the raw path when unknown
    path: str
    headers: dict[str, str]  # lower-case names
    raw: bytes
    at: float  # time.monotonic() when the request arrived

    @property
    def body(self) -> Any:
        """The JSON body, or None when it is not JSON."""
        try:
            return json.loads(self.raw)
        except ValueError:
            return None


Script = Reply | dict | Callable[[Request], Reply | dict]


def reply(body: dict | list, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(body, ensure_ascii=False).encode(), dict(headers or {}))


def raw(body: bytes | str, status: int = 200, content_type: str = "text/html") -> Reply:
    """Any bytes at all, e.g. a proxy's HTML page or a truncated JSON document."""
    data = body.encode() if isinstance(body, str) else body
    return Reply(status, data, {}, content_type)


ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_denied",
    404: "invalid_request_error",
    429: "rate_limit_exceeded",
}


def error(status: int, message: str = "", *, code: str | None = None, headers: dict[str, str] | None = None) -> Reply:
    """The API's error envelope: {"error": {"message", "type", "param", "code"}}."""
    body = {
        "error": {
            "message": message or f"error {status}",
            "type": ERROR_TYPES.get(status, "server_error"),
            "param": None,
            "code": code,
        }
    }
    return reply(body, status, headers)


def llama_cpp_error(message: str, status: int = 500) -> Reply:
    """llama.cpp's server error body: {"error": {"code": 500, "message": ..., "type": "server_error"}}."""
    return reply({"error": {"code": status, "message": message, "type": "server_error"}}, status)


# What llama.cpp answers (on both APIs) to a request whose history holds a tool call whose
# arguments are not JSON.
LLAMA_CPP_BAD_ARGUMENTS = (
    "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1, "
    "column 18: syntax error while parsing value - invalid string: missing closing quote; last read: '\"}} # 2. …'"
)


def hang() -> Reply:
    """Read the request and never answer."""
    return Reply(behaviour="hang")


def stall(partial: bytes = b'{"id": "resp_') -> Reply:
    """Send 200 headers and the first bytes of a body, then never finish it."""
    return Reply(body=partial, behaviour="stall")


def trickle(every: float = 0.2) -> Reply:
    """Send 200 headers, then one byte of body every `every` seconds, never finishing.

    Each read succeeds before a per-read timeout fires, so only a deadline on the whole
    request stops it.
    """
    return Reply(body=b" ", behaviour="trickle", every=every)


def stream_of(chunks, *, hang_after: bool = False, headers: dict[str, str] | None = None) -> Reply:
    """A 200 `text/event-stream` whose body is `chunks` (an iterable of bytes, e.g. SSE
    events made by `event()`), each written and flushed on its own. With `hang_after`,
    the stream then stays open, sending an SSE comment now and then (a keep-alive), never
    ending. `headers` go out as given (e.g. `content-encoding: gzip` for chunks that are)."""
    return Reply(
        headers=dict(headers or {}),
        content_type="text/event-stream",
        behaviour="stream",
        chunks=chunks,
        every=0.05 if hang_after else 0,
    )


def event(data: dict | str, name: str | None = None) -> bytes:
    """One Server-Sent Event."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return (f"event: {name}\n" if name else "").encode() + f"data: {text}\n\n".encode()


def sse(route: str, body: dict, piece: int = 8) -> list[bytes]:
    """A whole reply `body` as the API would stream it, text in deltas of `piece` characters."""
    return _responses_events(body, piece) if route == "responses" else _chat_events(body, piece)


def _pieces(text: str, piece: int) -> list[str]:
    return [text[i : i + piece] for i in range(0, len(text), piece)] or [""]


def _chat_events(body: dict, piece: int) -> list[bytes]:
    choice = body["choices"][0]
    message = choice["message"]
    head = {k: body.get(k) for k in ("id", "created", "model", "system_fingerprint")} | {
        "object": "chat.completion.chunk"
    }

    def chunk(delta: dict, finish: str | None = None) -> bytes:
        return event(head | {"choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    out = [chunk({"role": "assistant", "content": ""})]
    if message.get("content"):
        out += [chunk({"content": p}) for p in _pieces(message["content"], piece)]
    for index, call in enumerate(message.get("tool_calls") or []):
        start = {"index": index, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"]}}
        out.append(chunk({"tool_calls": [start | {"function": start["function"] | {"arguments": ""}}]}))
        for p in _pieces(call["function"]["arguments"], piece):
            out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}))
    out.append(chunk({}, choice["finish_reason"]))
    if body.get("usage"):
        out.append(event(head | {"choices": [], "usage": body["usage"]}))
    return [*out, event("[DONE]")]


def _responses_events(body: dict, piece: int) -> list[bytes]:
    sequence = count()

    def ev(kind: str, **fields: Any) -> bytes:
        return event({"type": kind, "sequence_number": next(sequence), **fields}, kind)

    out = [ev("response.created", response=body | {"status": "in_progress", "output": []})]
    for index, item in enumerate(body["output"]):
        empty = {"content": []} if item["type"] == "message" else {"arguments": ""} if "arguments" in item else {}
        out.append(ev("response.output_item.added", output_index=index, item=item | empty))  # filled by deltas
        if item["type"] == "message":
            text = "".join(p.get("text", "") for p in item["content"])
            for p in _pieces(text, piece):
                out.append(
                    ev("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0, delta=p)
                )
        elif item["type"] == "function_call":
            for p in _pieces(item["arguments"], piece):
                out.append(
                    ev("response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=p)
                )
        out.append(ev("response.output_item.done", output_index=index, item=item))
    end = {"completed": "response.completed", "incomplete": "response.incomplete"}.get(
        body["status"], "response.failed"
    )
    out.append(ev(end, response=body))
    return out


def reset() -> Reply:
    """Close the connection with a TCP reset, without a response."""
    return Reply(behaviour="reset")


# ---- replies shaped like the real API -------------------------------------------------

_ids = count(1)


def _id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):08x}"


def message(text: str) -> dict:
    """A Responses API output message."""
    return {
        "id": _id("msg"),
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(name: str, arguments: dict | str, call_id: str | None = None) -> dict:
    """A Responses API function_call output item; `arguments` may be raw (broken) text."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {
        "id": _id("fc"),
        "type": "function_call",
        "status": "completed",
        "call_id": call_id or _id("call"),
        "name": name,
        "arguments": args,
    }


def reasoning(summary: str = "") -> dict:
    return {
        "id": _id("rs"),
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": summary}] if summary else [],
    }


def response(
    *output: dict,
    input_tokens: int = 120,
    output_tokens: int = 20,
    model: str = "gpt-4o-mini",
    status: str = "completed",
    incomplete: str | None = None,
) -> dict:
    """A whole Responses API `Response` object; `incomplete` is the reason of an incomplete one."""
    return {
        "id": _id("resp"),
        "object": "response",
        "created_at": 1_760_000_000,
        "status": status,
        "model": model,
        "output": list(output),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "instructions": None,
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "text": {"format": {"type": "text"}},
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        },
    }


def model_list(ids) -> dict:
    """The body of GET /v1/models listing `ids`."""
    return {"object": "list", "data": [{"id": i, "object": "model", "created": 0, "owned_by": "fakeapi"} for i in ids]}


def tool_call(name: str, arguments: dict | str, call_id: str | None = None) -> dict:
    """A Chat Completions tool call."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id or _id("call"), "type": "function", "function": {"name": name, "arguments": args}}


def completion(
    content: str | None = None,
    tool_calls: list[dict] | None = None,
    *,
    prompt_tokens: int = 100,
    completion_tokens: int = 15,
    model: str = "gpt-4o-mini",
    finish_reason: str | None = None,
    system_fingerprint: str | None = None,
) -> dict:
    """A whole Chat Completions `ChatCompletion` object."""
    msg: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None, "annotations": []}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return {
        "id": _id("chatcmpl"),
        "object": "chat.completion",
        "created": 1_760_000_000,
        "model": model,
        "system_fingerprint": system_fingerprint,
        "choices": [
            {
                "index": 0,
                "message": msg,
                "logprobs": None,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


@dataclass(frozen=True)
class Wire:
    """One provider's side of the script: which route, and how its turns look."""

    provider: str
    route: str
    calls: Callable[..., dict]  # calls(("get_order_status", {"order_id": "ORD-1001"}), ...)
    text: Callable[[str], dict]
    outputs: Callable[[Request], dict[str, Any]]  # call_id -> the tool's envelope, as sent
    arguments: Callable[[Request], list[str]]  # the arguments of every call in the request's history
    empty: Callable[[], dict]  # HTTP 200 with nothing in it: "" and no calls, or output: []
    cut: Callable[[str], dict]  # a reply that ended at the output-token limit, with this partial text


def _responses_outputs(request: Request) -> dict[str, Any]:
    return {
        i["call_id"]: json.loads(i["output"]) for i in request.body["input"] if i.get("type") == "function_call_output"
    }


def _chat_outputs(request: Request) -> dict[str, Any]:
    return {m["tool_call_id"]: json.loads(m["content"]) for m in request.body["messages"] if m["role"] == "tool"}


def _responses_arguments(request: Request) -> list[str]:
    return [i["arguments"] for i in request.body["input"] if i.get("type") == "function_call"]


def _chat_arguments(request: Request) -> list[str]:
    messages = request.body["messages"]
    return [c["function"]["arguments"] for m in messages for c in m.get("tool_calls") or []]


WIRES = {
    "openai": Wire(
        "openai",
        "responses",
        lambda *c: response(*(function_call(n, a) for n, a in c)),
        lambda t: response(message(t)),
        _responses_outputs,
        _responses_arguments,
        lambda: response(),
        lambda t: response(message(t), status="incomplete", incomplete="max_output_tokens"),
    ),
    "chat": Wire(
        "chat",
        "chat",
        lambda *c: completion(None, [tool_call(n, a) for n, a in c]),
        lambda t: completion(t),
        _chat_outputs,
        _chat_arguments,
        lambda: completion(""),
        lambda t: completion(t, finish_reason="length"),
    ),
}


# ---- the server -----------------------------------------------------------------------


class FakeAPI:
    """A ThreadingHTTPServer on 127.0.0.1 with a port of its own, run in a thread."""

    def __init__(self, *, streams: bool = True) -> None:
        self.streams = streams  # False: a server that ignores "stream": true
        self.sent_bytes = 0  # of the body of the latest stream, written before the client hung up
        self.closed = threading.Event()  # set when a client hung up on a stream or a body
        self.queues: dict[str, list[Script]] = {"responses": [], "chat": [], "models": []}
        out = error(500, "the fake API has no scripted reply left")
        self.models = ["fake-model"]  # what GET /v1/models lists
        self.fallback: dict[str, Script] = {"responses": out, "chat": out, "models": lambda _: model_list(self.models)}
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def enqueue(self, route: str, *scripts: Script) -> FakeAPI:
        with self._lock:
            self.queues[route].extend(scripts)
        return self

    def requests_for(self, route: str) -> list[Request]:
        return [r for r in self.requests if r.route == route]

    def pending(self, route: str) -> int:
        return len(self.queues[route])

    def start(self) -> FakeAPI:
        self._thread.start()
        return self

    def close(self) -> None:
        self._release.set()  # wake every hanging handler
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _next(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            queue = self.queues.get(request.route)
            script = queue.pop(0) if queue else self.fallback.get(request.route, error(404, "no such route"))
        if callable(script):
            script = script(request)
        if isinstance(script, Reply):
            return script
        body = request.body if isinstance(request.body, dict) else {}
        if self.streams and body.get("stream") is True and request.route in ("responses", "chat"):
            return stream_of(sse(request.route, script))
        return reply(script)


def _handler(api: FakeAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            request = Request(
                ROUTES.get(self.path, self.path),
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
                body,
                time.monotonic(),
            )
            answer = api._next(request)
            if answer.behaviour == "hang":
                api._release.wait()
                self.close_connection = True
                return
            if answer.behaviour == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                return
            self.send_response(answer.status)
            self.send_header("content-type", answer.content_type)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            if answer.behaviour == "stream":
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")  # the body ends when the connection does
                self.end_headers()
                api.sent_bytes = 0
                try:
                    for chunk in answer.chunks:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        api.sent_bytes += len(chunk)
                    while answer.every and not api._release.wait(answer.every):
                        self.wfile.write(b": keep-alive\n\n")
                        self.wfile.flush()
                except OSError:  # the client hung up
                    api.closed.set()
                self.close_connection = True
                return
            if answer.behaviour in ("stall", "trickle"):
                self.send_header("content-length", "1000000")
                self.end_headers()
                try:
                    self.wfile.write(answer.body)
                    self.wfile.flush()
                    # trickle: a byte each `every` seconds; stall: nothing more, until closed
                    while not api._release.wait(answer.every or None):
                        self.wfile.write(answer.body)
                        self.wfile.flush()
                except OSError:  # the client gave up (its deadline), as it should: not the test's failure
                    api.closed.set()
                self.close_connection = True
                return
            self.send_header("content-length", str(len(answer.body)))
            self.end_headers()
            try:
                self.wfile.write(answer.body)
            except OSError:  # the client hung up before the whole body went out
                api.closed.set()
                self.close_connection = True

        do_GET = do_POST  # noqa: N815 - the stdlib's name; GET /v1/models

        def log_message(self, format: str, *args: object) -> None:  # keep test output clean
            pass

    return Handler
