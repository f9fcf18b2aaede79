"""The facts panel and the claim check in words (orderbot.answers keeps codes and values):
each fact as the panel's line, each unsupported claim as its sentence, in the UI language
or the one asked for. Order data in them is outside text: the caller shows the line through
orderbot.ui.escape.visible."""

from __future__ import annotations

from orderbot.answers.claims import Claim
from orderbot.answers.facts import CUSTOMER, Fact, Outcome
from orderbot.i18n import language, t
from orderbot.i18n.catalogue import MESSAGES
from orderbot.ui.escape import visible


def fact_line(fact: Fact, lang: str | None = None) -> str:
    """`ORD-1001 · 已发货 · items: … · not cancellable: 已发货`, in the catalogue's `facts.<key>`."""
    lang = lang or language()
    parts = [t("facts.customer", lang) if fact.order_id == CUSTOMER else fact.order_id]
    if fact.not_found:
        parts.append(t("facts.not_found", lang))
    elif fact.status:
        parts.append(fact.status)
    parts += [f"{t(f'facts.{name}', lang)}: {value}" for name, value in fact.fields.items()]
    parts += [outcome_words(o, fact, lang) for o in fact.outcomes]
    return " · ".join(parts)


def outcome_words(outcome: Outcome, fact: Fact, lang: str) -> str:
    said = t(f"facts.{outcome.key}", lang, status=fact.status or "?", code=fact.failure)
    if not outcome.action:
        return said
    known = f"facts.action.{outcome.action}"
    action = t(known, lang) if known in MESSAGES else outcome.action
    return t("facts.acted", lang, action=action, outcome=said)


def claim_words(claim: Claim, fact: Fact | None = None, lang: str | None = None) -> str:
    """One finding of the claim check as a plain sentence. What the tools returned is the
    order's status (a value) or, without one, what became of the calls about it (`fact`)."""
    lang = lang or language()
    if claim.observed:
        shown = visible(claim.observed, one_line=True)
    elif fact is not None and fact.no_access:
        shown = t("facts.no_access", lang)
    elif fact is not None and fact.outcomes:
        shown = ", ".join(outcome_words(o, fact, lang) for o in fact.outcomes)
    else:
        shown = t("claims.nothing", lang)
    return t(f"claims.{claim.kind}", lang, order_id=claim.order_id, said=claim.said, observed=shown)
