"""Every message id the code can build is in the catalogue, in both languages.

Read from the source, not from a run: each string in orderbot/ that has the shape of a
message id (a catalogue prefix, a dot, words) must be an id the catalogue has, and each id
built at run time (an f-string such as `claims.{kind}`) must be listed below with the values
it can take (the enum or tuple the code draws them from), every one of which makes an id the
catalogue has. A new f-string id fails here until it is listed; a kind, a stop reason, an
event or a decision whose sentence is removed fails here rather than in a person's run
(a claim kind without one ended `ask` in a KeyError once)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from orderbot.answers.claims import ClaimKind
from orderbot.i18n import LANGUAGES
from orderbot.i18n.catalogue import MESSAGES
from orderbot.loop.limits import StopReason
from orderbot.loop.state import PHASES, Event, Phase
from orderbot.ui import trace

ROOT = Path(__file__).resolve().parents[1] / "orderbot"
PREFIXES = sorted({message_id.split(".")[0] for message_id in MESSAGES})
ID = re.compile(rf"(?:{'|'.join(PREFIXES)})\.[a-z0-9_]+(?:\.[a-z0-9_]+)*")
# Strings of an id's shape that are no id: file names, OpenTelemetry's attribute, a column's
# width by its heading's id and what it is measured for.
NOT_IDS = {
    "keys.json", "orders.json", "audit.log", "audit.log.lock", "runs.index", "runs.db", "error.type",
    "table.event_word",
}  # fmt: skip

# An id built at run time, as its f-string reads with each value written `{}`, and what the
# code can put there. GUARDED: the code asks the catalogue first and shows the value itself
# when it has no words for it (a code from a tool, a field of an order), so nothing is missing.
GUARDED = None
DOMAINS: dict[str, object] = {
    "claims.{}": list(ClaimKind),
    "eval.reason.claim.{}": list(ClaimKind),
    "stop.{}": [reason for reason in StopReason if reason is not StopReason.ANSWERED],  # an answer is no stop message
    # ui.describe names these kinds' events by the kind; proposed, refused and the rest have ids of their own
    "event.{}": [Event.STARTED, Event.RESUMED, Event.EXECUTED, Event.APPROVED, Event.REJECTED],
    "event.finished.{}": list(StopReason),  # the last row's event: each stop reason in words
    "phase.{}": [phase for pair in PHASES.values() for phase in pair] + list(Phase),
    "decision.{}": list(trace.DECISIONS),
    "decision_short.{}": GUARDED,
    "facts.{}": GUARDED,
    "facts.action.{}": GUARDED,
    "offline.failure.{}": GUARDED,
    "orders.field.{}": GUARDED,
    "retail_orders.field.{}": GUARDED,
    "pydantic.{}": GUARDED,
    "decode.reason.{}": GUARDED,
    "audit.event_{}": GUARDED,
    "runs.unreadable_{}": GUARDED,  # a code of the run store's; the system's own words otherwise
    "count.{}": GUARDED,  # checked below: every unit counted() is given
    "usage.{}": ["options", "command", "args"],
    "tokens.state_{}": ["active", "revoked", "expired"],  # orderbot.runs.tokens.Token.state
    "usage.kind_{}": ["option", "argument"],
    "eval.check.{}": ["tools", "refused", "stop", "claims", "facts"],
    "runs.{}": ["approved", "rejected"],
    "orders.heading.{}": ["order", "customer", "status"],
    "retail_orders.heading.{}": GUARDED,
    "doctor.{}": GUARDED,
    "doctor.shop_{}": ["sample", "retail"],
}


def sources() -> list[tuple[Path, ast.AST]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(ROOT.rglob("*.py"))]


def template(node: ast.JoinedStr) -> str | None:
    """`claims.{}` for f"claims.{claim.kind}"; None for an f-string that is no id."""
    text = "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
    return text if ID.match(text.replace("{}", "x")) and text.split(".")[0] in PREFIXES else None


def test_every_literal_id_is_in_the_catalogue():
    missing = []
    for path, tree in sources():
        if path.name == "catalogue.py":
            continue
        parts_of_fstrings = {
            id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values
        }
        for node in ast.walk(tree):
            if id(node) in parts_of_fstrings:
                continue
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
            if ID.fullmatch(text) and text not in MESSAGES and text not in NOT_IDS:
                missing.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: {node.value}")
    assert not missing, "ids the catalogue lacks:\n" + "\n".join(missing)


def test_every_id_built_at_run_time_is_listed_and_each_of_its_values_is_in_the_catalogue():
    unlisted, missing = [], []
    for path, tree in sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.JoinedStr) or (shape := template(node)) is None:
                continue
            if shape not in DOMAINS:
                unlisted.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: {shape}")
                continue
            values = DOMAINS[shape]
            if values is GUARDED:
                continue
            missing += [shape.format(value) for value in values if shape.format(value) not in MESSAGES]
    assert not unlisted, "ids built at run time that tests/test_message_ids.py does not list:\n" + "\n".join(unlisted)
    assert not missing, f"ids the code can build that the catalogue lacks: {sorted(set(missing))}"


def test_claim_kinds_stop_reasons_and_events_say_themselves_in_both_languages():
    """The findings, stops and events a person reads most, each with its words in both
    languages (the catalogue test checks placeholders)."""
    wanted = [f"claims.{kind}" for kind in ClaimKind]
    wanted += [f"eval.reason.claim.{kind}" for kind in ClaimKind]
    wanted += [f"stop.{reason}" for reason in StopReason if reason is not StopReason.ANSWERED]
    wanted += [f"event.{kind}" for kind in Event if kind not in (Event.PROPOSED, Event.FINISHED)]
    wanted += [f"event.finished.{reason}" for reason in StopReason]
    wanted += [f"decision.{code}" for code in trace.DECISIONS]
    for message_id in wanted:
        assert message_id in MESSAGES, message_id
        assert all(MESSAGES[message_id].get(lang) for lang in LANGUAGES), message_id


def test_every_unit_counted_is_in_the_catalogue():
    units = set()
    for path, tree in sources():
        if path.parent.name == "i18n":  # where counted() is, and says a Phrase of `count.<unit>` with it
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "counted":
                unit = node.args[1] if len(node.args) > 1 else None
                assert isinstance(unit, ast.Constant), ast.unparse(node)  # a unit is always written out
                units.add(unit.value)
    assert units and all(f"count.{unit}" in MESSAGES for unit in units), sorted(units)
