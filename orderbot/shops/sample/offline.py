"""The sample shop's offline model: a deterministic planner that needs no key and no network.

It reads the person's latest message, proposes the matching tool calls in one turn, and
once their results are back writes the answer in the language of the question. It reads
ids as people type them (ORD1001, ord-1001, a bare 1001: order_ids), follow-ups about the
order the conversation last talked about ("and its details?", "它到哪了": plan), and small
talk (a greeting or thanks gets a short reply, no call). It is the sample shop's
(orderbot.shops.sample.shop); the retail shop brings its own (orderbot.shops.retail.offline). It only
ever reads the structured fields of tool results (status, code, ...): text found inside a
result, such as an order note, is never treated as an instruction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from orderbot.loop.items import FunctionCall, FunctionCallOutput, Item, Message, assistant
from orderbot.loop.model import ModelRequest, Turn
from orderbot.shops.sample.model import CANCELLABLE, NOT_FOUND, STATUS_WORDS_EN, format_money

# The patterns are text, compiled by `re` when first used (its cache keeps them): a question
# needs a few of them (a bare number, a reason or small talk each reads others).
# An order id as people type it: ORD-1001, ord-1001, ORD1001 (a digit right after "ORD",
# so "ORDER" is not one). Each is read as the store writes it (canonical_id: ORD-1001).
ORDER_ID = r"(?i)\bORD(?:-[A-Za-z0-9_-]+|[0-9][A-Za-z0-9_-]*)"
# "它" but not "它们" (them: more than one order), "it", "its", "that order", ...
PRONOUN = r"(?i)它(?!们)|这个订单|这单|那个订单|那单|\bits?\b|\b(?:that|this) (?:order|one)\b"
REASON = r"(?i)(?:原因[是为：:]?|因为|reason[:：]?\s*|because\s+)(.+)$"
# "取消订单 ORD-1002，不想要了": words after the id and a comma are the reason.
TRAILING_REASON = r"(?i)(?:\bORD(?:-[A-Za-z0-9_-]+|[0-9][A-Za-z0-9_-]*)|(?<![0-9])[0-9]{4,8})\s*[，,；;：:]\s*(.+)$"

CANCEL = r"(?i)取消|退掉|不要了|\bcancel"
DETAILS = r"(?i)详情|详细|明细|物流|快递|运单|内容|买了什么|\bdetails?\b|\btracking\b|\bshipping\b|\bitems?\b"
# "Where is it?": the status first (anyone may ask it), then the details of an order that
# exists, for its carrier and city (follow_on, _whereabouts); "its details" stays details.
WHERE = r"(?i)到哪|在哪|哪儿|哪里|到了吗|位置|\bwhere\b|\btrack"
NAMED_DETAILS = r"(?i)详情|详细|明细|买了什么|\bdetails?\b|\bitems?\b"
STATUS = r"(?i)状态|进度|怎么样了|\bstatus\b"
INTENTS = (  # first match wins; each needs the tool to be offered
    ("cancel_order", CANCEL),
    ("get_order_details", DETAILS),
)
LIST_INTENT = r"(?i)我的(?:所有)?订单|所有订单|哪些订单|订单列表|\bmy orders\b|\blist\b.*\borders?\b|\ball (?:of )?my\b"
# "Cancel all my orders", "把它们都取消": more than one order, named by none of their ids.
# "都" says so only without a "它" ("取消它吧，都等一周了" is one order).
SEVERAL = r"(?i)所有|全部|它们|这些|\ball\b|\bevery(?:thing)?\b|\beach\b|\bthem\b"

# A bare number as people type an order's (see bare_order_number for the rule).
NUMBER = r"(?<![A-Za-z0-9_/:-])(?<![0-9][.,])[0-9]{4,8}(?![A-Za-z0-9_/:-])(?![.,][0-9])"
ORDER_WORD_BEFORE = r"(?i)(?:订单|单号|编号|\border(?:\s+(?:number|no\.?|id))?|\bORD|\bno\.|#)\s*[:：#]?\s*$"
MONEY_BEFORE = (
    r"(?i)(?:[¥￥$€£]|\b(?:CNY|RMB|USD|EUR)|\b(?:paid|pay|costs?|price|total|spent|refund(?:ed)?)"
    r"|付了?|花了?|价格?|总价|金额|合计|退了?)\s*$"
)
UNIT_AFTER = (
    r"(?i)^\s*(?:元|块|圆|%|％|年|月|日|天|小时|分钟|秒|个|件|只|台|本|次|岁|克|千克|公斤|斤|米|毫升|升|"
    r"(?:g|kg|ml|cm|mm|km|yuan|rmb|cny|usd|eur|dollars?|pcs|pieces?|items?|units?|times?|years?|months?|"
    r"weeks?|days?|hours?|minutes?|seconds?)\b)"
)

STATUS_EN = {status: words[0] for status, words in STATUS_WORDS_EN.items()}


class OfflineModel:
    provider = "offline"
    name = "offline-planner"

    def respond(self, request: ModelRequest) -> Turn:
        items = list(request.items)
        offered = {tool["name"] for tool in request.tools}
        start = _last_user_index(items)
        question = items[start].content if start is not None else ""
        outputs = [i for i in items[(start or 0) + 1 :] if isinstance(i, FunctionCallOutput) and _ran(i)]
        if outputs:
            calls = {i.call_id: i for i in items[(start or 0) + 1 :] if isinstance(i, FunctionCall)}
            more = follow_on(question, outputs, calls, offered)
            if more:
                made = sum(isinstance(i, FunctionCall) for i in items)
                return Turn(tuple(self._call(name, args, made + n) for n, (name, args) in enumerate(more, 1)))
            return Turn((assistant(answer(question, outputs, calls)),))
        planned = plan(question, items[:start] if start else [], offered)
        if not planned:
            return Turn((assistant(reply(question)),))
        made = sum(isinstance(i, FunctionCall) for i in items)
        return Turn(tuple(self._call(name, args, made + n) for n, (name, args) in enumerate(planned, 1)))

    def _call(self, name: str, args: dict, number: int) -> FunctionCall:
        # Numbered after the calls already in the conversation, not by this instance: a
        # resumed run gets a new model, and a call id must name one call of the run.
        return FunctionCall(call_id=f"call_offline_{number}", name=name, arguments=json.dumps(args, ensure_ascii=False))


def plan(question: str, history: Sequence[Item], offered: set[str]) -> list[tuple[str, dict]]:
    """The tool calls a careful assistant would make for this message.

    An order the message does not name is the one the conversation last talked about when
    the message points at it ("它", "its details") or only asks the next thing about it
    ("详细信息呢？", "到哪了", "status?"). A cancellation always names its order, by id or
    by "it": several at once ("cancel all my orders") are never proposed; the orders are
    listed instead and the answer says why nothing was cancelled (_several_refused)."""
    if is_bulk_cancel(question):
        return [("list_my_orders", {})] if "list_my_orders" in offered else []
    ids = order_ids(question)
    if not ids and re.search(PRONOUN, question):
        ids = _last(history)
    if not ids:
        if "list_my_orders" in offered and re.search(LIST_INTENT, question):
            return [("list_my_orders", {})]
        if re.search(DETAILS, question) or re.search(WHERE, question) or re.search(STATUS, question):
            ids = _last(history)
    if not ids:
        return []
    for tool, pattern in INTENTS:
        if tool in offered and re.search(pattern, question):
            if tool == "cancel_order":
                return [(tool, {"order_id": oid, "reason": _reason(question)}) for oid in ids]
            return [(tool, {"order_id": oid}) for oid in ids]
    return [("get_order_status", {"order_id": oid}) for oid in ids]


def follow_on(
    question: str, outputs: Sequence[FunctionCallOutput], calls: dict[str, FunctionCall], offered: set[str]
) -> list[tuple[str, dict]]:
    """The calls a where-question makes once the status is known: the details of each order
    that exists and has not been looked at yet, for its carrier and city. An anonymous session
    gets the status and the sign-in sentence; an unknown order makes no second call."""
    if not asks_where(question) or "get_order_details" not in offered:
        return []
    found, detailed = [], set()
    for name, target, envelope in _results(outputs, calls):
        data = envelope.get("data") if isinstance(envelope.get("data"), dict) else {}
        if name == "get_order_details":
            detailed.add(target)
        elif name == "get_order_status" and envelope.get("ok") and data.get("status") not in (None, NOT_FOUND):
            found.append(target)
    return [("get_order_details", {"order_id": oid}) for oid in _unique(found) if oid not in detailed]


def asks_where(question: str) -> bool:
    return bool(re.search(WHERE, question)) and not re.search(NAMED_DETAILS, question)


def order_ids(text: str) -> list[str]:
    """The orders `text` names, as the store writes their ids: each ORD-id once, in order,
    else the one bare order number it holds (bare_order_number)."""
    ids = _unique(canonical_id(match) for match in re.findall(ORDER_ID, text))
    if ids:
        return ids
    number = bare_order_number(text)
    return [f"ORD-{number}"] if number else []


def canonical_id(typed: str) -> str:
    """`ord-1001` and `ORD1001` as the store writes them: ORD-1001."""
    typed = typed.upper()
    return typed if typed.startswith("ORD-") else f"ORD-{typed[3:]}"


def bare_order_number(text: str) -> str | None:
    """The order number in "1001 的状态" or "order 1001?", when nothing else it could be.

    The rule: a number of 4 to 8 ASCII digits that stands alone (no letter, digit, "-",
    "_", "/" or ":" touching it, no "." or "," joining it to more digits), and is not
    money (a currency sign or a word such as "paid", "付了", "合计" before it), a quantity,
    or a date or time (a unit such as 元, 个, 年, 天, "days", "kg" after it). A number
    from 1900 to 2099 reads as a year unless an order word is right before it ("订单",
    "order", "#", "ORD"). Exactly one number in the message may pass; with two or more
    (or none) it names no order, and the question is asked back."""
    found = []
    for match in re.finditer(NUMBER, text):
        before, after, number = text[: match.start()], text[match.end() :], match.group()
        if re.search(MONEY_BEFORE, before) or re.match(UNIT_AFTER, after):
            continue
        if 1900 <= int(number) <= 2099 and not re.search(ORDER_WORD_BEFORE, before):
            continue
        found.append(number)
    return found[0] if len(found) == 1 else None


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
            found = order_ids(item.content)
            if found:
                return found[-1]
    return None


def _last(history: Sequence[Item]) -> list[str]:
    last = last_order_id(history)
    return [last] if last else []


def is_bulk_cancel(question: str) -> bool:
    """A cancellation of several orders that names none of them: "cancel all my orders"."""
    several = re.search(SEVERAL, question) or ("都" in question and not re.search(PRONOUN, question))
    return bool(several and re.search(CANCEL, question) and not order_ids(question))


# Greetings (and "what can you do?"), thanks and goodbyes, and the words around them that
# change nothing ("thank you so much", "谢谢你啦"): a message of only these gets a short
# reply, not a question back.
SMALL_TALK = (  # the first kind found answers: "好的，谢谢，再见" is thanked
    ("thanks", r"(?i)谢谢|多谢|感谢|谢了|辛苦了|\bthanks?\b|\bthank you\b|\bthx\b|\bcheers\b"),
    ("goodbye", r"(?i)再见|拜拜|回见|\b(?:good)?bye\b|\bsee you\b"),
    (
        "greeting",
        r"(?i)你好|您好|嗨|哈喽|哈啰|早上好|上午好|下午好|晚上好|早安|在吗|在不在|"
        r"你能做什么|你可以做什么|能帮我做什么|\bwhat can you do\b|\bhelp\b|"
        r"\bhello\b|\bhi\b|\bhey\b|\bhiya\b|\bhowdy\b|\bgood (?:morning|afternoon|evening)\b",
    ),
)
FILLER = (
    r"(?i)[\s\W_]+|\b(?:there|orderbot|bot|so|very|much|a lot|you|again|ok(?:ay)?|great|all)\b|"
    r"[啊呀哦哈嘛呢吧啦了的很非常好你您们大家]"
)
SMALL_TALK_REPLIES = {
    "greeting": (
        "你好！我可以帮你查订单的状态、详情和物流，也可以取消订单：告诉我订单号（以 ORD- 开头）就行。",
        "Hello! I can look up an order's status, details and shipping, or cancel an order: "
        "just tell me the order id (it starts with ORD-).",
    ),
    "thanks": ("不客气！还有别的订单要查，随时告诉我。", "You're welcome! Ask me any time about another order."),
    "goodbye": ("再见！", "Goodbye!"),
}


def small_talk(question: str) -> str | None:
    """The kind of small talk ("greeting", "thanks", "goodbye") the message is only, else None."""
    kinds = [kind for kind, pattern in SMALL_TALK if re.search(pattern, question)]
    if not kinds:
        return None
    rest = question
    for _, pattern in SMALL_TALK:
        rest = re.sub(pattern, " ", rest)
    return kinds[0] if not re.sub(FILLER, "", rest) else None


def reply(question: str) -> str:
    """The answer to a message that needs no tool: small talk, several cancellations that
    could not even be listed, or a question without an order to look up."""
    zh = is_chinese(question)
    kind = small_talk(question)
    if kind:
        return SMALL_TALK_REPLIES[kind][0 if zh else 1]
    if is_bulk_cancel(question):
        return _several_refused(zh)
    return ask_for_id(question)


def ask_for_id(question: str) -> str:
    if is_chinese(question):
        return "请提供要查询的订单号（以 ORD- 开头）。"
    return "Which order do you mean? Please give the order id (it starts with ORD-)."


def _several_refused(zh: bool) -> str:
    # Worded so the claim check reads no cancellation in it (orderbot.answers.claims).
    if zh:
        return "我没有取消任何订单：一次只能取消一个订单，每次取消都要写明它的订单号，并由你确认后才会执行。"
    return (
        "I did not cancel anything: orderbot cancels one order at a time, "
        "and each cancellation needs that order's id and your approval."
    )


def answer(question: str, outputs: Sequence[FunctionCallOutput], calls: dict[str, FunctionCall]) -> str:
    zh = is_chinese(question)
    where = asks_where(question)
    results = _results(outputs, calls)
    # A where-question's details say the status too: its status line would say it twice.
    detailed = {target for name, target, envelope in results if name == "get_order_details" and envelope.get("ok")}
    lines = [_several_refused(zh)] if is_bulk_cancel(question) else []
    for name, target, envelope in results:
        if where and name == "get_order_status" and target in detailed:
            continue
        if envelope.get("ok"):
            lines.append(_success(name, target, envelope.get("data"), zh, where))
        else:
            lines.append(_failure(name, target, str(envelope.get("code", "")), str(envelope.get("error", "")), zh))
    # A sentence that names no order (sign in, cannot do that) is said once, however many orders met it.
    return "\n".join(dict.fromkeys(lines))


def _results(outputs: Sequence[FunctionCallOutput], calls: dict[str, FunctionCall]) -> list[tuple[str, str, dict]]:
    """(tool name, order id it asked about, result envelope) of each output, whatever the
    texts hold: a result that is not JSON reads as an internal error."""
    out = []
    for output in outputs:
        call = calls.get(output.call_id)
        try:
            args = json.loads(call.arguments) if call else {}
        except ValueError:
            args = {}
        try:
            envelope = json.loads(output.output)
        except ValueError:
            envelope = None
        if not isinstance(args, dict):
            args = {}
        if not isinstance(envelope, dict):
            envelope = {"ok": False, "code": "internal_error", "error": ""}
        out.append((call.name if call else "", str(args.get("order_id", ""))[:40], envelope))
    return out


def _success(name: str, target: str, data: object, zh: bool, where: bool = False) -> str:
    data = data if isinstance(data, dict) else {}
    oid = str(data.get("order_id", target))
    if name == "get_order_status":
        status = str(data.get("status", ""))
        if status == NOT_FOUND:
            return f"没有找到订单 {oid}。" if zh else f"Order {oid} was not found."
        return (
            f"订单 {oid} 的状态是：{status}。" if zh else f"Order {oid} is {STATUS_EN.get(status, status)} ({status})."
        )
    if name == "get_order_details":
        return _whereabouts(data, zh) if where else _details(data, zh)
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


def _whereabouts(data: dict, zh: bool) -> str:
    """The answer to "where is it?": the status, the carrier and tracking number, and the
    city, as far as the order holds them. The city is where the order ships to (an order
    still being packed has one), not where the parcel is now: no order holds that, so a
    parcel on its way is left to the carrier's own tracking."""
    oid, status = data.get("order_id", ""), str(data.get("status", ""))
    shipping = data.get("shipping") if isinstance(data.get("shipping"), dict) else {}
    carrier, number, city = (shipping.get(key) for key in ("carrier", "tracking_number", "city"))
    on_its_way = status == "已发货" and carrier and number
    if zh:
        parts = [f"订单 {oid} 的状态是：{status}"]
        parts += [f"由{carrier}承运"] if carrier else []
        parts += [f"运单号 {number}"] if number else []
        parts += [] if carrier or number else ["还没有承运信息"]
        parts += [f"收货城市：{city}"] if city else []
        text = "，".join(parts) + "。"
        return text + (f"包裹现在的位置请用运单号向{carrier}查询。" if on_its_way else "")
    text = f"Order {oid} is {STATUS_EN.get(status, status)} ({status})"
    text += f", carried by {carrier}" if carrier else ""
    text += f" (tracking number {number})" if number else ""
    text += "" if carrier or number else "; no carrier has it yet"
    text += f"; destination city: {city}." if city else "."
    return text + (f" For where the parcel is now, ask {carrier} with the tracking number." if on_its_way else "")


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
    "unreadable": "订单 {t} 暂时无法查询：订单数据暂时无法读取。",
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
    "unreadable": "I could not look up order {t}: the orders cannot be read right now.",
    "unknown_tool": "I cannot do that.",
}


def _failure(name: str, target: str, code: str, error: str, zh: bool) -> str:
    table = FAILURES_ZH if zh else FAILURES_EN
    if code == "store_unavailable" and name != "cancel_order":  # a lookup failed: nothing was cancelled
        code = "unreadable"
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
    found = re.search(REASON, question) or re.search(TRAILING_REASON, question)
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
