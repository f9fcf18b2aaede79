"""The built-in offline model: a deterministic planner that needs no key and no network.

It reads the person's latest message, proposes the matching tool calls in one turn, and
once their results are back writes the answer in the language of the question. Offered the
retail shop's tools, it answers that shop's questions instead (orderbot.models.offline_retail). It only
ever reads the structured fields of tool results (status, code, ...): text found inside a
result, such as an order note, is never treated as an instruction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from orderbot.loop.items import FunctionCall, FunctionCallOutput, Item, Message, assistant
from orderbot.models import offline_retail as retail
from orderbot.models.base import ModelRequest, Turn
from orderbot.shops.sample.model import CANCELLABLE, STATUS_WORDS_EN, format_money

ORDER_ID = re.compile(r"\bORD-[A-Za-z0-9_-]+", re.I)
PRONOUN = re.compile(r"它|这个订单|这单|那个订单|那单|\bit\b|\bthat order\b|\bthis order\b", re.I)
REASON = re.compile(r"(?:原因[是为：:]?|因为|reason[:：]?\s*|because\s+)(.+)$", re.I)
# "取消订单 ORD-1002，不想要了": words after the id and a comma are the reason.
TRAILING_REASON = re.compile(r"ORD-[A-Za-z0-9_-]+\s*[，,；;：:]\s*(.+)$", re.I)

INTENTS = (  # first match wins; each needs the tool to be offered
    ("cancel_order", re.compile(r"取消|退掉|不要了|\bcancel", re.I)),
    (
        "get_order_details",
        re.compile(
            r"详情|详细|明细|物流|快递|运单|内容|买了什么|\bdetails?\b|\btracking\b|\bshipping\b|\bitems?\b", re.I
        ),
    ),
)
LIST_INTENT = re.compile(
    r"我的(?:所有)?订单|所有订单|哪些订单|订单列表|\bmy orders\b|\blist\b.*\borders?\b|\ball (?:of )?my\b", re.I
)

STATUS_EN = {status: words[0] for status, words in STATUS_WORDS_EN.items()}


class OfflineModel:
    provider = "offline"
    name = "offline-planner"

    def respond(self, request: ModelRequest) -> Turn:
        items = list(request.items)
        offered = {tool["name"] for tool in request.tools}
        if offered >= retail.TOOLS:  # the retail shop's tools: its own questions and answers
            return self._retail(items)
        start = _last_user_index(items)
        question = items[start].content if start is not None else ""
        outputs = [i for i in items[(start or 0) + 1 :] if isinstance(i, FunctionCallOutput) and _ran(i)]
        if outputs:
            calls = {i.call_id: i for i in items[(start or 0) + 1 :] if isinstance(i, FunctionCall)}
            return Turn((assistant(answer(question, outputs, calls)),))
        planned = plan(question, items[:start] if start else [], offered)
        if not planned:
            return Turn((assistant(ask_for_id(question, offered)),))
        made = sum(isinstance(i, FunctionCall) for i in items)
        return Turn(tuple(self._call(name, args, made + n) for n, (name, args) in enumerate(planned, 1)))

    def _retail(self, items: list[Item]) -> Turn:
        start = _last_user_index(items)
        question = items[start].content if start is not None else ""
        step = retail.next_step(question, retail.done_calls(items))
        if isinstance(step, str):
            return Turn((assistant(step),))
        name, args = step
        return Turn((self._call(name, args, sum(isinstance(i, FunctionCall) for i in items) + 1),))

    def _call(self, name: str, args: dict, number: int) -> FunctionCall:
        # Numbered after the calls already in the conversation, not by this instance: a
        # resumed run gets a new model, and a call id must name one call of the run.
        return FunctionCall(call_id=f"call_offline_{number}", name=name, arguments=json.dumps(args, ensure_ascii=False))


def plan(question: str, history: Sequence[Item], offered: set[str]) -> list[tuple[str, dict]]:
    """The tool calls a careful assistant would make for this message."""
    ids = _unique(match.upper() for match in ORDER_ID.findall(question))
    if not ids and PRONOUN.search(question):
        last = last_order_id(history)
        ids = [last] if last else []
    if not ids:
        if "list_my_orders" in offered and LIST_INTENT.search(question):
            return [("list_my_orders", {})]
        return []
    for tool, pattern in INTENTS:
        if tool in offered and pattern.search(question):
            if tool == "cancel_order":
                return [(tool, {"order_id": oid, "reason": _reason(question)}) for oid in ids]
            return [(tool, {"order_id": oid}) for oid in ids]
    return [("get_order_status", {"order_id": oid}) for oid in ids]


def last_order_id(history: Sequence[Item]) -> str | None:
    """The order most recently discussed: for "它" / "it" in a follow-up question."""
    for item in reversed(history):
        if isinstance(item, FunctionCall):
            try:
                oid = json.loads(item.arguments).get("order_id")
            except (ValueError, AttributeError):
                oid = None
            if isinstance(oid, str):
                return oid
        elif isinstance(item, Message) and item.role == "user":
            found = ORDER_ID.findall(item.content)
            if found:
                return found[-1].upper()
    return None


def ask_for_id(question: str, offered: set[str]) -> str:
    if is_chinese(question):
        return "请提供要查询的订单号（以 ORD- 开头）。"
    return "Which order do you mean? Please give the order id (it starts with ORD-)."


def answer(question: str, outputs: Sequence[FunctionCallOutput], calls: dict[str, FunctionCall]) -> str:
    zh = is_chinese(question)
    lines = []
    for output in outputs:
        call = calls.get(output.call_id)
        name = call.name if call else ""
        try:
            args = json.loads(call.arguments) if call else {}
            if not isinstance(args, dict):
                args = {}
        except ValueError:
            args = {}
        try:
            envelope = json.loads(output.output)
        except ValueError:
            envelope = {"ok": False, "code": "internal_error", "error": ""}
        target = str(args.get("order_id", ""))[:40]
        if envelope.get("ok"):
            lines.append(_success(name, target, envelope.get("data"), zh))
        else:
            lines.append(_failure(name, target, str(envelope.get("code", "")), str(envelope.get("error", "")), zh))
    return "\n".join(lines)


def _success(name: str, target: str, data: object, zh: bool) -> str:
    data = data if isinstance(data, dict) else {}
    oid = str(data.get("order_id", target))
    if name == "get_order_status":
        status = str(data.get("status", ""))
        if status == "不存在":
            return f"没有找到订单 {oid}。" if zh else f"Order {oid} was not found."
        return (
            f"订单 {oid} 的状态是：{status}。" if zh else f"Order {oid} is {STATUS_EN.get(status, status)} ({status})."
        )
    if name == "get_order_details":
        return _details(data, zh)
    if name == "list_my_orders":
        return _listing(data, zh)
    if name == "cancel_order":
        return f"订单 {oid} 已取消。" if zh else f"Order {oid} has been cancelled."
    return "已完成。" if zh else "Done."


def _details(data: dict, zh: bool) -> str:
    oid, status = data.get("order_id", ""), str(data.get("status", ""))
    items = data.get("items") or []
    separator = "、" if zh else ", "  # each language's own list separator
    goods = separator.join(f"{i.get('name')} ×{i.get('quantity')}" for i in items if isinstance(i, dict))
    money = _money(data)
    shipping = data.get("shipping") or {}
    if zh:
        text = f"订单 {oid}：{status}，{goods}，合计 {money}"
        if shipping.get("tracking_number"):
            text += f"，{shipping.get('carrier')} 运单号 {shipping.get('tracking_number')}"
        return text + "。"
    text = f"Order {oid}: {STATUS_EN.get(status, status)} ({status}); {goods}; total {money}"
    if shipping.get("tracking_number"):
        text += f"; {shipping.get('carrier')} tracking number {shipping.get('tracking_number')}"
    return text + "."


def _money(data: dict) -> str:
    """The total as every view shows money (format_money: ¥227.00), whatever the data holds."""
    try:
        return format_money(float(data.get("total")), str(data.get("currency") or "CNY"))
    except (TypeError, ValueError):
        return f"{data.get('currency', '')} {data.get('total', '')}".strip()


def _listing(data: dict, zh: bool) -> str:
    orders = [o for o in data.get("orders") or [] if isinstance(o, dict)]
    if not orders:
        return "你目前没有订单。" if zh else "You have no orders."
    rows = [
        f"{o.get('order_id')}：{o.get('status')}"
        if zh
        else f"{o.get('order_id')}: {STATUS_EN.get(str(o.get('status')), o.get('status'))}"
        for o in orders
    ]
    head = f"你的订单（{len(orders)} 个）：" if zh else f"Your orders ({len(orders)}):"
    tail = ""
    if data.get("more"):
        tail = "\n（还有更早的订单未列出）" if zh else "\n(older orders are not listed)"
    return head + "\n" + "\n".join(rows) + tail


FAILURES_ZH = {
    "not_found": "没有找到订单 {t}。",
    "no_access": "你的账户下没有订单 {t}，无法查看或操作它。",
    "sign_in_required": "这个操作需要登录：请用 --user 指定你的用户身份。",
    "rejected": "你没有确认，所以没有对订单 {t} 做任何操作。",
    # {e} is the store's English sentence; the Chinese answer says the same in Chinese (_failure)
    "not_cancellable": "订单 {t} 当前状态不能取消：{e}",
    "read_only": "订单 {t} 没有取消：现在用的是 orderbot 自带的只读示例数据，请用 --orders 指定你自己的订单文件。",
    "busy": "订单 {t} 没有取消：订单文件正被另一个操作占用，请稍后再试。",
    "write_failed": "订单 {t} 没有取消：保存修改失败，请稍后再试。",
    "store_unavailable": "订单 {t} 没有取消：订单文件暂时无法读取。",
    "internal_error": "处理订单 {t} 时发生内部错误，请稍后再试。",
    "unknown_tool": "我无法执行这个操作。",
}
FAILURES_EN = {
    "not_found": "Order {t} was not found.",
    "no_access": "Order {t} is not among your orders, so I cannot show or change it.",
    "sign_in_required": "This needs you to sign in: pass your user id with --user.",
    "rejected": "You did not approve, so nothing was done to order {t}.",
    "not_cancellable": "Order {t} cannot be cancelled now: {e}",
    "read_only": (
        "Order {t} was not cancelled: these are orderbot's read-only sample orders; pass --orders with your own file."
    ),
    "busy": "Order {t} was not cancelled: the orders file is busy with another change; please try again.",
    "write_failed": "Order {t} was not cancelled: the change could not be saved; please try again.",
    "store_unavailable": "Order {t} was not cancelled: the orders file cannot be read right now.",
    "internal_error": "Something went wrong inside orderbot while handling order {t}; please try again later.",
    "unknown_tool": "I cannot do that.",
}


def _failure(name: str, target: str, code: str, error: str, zh: bool) -> str:
    table = FAILURES_ZH if zh else FAILURES_EN
    if zh and code == "not_cancellable":
        error = _not_cancellable_zh(error)
    if code in table:
        return table[code].format(t=target or "?", e=error)
    if zh:
        return f"订单号 {target} 无效：{error}" if target else f"请求无效：{error}"
    return f"The order id {target} is not valid: {error}" if target else f"That request was not valid: {error}"


def _not_cancellable_zh(error: str) -> str:
    """The store's "order X is 已取消; only orders that are 处理中 or 待付款 can be cancelled"
    in Chinese: its first status word is the order's status (status words are Chinese already)."""
    found = [(error.find(status), status) for status in STATUS_EN if status in error]
    allowed = "或".join(sorted(CANCELLABLE))
    tail = f"只有{allowed}的订单可以取消。"
    return f"订单状态是{min(found)[1]}，{tail}" if found else tail


def is_chinese(text: str) -> bool:
    # A comparison, not a regex: compiling a class of 21,000 characters costs ~5 ms at startup.
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)  # CJK Unified Ideographs


def _reason(question: str) -> str:
    found = REASON.search(question) or TRAILING_REASON.search(question)
    if found:
        reason = " ".join(found.group(1).split()).strip(" 。.!！")[:200]
        if reason:
            return reason
    return "用户要求取消" if is_chinese(question) else "requested by the customer"


def _ran(output: FunctionCallOutput) -> bool:
    """False for a call the engine never ran (a limit stopped the run first): when the run
    continues, the planner asks for it again instead of answering from its absence."""
    try:
        return json.loads(output.output).get("code") != "not_executed"
    except (ValueError, AttributeError):
        return True


def _last_user_index(items: Sequence[Item]) -> int | None:
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if isinstance(item, Message) and item.role == "user":
            return index
    return None


def _unique(values) -> list[str]:
    return list(dict.fromkeys(values))
