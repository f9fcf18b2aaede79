"""`run_workflow`, the plain hand-written tool loop orderbot replaces, with a scripted model
instead of the API.

This is the baseline of the loop-overhead benchmark: a minimal hand loop (a
for-loop over steps, dict dispatch, `json.loads` of the arguments, chat-shaped message
dicts, no validation beyond the tool's own checks, no limit but MAX_STEPS). The scripted
"client" plays back response objects shaped like the Responses API's (`.output`,
`.output_text`); the benchmark builds them afresh for every run (`two_turn_script()`), as
orderbot's side builds its turns afresh, so both loops pay the same (near zero) for the
model itself.
"""

from __future__ import annotations

import json

MAX_STEPS = 3
ARGUMENTS = '{"order_id": "ORD-1001"}'
ANSWER = "订单 ORD-1001 的状态是：已发货。"
ORDERS = {"ORD-1001": "已发货", "ORD-1002": "处理中"}


def get_order_status(order_id: str) -> dict:
    if not isinstance(order_id, str) or not order_id.startswith("ORD-"):
        raise ValueError("订单号格式不正确")
    if len(order_id) > 32:
        raise ValueError("订单号过长")
    return {"order_id": order_id, "status": ORDERS.get(order_id, "不存在")}


TOOLS = [
    {
        "type": "function",
        "name": "get_order_status",
        "description": "查询订单状态，只能用于用户明确提供订单号的只读查询。",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
            "additionalProperties": False,
        },
        "strict": True,
    }
]

DISPATCH = {"get_order_status": get_order_status}


class _Item:
    __slots__ = ("type", "call_id", "name", "arguments")

    def __init__(self, type: str, call_id: str = "", name: str = "", arguments: str = "") -> None:
        self.type, self.call_id, self.name, self.arguments = type, call_id, name, arguments


class _Response:
    __slots__ = ("output", "output_text")

    def __init__(self, output: list, output_text: str = "") -> None:
        self.output, self.output_text = output, output_text


class ScriptedClient:
    """`client.responses.create(...)` that plays back a fixed list of responses."""

    def __init__(self, script: list[_Response]) -> None:
        self.script = script
        self.responses = self
        self._next = 0

    def create(self, **request) -> _Response:
        response = self.script[self._next]
        self._next += 1
        return response


def two_turn_script() -> list[_Response]:
    """The benchmark's scenario: one get_order_status call, then the answer."""
    return [
        _Response([_Item("function_call", "call_1", "get_order_status", ARGUMENTS)]),
        _Response([_Item("message")], ANSWER),
    ]


def run_workflow(client: ScriptedClient, user_text: str, model: str = "gpt-4o-mini") -> str:
    items = [{"role": "user", "content": user_text}]

    for _step in range(1, MAX_STEPS + 1):
        response = client.responses.create(
            model=model,
            instructions=(
                "你是订单查询助手。只能查询订单，不能修改数据。如果缺少订单号，直接向用户询问；完成查询后给出简洁答案。"
            ),
            tools=TOOLS,
            input=items,
        )

        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return response.output_text

        outputs = []
        for call in calls:
            function = DISPATCH.get(call.name)
            if function is None:
                result = {"ok": False, "error": "工具不在白名单中"}
            else:
                try:
                    arguments = json.loads(call.arguments)
                    result = {"ok": True, "data": function(**arguments)}
                except (json.JSONDecodeError, TypeError, ValueError) as exc:
                    result = {"ok": False, "error": str(exc)}

            outputs.append(
                {
                    "type": "function_call_output",
                    "call_id": call.call_id,
                    "output": json.dumps(result, ensure_ascii=False),
                }
            )

        items = items + response.output + outputs

    raise RuntimeError(f"工作流超过 {MAX_STEPS} 步，已停止")
