"""The claim check: the model's answer read against what the tools returned.

Deterministic string and pattern matching with the store's own vocabulary; no second
model, no rewriting of the answer. Four kinds of finding, each `{kind, order_id, said,
observed}`:

    unknown_id      the answer names an order id that no tool returned
    nonexistent_id  the answer names an id the tools said does not exist, without saying so
    status          the answer gives an order a status the tools did not return for it
    cancellation    the answer says an order was cancelled, but no cancellation executed

How an answer is read: each mention of an order id opens a segment that runs to the next
id or the end of the sentence; its sentence is that segment with the words before the id
("I cancelled ORD-1002"). An id that does not exist passes when its sentence says so. The
status words in a segment (Chinese and English, see orders.STATUS_WORDS_EN) are what the
answer says about that order; a word right after a negation ("not", "没有", "未") is not a
claim. A segment passes when one of its status words is the observed status, so
"ORD-1001 is 已发货; only 处理中 or 待付款 can be cancelled" is fine; it fails when it has
status words and none of them is what the tools returned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from orderbot.answers.facts import Fact
from orderbot.loop.state import CallRecord
from orderbot.shops.sample.model import CANCELLED, NOT_FOUND, STATUS_WORDS_EN

# ORD-ids as the store writes them, and id-shaped tokens such as "MB-44" a model may invent.
ID = re.compile(r"(?<![A-Za-z0-9_-])(?:(?i:ORD)-[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*|[A-Z]{2,4}-[0-9]{2,}[A-Za-z0-9]*)")
SENTENCE_END = re.compile(r"[。！？\n]|[.!?](?=\s|$)")
NEGATION = re.compile(r"(?:\bnot\b|n't|\bnever|\bno longer|没有|没|未|不是|并非|尚未)\s*(?:\w+\s+){0,2}$", re.I)
NOT_FOUND_WORDS = re.compile(
    r"不存在|没有找到|未找到|找不到|查无|没有这个|无此|not found|does ?n[o']t exist|doesn't exist|no such|no order|"
    r"could ?n[o']t find|cannot find|can't find|unknown order|not exist",
    re.I,
)
CANCEL_DONE = re.compile(
    r"已(?:经|为你|为您|帮你|帮您)?取消|取消成功|成功取消|取消了|"
    r"(?:has|have|had|was|were|is|are|been|now|successfully|I've|I have|I)\s+(?:been\s+)?cancell?ed",
    re.I,
)


def _status_pattern() -> tuple[re.Pattern[str], dict[str, str]]:
    words: dict[str, str] = {}
    for status, english in STATUS_WORDS_EN.items():
        words[status] = status
        for word in english:
            words[word.lower()] = status
    alternatives = sorted(words, key=len, reverse=True)  # "refund in progress" before "refund…"
    pattern = "|".join(re.escape(w) if not w.isascii() else rf"\b{re.escape(w)}\b" for w in alternatives)
    return re.compile(pattern, re.I), words


STATUS_WORD, STATUS_OF = _status_pattern()


@dataclass(frozen=True)
class Claim:
    kind: str  # unknown_id, nonexistent_id, status, cancellation
    order_id: str
    said: str
    observed: str | None  # what the tools returned; None when they returned nothing about it

    def as_dict(self) -> dict:
        return asdict(self)


def check(answer: str | None, facts: list[Fact], calls: Iterable[CallRecord] = ()) -> list[Claim]:
    """The unsupported claims in `answer`, given the run's facts (and call records, whose
    results may name further ids, e.g. the SKUs of a details result)."""
    if not answer:
        return []
    by_id = {f.order_id.upper(): f for f in facts}
    returned = set(by_id) | _ids_in_results(calls)
    claims: list[Claim] = []
    seen: set[tuple[str, str, str]] = set()
    for order_id, segment, sentence in segments(answer):
        fact = by_id.get(order_id)
        for claim in _check_segment(order_id, segment, sentence, fact, order_id in returned):
            key = (claim.kind, claim.order_id, claim.said)
            if key not in seen:
                seen.add(key)
                claims.append(claim)
    return claims


def segments(answer: str) -> list[tuple[str, str, str]]:
    """Per mention: (id, what follows it up to the next id or the end of its sentence,
    its sentence from the end of the id before it on)."""
    mentions = list(ID.finditer(answer))
    ends = [m.end() for m in SENTENCE_END.finditer(answer)]
    out = []
    for index, match in enumerate(mentions):
        end = mentions[index + 1].start() if index + 1 < len(mentions) else len(answer)
        rest = answer[match.end() : end]
        stop = SENTENCE_END.search(rest)
        begin = max((e for e in ends if e <= match.start()), default=0)
        if index:
            begin = max(begin, mentions[index - 1].end())
        finish = match.end() + (stop.end() if stop else len(rest))
        out.append((match.group().upper(), rest[: stop.start()] if stop else rest, answer[begin:finish]))
    return out


def _check_segment(order_id: str, segment: str, sentence: str, fact: Fact | None, returned: bool) -> list[Claim]:
    if fact is None:
        return [] if returned else [Claim("unknown_id", order_id, order_id, None)]
    if fact.not_found:
        said = _status_words(segment)
        if said:
            return [Claim("status", order_id, said[0][0], NOT_FOUND)]
        if not NOT_FOUND_WORDS.search(sentence):
            return [Claim("nonexistent_id", order_id, order_id, NOT_FOUND)]
        return []
    cancel = _cancel_claim(sentence)
    if cancel and not fact.cancelled and fact.status != CANCELLED:
        return [Claim("cancellation", order_id, cancel, _observed(fact))]
    said = _status_words(segment)
    if not said or fact.cancelled:
        return []
    if fact.status is None or all(status != fact.status for _, status in said):
        return [Claim("status", order_id, said[0][0], _observed(fact))]
    return []


def _status_words(segment: str) -> list[tuple[str, str]]:
    """(word as written, the store status it names) for each status word that is a claim."""
    out = []
    for match in STATUS_WORD.finditer(segment):
        if NEGATION.search(segment[: match.start()]):
            continue
        out.append((match.group(), STATUS_OF.get(match.group().lower(), match.group())))
    return out


def _cancel_claim(segment: str) -> str | None:
    for match in CANCEL_DONE.finditer(segment):
        if not NEGATION.search(segment[: match.start()]):
            return " ".join(match.group().split())  # "has\n been cancelled" is quoted on one line
    return None


def _observed(fact: Fact) -> str | None:
    """What the tools said about the order, in a few words."""
    if fact.status:
        return fact.status
    if fact.no_access:
        return "no access"
    return "; ".join(fact.outcome_texts()) or None


def _ids_in_results(calls: Iterable[CallRecord]) -> set[str]:
    found: set[str] = set()
    for call in calls:
        if call.result:
            text = json.dumps(call.result, ensure_ascii=False)
            found.update(m.group().upper() for m in ID.finditer(text))
    return found
