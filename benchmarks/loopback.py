"""A minimal stand-in for the OpenAI API on 127.0.0.1, for the cold-start benchmark.

Stateless and scripted by the request itself: while the input holds no tool result it
answers with one `get_order_status("ORD-1001")` call, then with the answer. It speaks
`/v1/responses` and `/v1/chat/completions`, with replies shaped like the real API's.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGUMENTS = json.dumps({"order_id": "ORD-1001"})
ANSWER = "订单 ORD-1001 的状态是：已发货。"
USAGE = {
    "input_tokens": 120,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 140,
}


def responses_reply(body: dict) -> dict:
    answered = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in body.get("input") or [])
    if answered:
        output = [
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
            }
        ]
    else:
        output = [
            {
                "id": "fc_1",
                "type": "function_call",
                "status": "completed",
                "call_id": "call_1",
                "name": "get_order_status",
                "arguments": ARGUMENTS,
            }
        ]
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1_760_000_000,
        "status": "completed",
        "model": body.get("model", "gpt-4o-mini"),
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "text": {"format": {"type": "text"}},
        "usage": USAGE,
    }


def chat_reply(body: dict) -> dict:
    answered = any(isinstance(m, dict) and m.get("role") == "tool" for m in body.get("messages") or [])
    message: dict = {"role": "assistant", "content": ANSWER if answered else None, "refusal": None}
    if not answered:
        message["tool_calls"] = [
            {"id": "call_1", "type": "function", "function": {"name": "get_order_status", "arguments": ARGUMENTS}}
        ]
    return {
        "id": "chatcmpl_1",
        "object": "chat.completion",
        "created": 1_760_000_000,
        "model": body.get("model", "gpt-4o-mini"),
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": "stop" if answered else "tool_calls"}
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 15, "total_tokens": 115},
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        make = {"/v1/responses": responses_reply, "/v1/chat/completions": chat_reply}.get(self.path)
        data = json.dumps(make(body) if make else {"error": {"message": "no such route"}}).encode()
        self.send_response(200 if make else 404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


class Loopback:
    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Loopback:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
