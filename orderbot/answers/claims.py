"""The claim check: the model's answer read against what the tools returned.

Deterministic string and pattern matching with the store's own vocabulary; no second
model, no rewriting of the answer. Seven kinds of finding, each `{kind, order_id, said,
observed}`:

    unknown_id      the answer names an order id that no tool returned
    nonexistent_id  the answer names an id the tools said does not exist, without saying so
    status          the answer gives an order a status the tools did not return for it
    cancellation    the answer says an order was cancelled, but no cancellation executed
    amount          the answer gives an order an amount its details did not hold and no tool
                    computed (a refund nobody worked out, a wrong total or price)
    items           the answer lists an item the order does not hold ("contains a Laptop")
    date            the answer gives an order a date its details did not hold

How an answer is read: each mention of an order id opens a segment that runs to the next
id or the end of the sentence; its sentence is that segment with the words before the id
("I cancelled ORD-1002"). An id that does not exist passes when its sentence says so. The
status words in a segment (the shop's statuses and their other words: its Vocabulary) are what the
answer says about that order, and so is a status word just before the first id of a
sentence ("已发货的订单 ORD-1001", "the shipped order ORD-1001"); a word right after a
negation ("not", "没有", "未") is not a claim. A segment passes when one of its status
words is the observed status, so "ORD-1001 is 已发货; only 处理中 or 待付款 can be
cancelled" is fine; it fails when it has status words and none of them is what the tools
returned. A negated status is a claim too: "未发货" / "not shipped yet" contradicts an order
that has shipped (NOT_YET), unless the sentence states a rule ("只有…才能", "only …").
An amount (¥199.00, 199 元, $207.75, 207.75 美元) in a segment must be one the order's details
held (a total, a price, a payment, what a return or an exchange moves) or one a tool computed
(a calculation, a balance). Items an answer lists ("contains …", "包含 …") must be among the
order's, when written in the store's script (a translated name is not read), and a date
(2026-11-20, 2026年11月20日) one its details held.

An answer need not name the order. When the run looked at exactly one order, what the
sentences that name no id say (status words, negated statuses, amounts, a cancellation)
is read as said about that order: `未发货。` for an order that is 已发货 is a claim.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Iterable
from enum import StrEnum
from typing import NamedTuple

from orderbot.answers.facts import Fact
from orderbot.loop.state import CallRecord
from orderbot.shops.shop import Vocabulary

# The patterns are text, compiled by `re` when first used (its cache keeps them): a status
# answer needs a few of them, and only an answer about an order's details reads the others.
# ORD-ids as the store writes them, and id-shaped tokens such as "MB-44" a model may invent.
# The retail shop's ids are tau2's: "#W5866402".
ID = (
    r"(?<![A-Za-z0-9_-])(?:(?i:ORD)-[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*|[A-Z]{2,4}-[0-9]{2,}[A-Za-z0-9]*)"
    r"|#[A-Z][0-9]{5,}(?![A-Za-z0-9])"
)
SENTENCE_END = r"[。！？\n]|[.!?](?=\s|$)"
NEGATION = r"(?i)(?:\bnot\b|n't|\bnever|\bno longer|没有|没|未|不是|并非|尚未)\s*(?:\w+\s+){0,2}$"
NOT_FOUND_WORDS = (
    r"(?i)不存在|没有找到|未找到|找不到|查无|没有这个|无此|not found|does ?n[o']t exist|doesn't exist|no such|no order|"
    r"could ?n[o']t find|cannot find|can't find|unknown order|not exist"
)
CANCEL_DONE = (
    r"(?i)已(?:经|为你|为您|帮你|帮您)?取消|取消成功|成功取消|取消了|"
    r"(?:has|have|had|was|were|is|are|been|now|successfully|I've|I have|I)\s+(?:been\s+)?cancell?ed"
)


# Negated milestones: "not shipped" is false of an order whose status says it has shipped
# (the shop's Vocabulary.once names those statuses).
_NOT = r"(?:未|没有?|尚未|还没有?|还未|并未)\s*"
NOT_YET: dict[str, str] = {
    "shipped": rf"(?i){_NOT}(?:发货|发出|寄出)|(?:\bnot|n't)\s+(?:yet\s+)?(?:been\s+)?(?:shipped|sent)\b",
    "delivered": rf"(?i){_NOT}(?:签收|送达|收到)|(?:\bnot|n't)\s+(?:yet\s+)?(?:been\s+)?(?:delivered|received)\b",
    "cancelled": rf"(?i){_NOT}(?:被)?取消|(?:\bnot|n't)\s+(?:yet\s+)?(?:been\s+)?cancell?ed\b",
    "paid": rf"(?i){_NOT}(?:付款|支付)|(?:\bnot|n't)\s+(?:yet\s+)?(?:been\s+)?paid\b",
}
# A sentence that states a rule, not a fact about the order ("只有处理中的订单才能取消").
RULE = r"(?i)只有|只能|仅限|才能|才可以|\bonly\b|\bcan be\b|\bcan only\b"
# An amount as an answer writes one: ¥199.00, ￥199, 199 元, CNY 199, 199.00 yuan.
AMOUNT = (
    r"(?i)[¥￥$]\s*(\d[\d,]*(?:\.\d+)?)|(?:CNY|RMB|USD)\s*(\d[\d,]*(?:\.\d+)?)"
    r"|(\d[\d,]*(?:\.\d+)?)\s*(?:元|块|美元|CNY|RMB|USD|yuan|dollars?\b)"
)
# A date as an answer writes one: 2026-11-20, 2026年11月20日, 2026/11/20.
DATE = r"\b(\d{4})(?:-|/|年)(\d{1,2})(?:-|/|月)(\d{1,2})日?"
# An answer listing an order's items: "contains a Laptop and a Desk Lamp", "包含台灯和耳机".
ITEMS = (
    r"(?i)(?:\bcontains?|\bincludes?|\bconsists of|\bitems? (?:are|is|were)|\bitems?:"
    r"|包含|包括|商品(?:是|有|为|：|:))\s*"
)
ITEM_SPLIT = r"(?i)\s*(?:,\s*(?:and\s+)?|\band\b|、|，|和|以及|及|与)\s*"
# Words of a list that are no item: articles, counts, "the following items".
ITEM_FILLER = r"(?i)^(?:(?:a|an|the|one|two|three|\d+|\d+\s*[x×]|[一二两三四五]\s*[个件台双])\s+)*|\s*(?:[x×]\s*\d+)$"
# What may come before a list for it to be the order's: nothing (the id right before it), the
# order itself ("it", "订单"), or a joint ("and", "which").
ITEMS_OF_ORDER = r"(?i)(?:^|\b(?:order|it|package|shipment|and|which|that|also|still)|订单|包裹|它|还|也|[,，:：])\s*$"
# Where a list of items ends: a clause, an amount, a bracket.
ITEM_END = (
    r"(?i)\s*(?:[;；(（]|[$¥￥]|的|，共|共"
    r"|\b(?:which|that|for|with|at|worth|costing|priced|totall?ing|in total|all|both)\b)"
)
GENERIC_ITEMS = (
    r"(?i)^(?:(?:no|any|nothing|none)\b.*|the following|following|these|those|items?|products?|things?|pieces?"
    r"|\d+\s*items?|[一二两三四五\d]+\s*(?:件|个)(?:商品)?|商品|以下商品)$"
)
# A status word just before an id it describes: "已发货的订单 ORD-1001", "shipped order ORD-1001".
BEFORE_ID = r"\s*(?:的)?\s*(?:订单|order|package)?\s*(?:号|number|id)?\s*[:：#]?\s*$"


class Reading(NamedTuple):
    """A shop's vocabulary made into what the check reads an answer with."""

    vocabulary: Vocabulary
    word: re.Pattern[str]  # any status word
    of: dict[str, str]  # a status word, lower-cased, to the status it names
    before_id: re.Pattern[str]  # a status word just before an id


@functools.cache
def reading(vocabulary: Vocabulary) -> Reading:
    """Compiled once per shop (a Vocabulary is hashed by identity)."""
    words: dict[str, str] = {}
    for status, others in vocabulary.statuses.items():
        words[status.lower()] = status
        for word in others:
            words[word.lower()] = status
    alternatives = sorted(words, key=len, reverse=True)  # "refund in progress" before "refund…"
    # A word that never matches when the shop has no statuses.
    pattern = "|".join(re.escape(w) if not w.isascii() else rf"\b{re.escape(w)}\b" for w in alternatives) or r"(?!)"
    word = re.compile(pattern, re.I)
    return Reading(vocabulary, word, words, re.compile(rf"(?:{word.pattern}){BEFORE_ID}", re.I))


def _status_of(fact: Fact, words: Reading) -> str | None:
    """The fact's status in the store's vocabulary: a status written in another word of it
    ("delivered" where the store writes 已签收) is compared as the status it names."""
    return words.of.get(fact.status.lower(), fact.status) if fact.status else fact.status


class ClaimKind(StrEnum):
    """The kinds of finding (the module's docstring says each). Every view has words for each
    (tests/test_message_ids.py checks the catalogue), so a new kind is added here first."""

    UNKNOWN_ID = "unknown_id"
    NONEXISTENT_ID = "nonexistent_id"
    STATUS = "status"
    CANCELLATION = "cancellation"
    AMOUNT = "amount"
    ITEMS = "items"
    DATE = "date"


class Claim(NamedTuple):
    kind: ClaimKind
    order_id: str
    said: str
    observed: str | None  # what the tools returned; None when they returned nothing about it

    def as_dict(self) -> dict:
        return {"kind": str(self.kind), "order_id": self.order_id, "said": self.said, "observed": self.observed}


def check(
    answer: str | None, facts: list[Fact], calls: Iterable[CallRecord] = (), *, vocabulary: Vocabulary
) -> list[Claim]:
    """The unsupported claims in `answer`, given the run's facts (and call records, whose
    results may name further ids, e.g. the SKUs of a details result), in the words of the
    run's shop."""
    if not answer:
        return []
    words = reading(vocabulary)
    by_id = {f.order_id.upper(): f for f in facts}
    returned = set(by_id) | _ids_in_results(calls)
    computed = _amounts_in_results(calls)
    found: list[Claim] = []
    for order_id, segment, sentence, before in segments(answer):
        fact = by_id.get(order_id)
        found += _check_segment(order_id, segment, sentence, fact, order_id in returned, words, before, computed)
    if len(facts) == 1:  # the one order the run looked at: what sentences naming no id say is about it
        for sentence in unnamed_sentences(answer):
            found += _check_unnamed(sentence, facts[0], words, computed)
    claims: list[Claim] = []
    seen: set[tuple[str, str, str]] = set()
    for claim in found:
        key = (claim.kind, claim.order_id, claim.said)
        if key not in seen:
            seen.add(key)
            claims.append(claim)
    return claims


def segments(answer: str) -> list[tuple[str, str, str, str]]:
    """Per mention: (id, what follows it up to the next id or the end of its sentence,
    its sentence from the end of the id before it on, and the words before the id when
    it is the first id of its sentence, else "")."""
    mentions = list(re.finditer(ID, answer))
    ends = [m.end() for m in re.finditer(SENTENCE_END, answer)]
    out = []
    for index, match in enumerate(mentions):
        end = mentions[index + 1].start() if index + 1 < len(mentions) else len(answer)
        rest = answer[match.end() : end]
        stop = re.search(SENTENCE_END, rest)
        sentence_start = max((e for e in ends if e <= match.start()), default=0)
        first = not index or mentions[index - 1].end() <= sentence_start
        begin = sentence_start if first else mentions[index - 1].end()
        finish = match.end() + (stop.end() if stop else len(rest))
        before = answer[sentence_start : match.start()] if first else ""
        out.append((match.group().upper(), rest[: stop.start()] if stop else rest, answer[begin:finish], before))
    return out


def unnamed_sentences(answer: str) -> list[str]:
    """The sentences of `answer` that name no id."""
    cuts = [0, *(m.end() for m in re.finditer(SENTENCE_END, answer)), len(answer)]
    sentences = (answer[a:b] for a, b in zip(cuts, cuts[1:], strict=False))
    return [s for s in sentences if s.strip() and not re.search(ID, s)]


def _check_segment(
    order_id: str,
    segment: str,
    sentence: str,
    fact: Fact | None,
    returned: bool,
    words: Reading,
    before: str = "",
    computed: frozenset[float] = frozenset(),
) -> list[Claim]:
    if fact is None:
        return [] if returned else [Claim(ClaimKind.UNKNOWN_ID, order_id, order_id, None)]
    said = _status_before(before, words) + _status_words(segment, words)
    if fact.not_found:
        if said:
            return [Claim(ClaimKind.STATUS, order_id, said[0][0], fact.unknown)]
        if not re.search(NOT_FOUND_WORDS, sentence):
            return [Claim(ClaimKind.NONEXISTENT_ID, order_id, order_id, fact.unknown)]
        return []
    cancel = _cancel_claim(sentence)
    if cancel and not fact.cancelled and _status_of(fact, words) != words.vocabulary.cancelled:
        return [Claim(ClaimKind.CANCELLATION, order_id, cancel, _observed(fact))]
    if fact.cancelled:
        return []
    found = _amount_claims(order_id, segment, fact, computed) + _detail_claims(order_id, segment, fact)
    if said and (fact.status is None or all(status != _status_of(fact, words) for _, status in said)):
        return [Claim(ClaimKind.STATUS, order_id, said[0][0], _observed(fact)), *found]
    if not re.search(RULE, sentence):
        found += _negated_claims(order_id, segment, fact, words)
    return found


def _check_unnamed(sentence: str, fact: Fact, words: Reading, computed: frozenset[float] = frozenset()) -> list[Claim]:
    """What a sentence naming no id says about the run's one order. A sentence that states a
    rule ("只有处理中的订单才能取消") says nothing about it; an order that does not exist has
    no status, amount or cancellation to state."""
    if re.search(RULE, sentence) or fact.cancelled:
        return []
    order_id = fact.order_id
    cancel = _cancel_claim(sentence)
    if cancel and _status_of(fact, words) != words.vocabulary.cancelled:
        return [Claim(ClaimKind.CANCELLATION, order_id, cancel, _observed(fact))]
    said = _status_words(sentence, words)
    observed = fact.unknown if fact.not_found else _observed(fact)
    if said and (fact.status is None or fact.not_found or all(status != _status_of(fact, words) for _, status in said)):
        return [Claim(ClaimKind.STATUS, order_id, said[0][0], observed)]
    if said:
        return []
    return (
        _negated_claims(order_id, sentence, fact, words)
        + _amount_claims(order_id, sentence, fact, computed)
        + _detail_claims(order_id, sentence, fact)
    )


def _status_before(before: str, words: Reading) -> list[tuple[str, str]]:
    """The status word right before an id it describes, when that is how the text reads."""
    match = words.before_id.search(before)
    if match is None or re.search(NEGATION, before[: match.start()]):
        return []
    word = words.word.match(before, match.start()).group()
    return [(word, words.of.get(word.lower(), word))]


def _negated_claims(order_id: str, text: str, fact: Fact, words: Reading) -> list[Claim]:
    if not fact.status or fact.not_found:
        return []
    for milestone, pattern in NOT_YET.items():
        match = re.search(pattern, text)
        if match and _status_of(fact, words) in words.vocabulary.once.get(milestone, ()):
            return [Claim(ClaimKind.STATUS, order_id, " ".join(match.group().split()), fact.status)]
    return []


def _amount_claims(order_id: str, text: str, fact: Fact, computed: frozenset[float] = frozenset()) -> list[Claim]:
    """Amounts in `text` that none of the order's details held and no tool computed (a
    calculation, a balance), only when details were read: a refund of a sum nobody worked
    out is one of them."""
    if not fact.amounts:
        return []
    known = [*fact.amounts, *computed]
    out = []
    for match in re.finditer(AMOUNT, text):
        number = next(g for g in match.groups() if g is not None)
        value = float(number.replace(",", ""))
        if all(abs(value - amount) > 0.005 for amount in known):
            out.append(Claim(ClaimKind.AMOUNT, order_id, match.group().strip(), fact.fields.get("total")))
    return out


def _detail_claims(order_id: str, text: str, fact: Fact) -> list[Claim]:
    return _item_claims(order_id, text, fact) + _date_claims(order_id, text, fact)


def _item_claims(order_id: str, text: str, fact: Fact) -> list[Claim]:
    """Items an answer lists for the order ("contains a Laptop and a Desk Lamp") that are
    none of its items. A name in another script than the store's (a translation) is not read,
    nor anything longer than a name."""
    if not fact.items:
        return []
    names = [n.lower() for n in fact.items]
    out = []
    for match in re.finditer(ITEMS, text):
        if not re.search(ITEMS_OF_ORDER, text[: match.start()]):
            continue  # "the refund includes tax" lists no items of the order
        listed = re.split(ITEM_END, text[match.end() :], maxsplit=1)[0]
        for part in re.split(ITEM_SPLIT, listed):
            part = part.strip(" .。!！?？:：\"'“”")
            name = re.sub(ITEM_FILLER, "", part).strip().lower()
            if not name or re.match(GENERIC_ITEMS, name) or len(name.split()) > 5 or len(name) > 40:
                continue
            same_script = [n for n in names if _cjk(n) == _cjk(name)]
            if same_script and not any(name in n or n in name for n in same_script):
                out.append(Claim(ClaimKind.ITEMS, order_id, part, fact.fields.get("items")))
    return out


def _date_claims(order_id: str, text: str, fact: Fact) -> list[Claim]:
    """Dates an answer gives the order that none of its details held."""
    if not fact.dates:
        return []
    out = []
    for match in re.finditer(DATE, text):
        year, month, day = (int(g) for g in match.groups())
        if f"{year:04d}-{month:02d}-{day:02d}" not in fact.dates:
            out.append(Claim(ClaimKind.DATE, order_id, match.group(), ", ".join(fact.dates)))
    return out


def _cjk(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


def _status_words(segment: str, words: Reading) -> list[tuple[str, str]]:
    """(word as written, the store status it names) for each status word that is a claim."""
    out = []
    for match in words.word.finditer(segment):
        if re.search(NEGATION, segment[: match.start()]):
            continue
        out.append((match.group(), words.of.get(match.group().lower(), match.group())))
    return out


def _cancel_claim(segment: str) -> str | None:
    for match in re.finditer(CANCEL_DONE, segment):
        if not re.search(NEGATION, segment[: match.start()]):
            return " ".join(match.group().split())  # "has\n been cancelled" is quoted on one line
    return None


def _observed(fact: Fact) -> str | None:
    """The order's status as the tools returned it; None when they returned none (what did
    become of the calls about it is the fact's, which the views say beside the claim)."""
    return fact.status or None


def _amounts_in_results(calls: Iterable[CallRecord]) -> frozenset[float]:
    """Amounts the tools gave beside an order's details: what a calculation returned, and
    every price, balance and amount in a result (a variant's price, a gift card's balance)."""
    found: set[float] = set()

    def walk(value: object, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, str(k))
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, int | float) and not isinstance(value, bool) and key in MONEY_KEYS:
            found.add(abs(float(value)))

    for call in calls:
        result = call.result or {}
        if not result.get("ok"):
            continue
        if call.name == "calculate":
            with contextlib.suppress(ValueError):  # a calculation that failed says no amount
                found.add(round(float(str(result.get("data"))), 2))
        walk(result.get("data"))
    return frozenset(found)


MONEY_KEYS = frozenset(("price", "unit_price", "balance", "amount", "total", "exchange_price_difference"))


def _ids_in_results(calls: Iterable[CallRecord]) -> set[str]:
    found: set[str] = set()
    for call in calls:
        if call.result:
            text = json.dumps(call.result, ensure_ascii=False)
            found.update(m.group().upper() for m in re.finditer(ID, text))
    return found
