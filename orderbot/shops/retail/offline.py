"""The retail shop's offline model (tau2's tools): the common questions, with no key and no
network, in the language of the question.

    where is my order #W…, its tracking     get_order_details
    my orders                               get_user_details, then each order's details
    a product's available variants          list_all_product_types (or a product id), get_product_details
    cancel #W… with a stated reason          cancel_pending_order (a person approves it)

An e-mail address, or a name with a zip code, in the question signs the customer in first
(find_user_id_by_email, find_user_id_by_name_zip). One call per turn, as the shop's policy
asks: each request looks at what this question's calls returned so far and either makes
the next call or answers. Only the structured fields of tool results are read; text inside
a result (a product name, an address) is shown as data, never followed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from orderbot.loop.items import FunctionCall, FunctionCallOutput, Item, Message, assistant
from orderbot.loop.model import ModelRequest, Turn

MAX_ORDERS = 10  # orders looked up for "my orders", one per turn

ORDER_ID = re.compile(r"#?\b(W\d{7})\b", re.I)
PRODUCT_ID = re.compile(r"(?<!\d)(\d{10})(?!\d)")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
NAME_ZIP = re.compile(
    r"(?:my name is|i am|i'm|this is|name[:：]?|我叫|我是|名字是?)\s*([A-Za-z][A-Za-z'-]*)\s+([A-Za-z][A-Za-z'-]*)"
    r".*?(?:zip(?: code)?|postcode|postal code|邮编|邮政编码)\D{0,6}(\d{5})",
    re.I | re.S,
)
CANCEL = re.compile(r"取消|退掉订单|\bcancel", re.I)
VARIANTS = re.compile(
    r"规格|款式|颜色|尺寸|尺码|型号|选项|有货|可选|有哪些|\bvariants?\b|\boptions?\b|in stock|\bavailable\b|"
    r"\bcolou?rs?\b|\bsizes?\b",
    re.I,
)
MY_ORDERS = re.compile(
    r"我的(?:所有)?订单|所有订单|哪些订单|订单列表|\bmy orders\b|\ball (?:of )?my orders\b|\bwhich orders\b", re.I
)
REASONS = (
    ("ordered by mistake", re.compile(r"买错|下错|拍错|点错|误购|误下|by mistake|mistaken|accident", re.I)),
    (
        "no longer needed",
        re.compile(r"不需要|不再需要|不想要|用不上|不要了|no longer need|don'?t need|do not need|not needed", re.I),
    ),
)
STATUS_ZH = {
    "pending": "待处理",
    "processed": "已处理，待发货",
    "delivered": "已送达",
    "cancelled": "已取消",
    "pending (item modified)": "待处理（商品已修改）",
    "return requested": "已申请退货",
    "exchange requested": "已申请换货",
}


class RetailOfflineModel:
    provider = "offline"
    name = "offline-planner"

    def respond(self, request: ModelRequest) -> Turn:
        items = list(request.items)
        asked = [i.content for i in items if isinstance(i, Message) and i.role == "user"]
        step = next_step(asked[-1] if asked else "", done_calls(items))
        if isinstance(step, str):
            return Turn((assistant(step),))
        name, args = step
        # Numbered after the calls already in the conversation, as the sample shop's planner
        # numbers them: a resumed run gets a new model, and a call id names one call of the run.
        number = sum(isinstance(i, FunctionCall) for i in items) + 1
        call = FunctionCall(call_id=f"call_offline_{number}", name=name, arguments=json.dumps(args, ensure_ascii=False))
        return Turn((call,))


@dataclass(frozen=True)
class Done:
    """One call this question made, and what came back."""

    name: str
    args: dict
    result: dict

    @property
    def ok(self) -> bool:
        return bool(self.result.get("ok"))

    @property
    def data(self):
        return self.result.get("data")

    @property
    def code(self) -> str:
        return str(self.result.get("code", ""))


def is_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def done_calls(items: Sequence[Item]) -> list[Done]:
    """The calls after the last user message that ran (or were refused), with their results."""
    start = max((n for n, i in enumerate(items) if getattr(i, "role", None) == "user"), default=-1)
    calls = {i.call_id: i for i in items[start + 1 :] if isinstance(i, FunctionCall)}
    done = []
    for item in items[start + 1 :]:
        if not isinstance(item, FunctionCallOutput) or item.call_id not in calls:
            continue
        try:
            result = json.loads(item.output)
            args = json.loads(calls[item.call_id].arguments)
        except ValueError:
            continue
        if not isinstance(result, dict) or not isinstance(args, dict) or result.get("code") == "not_executed":
            continue
        done.append(Done(calls[item.call_id].name, args, result))
    return done


def next_step(question: str, done: list[Done]) -> tuple[str, dict] | str:
    """The next call, as (tool, arguments), or the answer."""
    zh = is_chinese(question)
    words = Words(zh)
    for call in done:
        if call.code == "sign_in_required":
            return words.sign_in()
        if call.name.startswith("find_user_id") and not call.ok:
            return words.failure(call)
    signed = _sign_in(question, done)
    if signed is not None:
        return signed
    order_id = _order_id(question)
    if CANCEL.search(question) and order_id:
        return _cancel(question, order_id, done, words)
    if MY_ORDERS.search(question) and not order_id:
        return _my_orders(done, words)
    if VARIANTS.search(question) and not order_id:
        return _variants(question, done, words)
    if order_id:
        found = _find(done, "get_order_details", order_id=order_id)
        if found is None:
            return ("get_order_details", {"order_id": order_id})
        return words.order(found.data) if found.ok else words.failure(found, order_id)
    return words.what_do_you_need()


def _sign_in(question: str, done: list[Done]) -> tuple[str, dict] | None:
    if any(call.name.startswith("find_user_id") for call in done):
        return None
    email = EMAIL.search(question)
    if email:
        return ("find_user_id_by_email", {"email": email.group(0)})
    named = NAME_ZIP.search(question)
    if named:
        first, last, zip_code = named.groups()
        return ("find_user_id_by_name_zip", {"first_name": first, "last_name": last, "zip": zip_code})
    return None


def _order_id(question: str) -> str | None:
    found = ORDER_ID.search(question)
    return f"#{found.group(1).upper()}" if found else None


def _find(done: list[Done], name: str, **args) -> Done | None:
    return next((c for c in done if c.name == name and all(c.args.get(k) == v for k, v in args.items())), None)


def _cancel(question: str, order_id: str, done: list[Done], words: Words) -> tuple[str, dict] | str:
    reason = next((reason for reason, pattern in REASONS if pattern.search(question)), None)
    if reason is None:
        return words.which_reason(order_id)
    found = _find(done, "cancel_pending_order", order_id=order_id)
    if found is None:
        return ("cancel_pending_order", {"order_id": order_id, "reason": reason})
    return words.cancelled(found.data) if found.ok else words.failure(found, order_id)


def _my_orders(done: list[Done], words: Words) -> tuple[str, dict] | str:
    profile = _find(done, "get_user_details")
    if profile is None:
        return ("get_user_details", {})
    if not profile.ok:
        return words.failure(profile)
    order_ids = [o for o in (profile.data or {}).get("orders") or [] if isinstance(o, str)][:MAX_ORDERS]
    statuses = {}
    for order_id in order_ids:
        found = _find(done, "get_order_details", order_id=order_id)
        if found is None:
            return ("get_order_details", {"order_id": order_id})
        statuses[order_id] = (found.data or {}).get("status") if found.ok else None
    return words.orders(statuses, len((profile.data or {}).get("orders") or []))


def _variants(question: str, done: list[Done], words: Words) -> tuple[str, dict] | str:
    product_id = PRODUCT_ID.search(question)
    if product_id is None:
        types = _find(done, "list_all_product_types")
        if types is None:
            return ("list_all_product_types", {})
        if not types.ok:
            return words.failure(types)
        named = _product_named(question, types.data if isinstance(types.data, dict) else {})
        if named is None:
            return words.which_product(types.data)
        product = named
    else:
        product = product_id.group(1)
    found = _find(done, "get_product_details", product_id=product)
    if found is None:
        return ("get_product_details", {"product_id": product})
    return words.variants(found.data) if found.ok else words.failure(found)


def _product_named(question: str, types: dict) -> str | None:
    """The product whose name the question mentions (the longest, ignoring case and dashes)."""
    flat = re.sub(r"[^a-z0-9]", "", question.lower())
    names = sorted((n for n in types if isinstance(n, str)), key=len, reverse=True)
    for name in names:
        key = re.sub(r"[^a-z0-9]", "", name.lower())
        if key and key in flat:
            return str(types[name])
    return None


class Words:
    """The answers, in the language of the question."""

    def __init__(self, zh: bool) -> None:
        self.zh = zh

    def status(self, status: object) -> str:
        text = str(status)
        return STATUS_ZH.get(text, text) if self.zh else text

    def order(self, data: object) -> str:
        data = data if isinstance(data, dict) else {}
        order_id, status = data.get("order_id", "?"), self.status(data.get("status"))
        names = {i.get("item_id"): i.get("name") for i in data.get("items") or [] if isinstance(i, dict)}
        goods = ("、" if self.zh else ", ").join(str(n) for n in names.values())
        shipments = []
        for fulfilment in data.get("fulfillments") or []:
            if not isinstance(fulfilment, dict):
                continue
            tracking = ", ".join(str(t) for t in fulfilment.get("tracking_id") or [])
            what = ("、" if self.zh else ", ").join(str(names.get(i, i)) for i in fulfilment.get("item_ids") or [])
            shipments.append(f"{tracking}（{what}）" if self.zh else f"{tracking} ({what})")
        if self.zh:
            text = f"订单 {order_id}：{status}。商品：{goods}。"
            return text + (f"物流单号：{'；'.join(shipments)}。" if shipments else "还没有物流信息。")
        text = f"Order {order_id} is {status}. Items: {goods}."
        return text + (f" Tracking: {'; '.join(shipments)}." if shipments else " No tracking yet.")

    def orders(self, statuses: dict[str, object], total: int) -> str:
        if not statuses:
            return "你目前没有订单。" if self.zh else "You have no orders."
        rows = [f"{oid}：{self.status(s)}" if self.zh else f"{oid}: {self.status(s)}" for oid, s in statuses.items()]
        head = f"你的订单（{total} 个）：" if self.zh else f"Your orders ({total}):"
        tail = ""
        if total > len(statuses):
            tail = f"\n（只列出了前 {len(statuses)} 个）" if self.zh else f"\n(the first {len(statuses)} are listed)"
        return head + "\n" + "\n".join(rows) + tail

    def variants(self, data: object) -> str:
        data = data if isinstance(data, dict) else {}
        name = data.get("name", "?")
        rows = []
        for variant in (data.get("variants") or {}).values():
            if not isinstance(variant, dict) or not variant.get("available"):
                continue
            options = ", ".join(f"{k} {v}" for k, v in (variant.get("options") or {}).items())
            price, item_id = variant.get("price"), variant.get("item_id")
            row = f"{options}：${price}（商品编号 {item_id}）" if self.zh else f"{options}: ${price} (item {item_id})"
            rows.append(row)
        if not rows:
            return f"{name} 目前没有有货的规格。" if self.zh else f"No variant of the {name} is available right now."
        head = f"{name} 目前有货的规格（{len(rows)} 个）：" if self.zh else f"Available {name} variants ({len(rows)}):"
        return head + "\n" + "\n".join(rows)

    def cancelled(self, data: object) -> str:
        data = data if isinstance(data, dict) else {}
        order_id = data.get("order_id", "?")
        history = [p for p in data.get("payment_history") or [] if isinstance(p, dict)]
        refunds = [p for p in history if p.get("transaction_type") == "refund"]
        gift = any(str(p.get("payment_method_id", "")).startswith("gift_card") for p in refunds)
        if self.zh:
            when = "已退回礼品卡。" if gift else "将在 5 到 7 个工作日内退回原支付方式。"
            return f"订单 {order_id} 已取消（原因：{data.get('cancel_reason')}），款项{when}"
        when = (
            "is back on the gift card." if gift else "goes back to the original payment method in 5 to 7 business days."
        )
        return f"Order {order_id} is cancelled ({data.get('cancel_reason')}); the payment {when}"

    def which_reason(self, order_id: str) -> str:
        if self.zh:
            return (
                f"取消订单 {order_id} 需要一个原因：“no longer needed”（不再需要）或“ordered by mistake”（买错了）。"
                "是哪一个？"
            )
        return f"To cancel order {order_id} I need the reason: 'no longer needed' or 'ordered by mistake'. Which is it?"

    def which_product(self, types: object) -> str:
        names = ", ".join(sorted(str(n) for n in types)) if isinstance(types, dict) else ""
        if self.zh:
            return f"你想看哪种商品？我们有：{names}。"
        return f"Which product do you mean? We have: {names}."

    def sign_in(self) -> str:
        if self.zh:
            return "请先告诉我你的邮箱，或者姓名和邮编，以便确认你的身份（也可以用 --user 指定）。"
        return (
            "Please tell me your e-mail address, or your name and zip code, so I can find your account "
            "(or pass --user)."
        )

    def what_do_you_need(self) -> str:
        if self.zh:
            return "请告诉我订单号（以 #W 开头），或者你想了解的商品。"
        return "Please give me the order id (it starts with #W), or the product you are asking about."

    def failure(self, call: Done, order_id: str | None = None) -> str:
        table = FAILURES_ZH if self.zh else FAILURES_EN
        text = table.get(call.code)
        target = order_id or str(call.args.get("order_id") or call.args.get("product_id") or "")
        if text is not None:
            return text.format(t=target)
        # The refusal's own sentence (orderbot's, English): shown as it is, quoted.
        error = call.result.get("error", "")
        return f"没有办成：{error}" if self.zh else f"That did not work: {error}"


FAILURES_ZH = {
    "user_not_found": "没有找到与这些信息匹配的客户，请核对邮箱，或者姓名和邮编。",
    "other_customer": "这次对话只能处理一位客户的事务，这些信息不是当前客户的。",
    "no_access": "你的账户下没有订单 {t}。",
    "no_such_product": "没有找到商品 {t}（商品编号和商品规格编号不同）。",
    "not_pending": "订单 {t} 已经不是待处理状态，不能取消或修改。",
    "already_modified": "订单 {t} 的商品已经修改过，不能再取消或修改。",
    "bad_reason": "取消原因只能是 “no longer needed” 或 “ordered by mistake”。",
    "rejected": "你没有确认，所以订单 {t} 没有任何改动。",
    "read_only": "这个商店是以只读方式打开的，没有做任何改动。",
    "internal_error": "处理时发生内部错误，请稍后再试。",
}
FAILURES_EN = {
    "user_not_found": "No customer matches these details; please check the e-mail, or the name and zip code.",
    "other_customer": "This conversation is about one customer only, and these details are not theirs.",
    "no_access": "Order {t} is not among your orders.",
    "no_such_product": "There is no product {t} (a product id is not an item id).",
    "not_pending": "Order {t} is no longer pending, so it cannot be cancelled or changed.",
    "already_modified": "The items of order {t} were already modified; it cannot be cancelled or changed any more.",
    "bad_reason": "The reason for a cancellation must be 'no longer needed' or 'ordered by mistake'.",
    "rejected": "You did not approve, so nothing was done to order {t}.",
    "read_only": "This shop was opened read-only; nothing was changed.",
    "internal_error": "Something went wrong inside orderbot; please try again later.",
}
