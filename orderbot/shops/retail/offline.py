"""The retail shop's offline model (tau2's tools): the common questions, with no key and no
network, in the language of the question.

    where is my order #W…, its tracking     get_order_details
    my orders                               get_user_details, then each order's details
    a product's available variants          list_all_product_types (or a product id), get_product_details
    cancel #W… with a stated reason          cancel_pending_order (a person approves it)
    return items of a delivered #W…          return_delivered_order_items, to the payment method
                                             named, or the order's own
    exchange, or change items of a pending   exchange_delivered_order_items or
    #W…, for a named variant                 modify_pending_order_items (the variant named by its
                                             options or item id; asked for when not named)
    pay #W… with another payment method      modify_pending_order_payment
    change my address (of #W…) to …          modify_user_address (modify_pending_order_address)
    a person (about #W…)                     transfer_to_human_agents

Every write goes through the same approval as any model's. What is missing (the order, the
items, the new variant, the payment method, the address) is asked for in one plain
question; a request it cannot serve is said so, naming a provider that can. Its sentences
come from the catalogue (`offline.*`), in the language of the question.

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
from orderbot.shops.retail.actions import REASONS as CANCEL_REASONS
from orderbot.shops.retail.offline_words import WORDS

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
TRANSFER = re.compile(r"人工|真人|转接|\bhuman\b|\b(?:real|live) (?:person|agent)\b|\brepresentative\b", re.I)
ADDRESS = re.compile(r"地址|\baddress\b", re.I)
PAYMENT = re.compile(r"支付方式|付款方式|改用|\bpayment method\b|\bpay\b.*\b(?:with|by)\b", re.I)
RETURN = re.compile(r"退货|退回|\breturn", re.I)
EXCHANGE = re.compile(r"换货|换成|换一|换个|调换|改成|改为|\bexchange|\bswap|\bchange\b|\bmodify\b|\bswitch\b", re.I)
# A question about an order's whereabouts or contents: the only thing an order id alone asks.
STATUS = re.compile(
    r"到哪|在哪|状态|发货|物流|送达|到了|进度|详情|什么时候|\bwhere\b|\bstatus\b|\bship|\btrack|\bdeliver|\barriv|"
    r"查询|查一下|看看|\bdetails?\b|\bitems?\b|\bwhat\b|\bcheck\b|\bshow\b|\blook up\b",
    re.I,
)
FILLER = re.compile(r"我的|订单|请|\b(?:my|the|order|please)\b", re.I)
METHOD_ID = re.compile(r"\b(?:gift_card|paypal|credit_card)_\d+\b")
METHOD_KINDS = (
    ("gift_card", re.compile(r"礼品卡|gift ?card", re.I)),
    ("paypal", re.compile(r"paypal", re.I)),
    ("credit_card", re.compile(r"信用卡|credit ?card|\bvisa\b|mastercard", re.I)),
)
ZIP = re.compile(r"\d{5}")
# The products as a Chinese question names them (the shop's names are English).
NAMES_ZH = {
    "运动相机": "Action Camera", "空气净化器": "Air Purifier", "背包": "Backpack", "自行车": "Bicycle",
    "蓝牙音箱": "Bluetooth Speaker", "书架": "Bookshelf", "咖啡机": "Coffee Maker", "骑行头盔": "Cycling Helmet",
    "台灯": "Desk Lamp", "数码相机": "Digital Camera", "哑铃": "Dumbbell Set", "电子阅读器": "E-Reader",
    "电热水壶": "Electric Kettle", "电动牙刷": "Electric Toothbrush", "意式咖啡机": "Espresso Machine",
    "浓缩咖啡机": "Espresso Machine", "抓绒夹克": "Fleece Jacket", "游戏鼠标": "Gaming Mouse", "鼠标": "Gaming Mouse",
    "水管": "Garden Hose", "烤架": "Grill", "耳机": "Headphones", "登山靴": "Hiking Boots", "徒步靴": "Hiking Boots",
    "监控摄像头": "Indoor Security Camera", "拼图": "Jigsaw Puzzle", "灯泡": "LED Light Bulb", "笔记本电脑": "Laptop",
    "行李箱": "Luggage Set", "化妆": "Makeup Kit", "机械键盘": "Mechanical Keyboard", "笔记本": "Notebook",
    "办公椅": "Office Chair", "遮阳伞": "Patio Umbrella", "香水": "Perfume", "宠物床": "Pet Bed",
    "充电宝": "Portable Charger", "跑鞋": "Running Shoes", "滑板": "Skateboard", "温控器": "Smart Thermostat",
    "智能手表": "Smart Watch", "手机": "Smartphone", "运动鞋": "Sneakers", "太阳镜": "Sunglasses", "墨镜": "Sunglasses",
    "T恤": "T-Shirt", "平板": "Tablet", "茶壶": "Tea Kettle", "吸尘器": "Vacuum Cleaner", "挂钟": "Wall Clock",
    "水杯": "Water Bottle", "水瓶": "Water Bottle", "无线耳机": "Wireless Earbuds", "腕表": "Wristwatch",
    "瑜伽垫": "Yoga Mat",
}  # fmt: skip
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
    if TRANSFER.search(question):
        return _transfer(question, order_id)
    if ADDRESS.search(question):
        return _address(question, order_id, done, words)
    if CANCEL.search(question) and order_id:
        return _cancel(question, order_id, done, words)
    if PAYMENT.search(question) or RETURN.search(question) or EXCHANGE.search(question):
        return _change(question, order_id, done, words) if order_id else words.say("offline.which_order")
    if MY_ORDERS.search(question) and not order_id:
        return _my_orders(done, words)
    if VARIANTS.search(question) and not order_id:
        return _variants(question, done, words)
    if order_id:
        found = _find(done, "get_order_details", order_id=order_id)
        if found is None:
            return ("get_order_details", {"order_id": order_id})
        if not found.ok:
            return words.failure(found, order_id)
        return words.order(found.data) if _asks_status(question) else words.say("offline.cannot")
    return words.what_do_you_need()


def _asks_status(question: str) -> bool:
    """Where an order is, what it holds, or nothing but its id ("#W5866402", "my order W…")."""
    rest = FILLER.sub(" ", ORDER_ID.sub(" ", question))
    return bool(STATUS.search(question)) or not re.sub(r"[\W_]+", "", rest)


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


def _transfer(question: str, order_id: str | None) -> tuple[str, dict]:
    # Handed over at once, as a model following the policy does: the person who takes over
    # asks what is missing. The summary is for them, in the shop's language; the question is
    # the customer's own.
    about = f" about order {order_id}" if order_id else ""
    return (
        "transfer_to_human_agents",
        {"summary": f"The customer asks for a person{about}: {question.strip()[:1500]}"},
    )


def _address(question: str, order_id: str | None, done: list[Done], words: Words) -> tuple[str, dict] | str:
    address = _parse_address(question)
    if address is None:
        return words.say("offline.which_address")
    name, args = (
        ("modify_pending_order_address", {"order_id": order_id, **address})
        if order_id
        else ("modify_user_address", address)
    )
    found = _find(done, name)
    if found is None:
        return (name, args)
    if not found.ok:
        return words.failure(found, order_id)
    shown = words.address(address)
    if order_id:
        return words.say("offline.order_address", order_id=order_id, address=shown)
    return words.say("offline.user_address", address=shown)


def _parse_address(question: str) -> dict | None:
    """`… to 123 Main St, Apt 1, Springfield, IL, USA, 62701`: the parts after the last "to"
    (or 改成, 改为, 为, a colon), six of them, or five without the apartment, or four without
    the country (USA); the zip code is five digits."""
    found = re.search(r"(?:\bto\b|改成|改为|换成|为|[:：])\s*(.+)$", question, re.I | re.S)
    if found is None:
        return None
    parts = [p.strip() for p in re.split(r"[,，、]", found.group(1).strip().rstrip(".。"))]
    parts = [p for p in parts if p]
    if not parts or not ZIP.fullmatch(parts[-1]):
        return None
    if len(parts) == 4:
        a1, city, state, zip_code = parts
        a2, country = "", "USA"
    elif len(parts) == 5:
        a1, city, state, country, zip_code = parts
        a2 = ""
    elif len(parts) == 6:
        a1, a2, city, state, country, zip_code = parts
        a2 = "" if a2.lower() in ("none", "无", "没有", "-") else a2
    else:
        return None
    return {"address1": a1, "address2": a2, "city": city, "state": state, "country": country, "zip": zip_code}


def _change(question: str, order_id: str, done: list[Done], words: Words) -> tuple[str, dict] | str:
    """A return, an exchange, a change of items or of the payment of one order."""
    found = _find(done, "get_order_details", order_id=order_id)
    if found is None:
        return ("get_order_details", {"order_id": order_id})
    if not found.ok:
        return words.failure(found, order_id)
    order = found.data if isinstance(found.data, dict) else {}
    status = str(order.get("status"))
    wants_return = bool(RETURN.search(question)) and not EXCHANGE.search(question)
    if PAYMENT.search(question) and not RETURN.search(question) and status == "pending":
        return _new_payment(question, order_id, order, done, words)
    if wants_return and status != "delivered":
        return words.say("offline.not_delivered", order_id=order_id, status=words.status(status))
    if status not in ("delivered", "pending"):
        return words.say("offline.not_changeable", order_id=order_id, status=words.status(status))
    items = [i for i in order.get("items") or [] if isinstance(i, dict)]
    chosen = _items_named(question, items)
    if not chosen:
        names = (words.sep).join(dict.fromkeys(str(i.get("name")) for i in items))
        return words.say("offline.which_items", order_id=order_id, items=names)
    method = _method(question, done, words, default=_paid_with(order))
    if not isinstance(method, str) or isinstance(method, Said):
        return method or words.say("offline.which_method", methods="gift_card_…, paypal_…, credit_card_…")
    if wants_return:
        return _write(
            done,
            "return_delivered_order_items",
            words,
            order_id,
            {"order_id": order_id, "item_ids": [i["item_id"] for i in chosen], "payment_method_id": method},
            lambda data: words.say(
                "offline.returned",
                order_id=order_id,
                method=method,
                items=words.sep.join(str(i.get("name")) for i in chosen),
            ),
        )
    return _swap(question, order_id, status, chosen, method, done, words)


def _swap(
    question: str, order_id: str, status: str, chosen: list[dict], method: str, done: list[Done], words: Words
) -> tuple[str, dict] | str:
    """The exchange (delivered) or change (pending) of one item for a variant of its product."""
    old = chosen[0]
    product = _find(done, "get_product_details", product_id=old.get("product_id"))
    if product is None:
        return ("get_product_details", {"product_id": old.get("product_id")})
    if not product.ok:
        return words.failure(product)
    data = product.data if isinstance(product.data, dict) else {}
    variants = [v for v in (data.get("variants") or {}).values() if isinstance(v, dict)]
    others = [v for v in variants if v.get("available") and v.get("item_id") != old.get("item_id")]
    name = str(data.get("name", old.get("name")))
    if not others:
        return words.say("offline.no_other_variant", name=name)
    listed = words.sep.join(words.variant(v) for v in others)
    new = _variant_named(question, old, variants, others)
    if new is None:
        return words.say("offline.which_variant", name=name, variants=listed)
    if new is False:
        return words.say("offline.no_variant", name=name, variants=listed)
    tool = "exchange_delivered_order_items" if status == "delivered" else "modify_pending_order_items"
    args = {
        "order_id": order_id,
        "item_ids": [old["item_id"]],
        "new_item_ids": [new["item_id"]],
        "payment_method_id": method,
    }
    swaps = f"{name} ({words.options(old.get('options'))} → {words.options(new.get('options'))})"
    key = "offline.exchanged" if status == "delivered" else "offline.modified"
    return _write(
        done, tool, words, order_id, args, lambda data: words.say(key, order_id=order_id, swaps=swaps, method=method)
    )


def _variant_named(question: str, old: dict, variants: list[dict], others: list[dict]) -> dict | bool | None:
    """The variant the question names: by its item id, or by option values the old item lacks
    (the one keeping most of the old item's options). None when it names none, False when no
    available variant has them."""
    ids = {v.get("item_id"): v for v in variants}
    for number in PRODUCT_ID.findall(question):
        if number in ids and number != old.get("item_id"):
            return ids[number] if ids[number] in others else False
    kept = {str(v).lower() for v in (old.get("options") or {}).values()}
    values = {str(value).lower() for v in variants for value in (v.get("options") or {}).values()} - kept
    low = question.lower()
    named = {v for v in values if re.search(rf"(?<![\w.]){re.escape(v)}(?![\w.])", low)}
    if not named:
        return None
    fits = [v for v in others if named <= {str(x).lower() for x in (v.get("options") or {}).values()}]
    if not fits:
        return False
    return max(fits, key=lambda v: len(kept & {str(x).lower() for x in (v.get("options") or {}).values()}))


def _new_payment(question: str, order_id: str, order: dict, done: list[Done], words: Words) -> tuple[str, dict] | str:
    method = _method(question, done, words, default=None)
    if method is None:
        if _find(done, "get_user_details") is None:
            return ("get_user_details", {})
        return words.say("offline.which_method", methods=words.sep.join(_methods(done)))
    if not isinstance(method, str) or isinstance(method, Said):
        return method
    return _write(
        done,
        "modify_pending_order_payment",
        words,
        order_id,
        {"order_id": order_id, "payment_method_id": method},
        lambda data: words.say("offline.payment_changed", order_id=order_id, method=method),
    )


def _write(done: list[Done], tool: str, words: Words, order_id: str, args: dict, said) -> tuple[str, dict] | str:
    found = _find(done, tool, order_id=order_id)
    if found is None:
        return (tool, args)
    return said(found.data) if found.ok else words.failure(found, order_id)


def _items_named(question: str, items: list[dict]) -> list[dict]:
    """The order's items the question names (English or Chinese); the only one when it has one."""
    flat = re.sub(r"[^a-z0-9]", "", question.lower())
    named = {en for zh, en in NAMES_ZH.items() if zh.lower() in question.lower()}
    chosen = [
        i
        for i in items
        if str(i.get("name")) in named
        or (key := re.sub(r"[^a-z0-9]", "", str(i.get("name")).lower()))
        and (key in flat or key.rstrip("s") in flat)
    ]
    return chosen or (items if len(items) == 1 else [])


def _paid_with(order: dict) -> str | None:
    history = [p for p in order.get("payment_history") or [] if isinstance(p, dict)]
    return str(history[0].get("payment_method_id")) if history else None


def _methods(done: list[Done]) -> list[str]:
    profile = _find(done, "get_user_details")
    methods = (profile.data or {}).get("payment_methods") if profile is not None and profile.ok else None
    return [str(m) for m in methods] if isinstance(methods, dict) else []


def _method(question: str, done: list[Done], words: Words, default: str | None) -> tuple[str, dict] | str | None:
    """The payment method the question names (by id, or by kind among the customer's own),
    else `default`; a call to make first, or a question back (Said) when the kind fits several."""
    named = METHOD_ID.search(question)
    if named:
        return named.group(0)
    kind = next((k for k, pattern in METHOD_KINDS if pattern.search(question)), None)
    if kind is None:
        return default
    if _find(done, "get_user_details") is None:
        return ("get_user_details", {})
    mine = [m for m in _methods(done) if m.startswith(kind)]
    if len(mine) == 1:
        return mine[0]
    return Said(words.say("offline.which_method", methods=words.sep.join(_methods(done))))


class Said(str):
    """A sentence for the customer where a value was looked for (a question back)."""


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
    """The answers, in the language of the question (offline_words.WORDS)."""

    def __init__(self, zh: bool) -> None:
        self.zh = zh
        self.lang = "zh" if zh else "en"
        self.sep = "、" if zh else ", "

    def say(self, message_id: str, /, **params: object) -> str:
        return WORDS[message_id][self.lang].format(**params)

    def options(self, options: object) -> str:
        pairs = options.items() if isinstance(options, dict) else ()
        return ", ".join(f"{k} {v}" for k, v in pairs)

    def variant(self, variant: dict) -> str:
        shown = f"{self.options(variant.get('options'))} ${variant.get('price')}"
        return self.say("offline.with_id", text=shown, id=variant.get("item_id"))

    def address(self, address: dict) -> str:
        parts = ("address1", "address2", "city", "state", "country", "zip")
        return ", ".join(str(address[k]) for k in parts if address.get(k))

    def status(self, status: object) -> str:
        text = str(status)
        return STATUS_ZH.get(text, text) if self.zh else text

    def order(self, data: object) -> str:
        data = data if isinstance(data, dict) else {}
        order_id, status = data.get("order_id", "?"), self.status(data.get("status"))
        names = {i.get("item_id"): i.get("name") for i in data.get("items") or [] if isinstance(i, dict)}
        goods = self.sep.join(str(n) for n in names.values())
        shipments = []
        for fulfilment in data.get("fulfillments") or []:
            if not isinstance(fulfilment, dict):
                continue
            tracking = ", ".join(str(t) for t in fulfilment.get("tracking_id") or [])
            what = self.sep.join(str(names.get(i, i)) for i in fulfilment.get("item_ids") or [])
            shipments.append(self.say("offline.with_id", text=tracking, id=what))
        text = self.say("offline.order", order_id=order_id, status=status, items=goods)
        if not shipments:
            return text + self.say("offline.no_tracking")
        return text + self.say("offline.tracking", shipments=("；" if self.zh else "; ").join(shipments))

    def orders(self, statuses: dict[str, object], total: int) -> str:
        if not statuses:
            return self.say("offline.no_orders")
        rows = [self.say("offline.order_row", order_id=oid, status=self.status(s)) for oid, s in statuses.items()]
        tail = ""
        if total > len(statuses):
            tail = "\n" + self.say("offline.orders_first", count=len(statuses))
        return self.say("offline.orders", count=total) + "\n" + "\n".join(rows) + tail

    def variants(self, data: object) -> str:
        data = data if isinstance(data, dict) else {}
        name = data.get("name", "?")
        rows = []
        for variant in (data.get("variants") or {}).values():
            if not isinstance(variant, dict) or not variant.get("available"):
                continue
            options = ", ".join(f"{k} {v}" for k, v in (variant.get("options") or {}).items())
            rows.append(
                self.say(
                    "offline.variant_row", options=options, price=variant.get("price"), item_id=variant.get("item_id")
                )
            )
        if not rows:
            return self.say("offline.no_variants", name=name)
        return self.say("offline.variants", name=name, count=len(rows)) + "\n" + "\n".join(rows)

    def cancelled(self, data: object) -> str:
        data = data if isinstance(data, dict) else {}
        history = [p for p in data.get("payment_history") or [] if isinstance(p, dict)]
        refunds = [p for p in history if p.get("transaction_type") == "refund"]
        gift = any(str(p.get("payment_method_id", "")).startswith("gift_card") for p in refunds)
        key = "offline.cancelled_gift_card" if gift else "offline.cancelled"
        return self.say(key, order_id=data.get("order_id", "?"), reason=data.get("cancel_reason"))

    def which_reason(self, order_id: str) -> str:
        return self.say("offline.which_reason", order_id=order_id, needed=CANCEL_REASONS[0], mistake=CANCEL_REASONS[1])

    def which_product(self, types: object) -> str:
        names = ", ".join(sorted(str(n) for n in types)) if isinstance(types, dict) else ""
        return self.say("offline.which_product", names=names)

    def sign_in(self) -> str:
        return self.say("offline.sign_in")

    def what_do_you_need(self) -> str:
        return self.say("offline.what_do_you_need")

    def failure(self, call: Done, order_id: str | None = None) -> str:
        target = order_id or str(call.args.get("order_id") or call.args.get("product_id") or "")
        if f"offline.failure.{call.code}" in WORDS:
            needed, mistake = CANCEL_REASONS  # the words a reason must be, in every language
            return self.say(f"offline.failure.{call.code}", target=target, needed=needed, mistake=mistake)
        # The refusal's own sentence (orderbot's, English): shown as it is, quoted.
        return self.say("offline.failure", error=call.result.get("error", ""))
