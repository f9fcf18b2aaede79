"""The audit chain and its cross-check against the queue, as pure functions on entries
(orderbot.runs.audit): each check `verify` and `against_queue` make has a case that fails
when that check alone is taken out. The stores and the command line are in test_team.py,
test_team_postgres.py and tests/security/test_audit_forgery.py."""

from __future__ import annotations

from saying import raises

from orderbot.errors import RecordError
from orderbot.runs.audit import (
    GENESIS,
    AuditEntry,
    Decided,
    QueueRow,
    Settled,
    against_queue,
    against_records,
    entry_hash,
    next_link,
    verify,
)

KEY = b"k" * 32
OTHER = b"o" * 32


def entry(event: str, call_id: str = "c1", *, decided_by: str | None = None, **extra) -> AuditEntry:
    fields = dict(
        at="2026-12-01T10:00:00.000Z",
        event=event,
        run_id="261201-100000-aaaa",
        call_id=call_id,
        tool="cancel_order",
        arguments='{"order_id":"ORD-1002"}',
        customer="C001",
        requested_by="desk1",
        decided_by=decided_by,
    )
    return AuditEntry.new(**(fields | extra))


def chain(*entries: AuditEntry, key: bytes | None = None, start: int = 0, prev: str = GENESIS) -> list[AuditEntry]:
    out = []
    for number, made in enumerate(entries, start + 1):
        linked = made.chained(number, prev, key)
        out.append(linked)
        prev = linked.hash
    return out


def settled() -> list[AuditEntry]:
    return chain(entry("proposed"), entry("approved", decided_by="desk2"), entry("executed", decided_by="desk2"))


def ids(check) -> list[str]:
    return [p.id for p in check.problems]


def test_an_intact_chain_verifies_and_its_head_is_the_last_link():
    log = settled()
    check = verify(log)
    assert check.intact and check.entries == 3 and check.head == log[-1].hash and check.keyed_from is None


def test_an_entry_edited_and_rehashed_breaks_the_link_of_the_next():
    """Only the `prev` comparison finds this: the edited entry's own hash is right again."""
    log = settled()
    forged = log[1]._replace(decided_by="desk9")
    log[1] = forged._replace(hash=entry_hash(forged))
    assert ids(verify(log)) == ["audit.broken_link"]
    assert verify(log).problems[0].params == {"seq": 3}


def test_an_entry_edited_in_place_fails_its_own_hash():
    log = settled()
    log[1] = log[1]._replace(decided_by="desk9")
    assert ids(verify(log)) == ["audit.changed"]


def test_gaps_and_unreadable_lines_are_named():
    log = settled()
    assert ids(verify([log[0], log[2]])) == ["audit.missing_one", "audit.broken_link"]
    assert ids(verify([log[0], "unreadable", log[2]])) == ["audit.unreadable"]


def test_a_head_noted_earlier_must_still_be_in_the_log():
    log = settled()
    assert verify(log, head=log[1].hash).intact
    check = verify(log[:2], head=log[2].hash)  # the newest entry removed: the chain alone holds
    assert ids(check) == ["audit.head_missing"] and check.problems[0].params == {"head": log[2].hash}


def test_with_the_key_a_plain_entry_after_a_keyed_one_is_found():
    keyed = chain(entry("proposed"), entry("approved", decided_by="desk2"), key=KEY)
    assert keyed[0].hash.startswith("hmac:") and verify(keyed, key=KEY).keyed_from == 1
    assert verify(keyed, key=KEY).intact
    appended = chain(entry("executed", decided_by="desk2"), start=2, prev=keyed[-1].hash)  # by someone without it
    check = verify(keyed + appended, key=KEY)
    assert ids(check) == ["audit.not_keyed"] and check.problems[0].params == {"seq": 3}


def test_with_the_key_a_keyed_entry_edited_and_rehashed_without_it_is_found():
    keyed = chain(entry("proposed"), entry("approved", decided_by="desk2"), key=KEY)
    forged = keyed[1]._replace(decided_by="desk9")
    keyed[1] = forged._replace(hash=entry_hash(forged, OTHER))
    assert ids(verify(keyed, key=KEY)) == ["audit.changed"]


def test_a_log_keyed_later_anchors_its_plain_beginning():
    log = chain(entry("proposed"), entry("approved", decided_by="desk2"))
    log += chain(entry("executed", decided_by="desk2"), key=KEY, start=2, prev=log[-1].hash)
    assert verify(log, key=KEY).intact and verify(log, key=KEY).keyed_from == 3
    forged = log[0]._replace(customer="C002")
    log[0] = forged._replace(hash=entry_hash(forged))
    log[1] = log[1]._replace(prev=log[0].hash)
    log[1] = log[1]._replace(hash=entry_hash(log[1]))  # re-chained up to the keyed entry, which then breaks
    assert ids(verify(log, key=KEY)) == ["audit.broken_link"]


def test_another_key_a_missing_key_and_a_log_never_keyed_are_each_said_once():
    keyed = chain(entry("proposed"), entry("approved", decided_by="desk2"), key=KEY)
    assert ids(verify(keyed, key=OTHER)) == ["audit.other_key"]
    assert ids(verify(keyed)) == ["audit.needs_key"]
    assert ids(verify(settled(), key=KEY)) == ["audit.never_keyed"]
    assert verify([], key=KEY).intact


def test_a_keyed_log_is_continued_only_with_its_key():
    keyed = chain(entry("proposed"), key=KEY)
    assert next_link(keyed[-1], keyed, KEY) == (1, keyed[-1].hash)
    assert next_link(settled()[-1], [], None)[0] == 3 and next_link(None, [], KEY) == (0, GENESIS)
    with raises(RecordError, match="has none"):
        next_link(keyed[-1], keyed, None)
    with raises(RecordError, match="does not match this session's audit key"):
        next_link(keyed[-1], keyed, OTHER)


def test_one_row_that_does_not_link_stops_nobody_the_next_entry_links_on_and_verify_names_it():
    """A row written by hand after the keyed entries (its link merely begins `hmac:`) is not
    this key's; a session with the key links on from it, and --verify names that one row."""
    keyed = chain(entry("proposed"), entry("approved", decided_by="desk2"), key=KEY)
    junk = keyed[-1]._replace(seq=3, prev=keyed[-1].hash, hash="hmac:" + "0" * 64)
    newest_first = [junk, *reversed(keyed)]
    assert next_link(junk, newest_first, KEY) == (3, junk.hash)
    with raises(RecordError, match="does not match this session's audit key"):
        next_link(junk, newest_first, OTHER)
    after = chain(entry("executed", decided_by="desk2"), key=KEY, start=3, prev=junk.hash)
    assert ids(verify([*keyed, junk, *after], key=KEY)) == ["audit.changed"]


def row(status: str, decided_by: str | None = "desk2", call_id: str = "c1") -> QueueRow:
    return QueueRow(
        "261201-100000-aaaa", call_id, "cancel_order", '{"order_id":"ORD-1002"}', "C001", "desk1", status, decided_by
    )


def nothing_recorded(run_id: str, call_id: str) -> None:
    return None


def cross(entries, rows, recorded=nothing_recorded) -> list[str]:
    return [p.id for p in against_queue(entries, rows, recorded)]


def test_the_log_and_the_queue_agree_on_a_settled_call():
    assert cross(settled(), [row("committed")]) == []
    assert cross(settled()[:1], [row("pending", None)]) == []


def test_a_pending_approval_whose_proposal_was_removed_is_found():
    assert cross([], [row("pending", None)]) == ["audit.proposal_missing"]


def test_a_settled_approval_missing_its_decision_or_outcome_is_found():
    assert cross(settled()[:1], [row("rejected")]) == ["audit.decision_missing"]
    assert cross(settled()[:2], [row("committed")]) == ["audit.outcome_missing"]


def test_a_chained_rejection_for_a_call_the_queue_still_has_pending_is_found():
    log = chain(entry("proposed"), entry("rejected", decided_by="desk2", reason="no"))
    assert verify(log).intact  # a correct chain: only the queue tells
    problems = against_queue(log, [row("pending", None)], nothing_recorded)
    assert [p.id for p in problems] == ["audit.event_disagrees"]
    assert problems[0].params == {
        "seq": 2, "event": "rejected", "run_id": "261201-100000-aaaa", "call_id": "c1", "status": "pending"
    }  # fmt: skip


def test_names_and_the_call_must_agree_with_the_queue():
    assert cross(settled(), [row("committed", "desk3")]) == ["audit.names_disagree", "audit.names_disagree"]
    other = chain(entry("proposed", customer="C009"))
    assert cross(other, [row("pending", None)]) == ["audit.names_disagree"]
    moved = chain(entry("proposed", arguments='{"order_id":"ORD-1013"}'))
    assert cross(moved, [row("pending", None)]) == ["audit.names_disagree"]


def test_a_stage_logged_twice_is_found():
    log = chain(entry("proposed"), entry("approved", decided_by="desk2"), entry("approved", decided_by="desk2"))
    assert cross(log, [row("approved")]) == ["audit.repeated"]


def test_an_entry_about_a_call_nobody_knows_is_found_and_one_decided_inline_is_checked_against_its_record():
    assert cross(chain(entry("proposed", call_id="c7")), []) == ["audit.unknown_call"]

    def inline(run_id: str, call_id: str) -> Settled:
        return Settled("cancel_order", "desk1", "desk1", True)

    decided = chain(entry("proposed"), entry("approved", decided_by="desk1"), entry("executed", decided_by="desk1"))
    assert cross(decided, [], inline) == []
    assert cross(chain(entry("proposed"), entry("rejected", decided_by="desk1")), [], inline) == [
        "audit.event_disagrees"
    ]


def test_a_records_decision_is_borne_out_by_the_queue_or_the_log():
    """A record may say someone decided only what the queue (or, for a call decided at the
    prompt before the queue kept those, the log) says they decided."""
    queued = [row("approved"), row("pending", None, call_id="c2")]
    logged = {("261201-100000-aaaa", "c9", "approved", "desk1")}
    said = [
        Decided("261201-100000-aaaa", "c1", True, "desk2", "desk1"),  # as the queue says
        Decided("261201-100000-aaaa", "c9", True, "desk1", "desk1"),  # at the prompt, before: in the log
        Decided("261201-100000-aaaa", "c1", False, "desk2", "desk1"),  # rejected, the queue says approved
        Decided("261201-100000-aaaa", "c2", True, "desk2", "desk1"),  # still pending in the queue
        Decided("261201-100000-aaaa", "c1", True, "desk3", "desk1"),  # another decider
        Decided("261201-100000-aaaa", "c1", True, "desk2", "desk3"),  # another requester
        Decided("261201-100001-bbbb", "c1", True, "desk2", "desk1"),  # a copy under a new id: nowhere
    ]
    found = [(p.id, p.params["run_id"], p.params["call_id"]) for p in against_records(said, queued, logged)]
    assert found == [
        ("audit.record_disagrees", "261201-100000-aaaa", "c1"),
        ("audit.record_disagrees", "261201-100000-aaaa", "c2"),
        ("audit.record_disagrees", "261201-100000-aaaa", "c1"),
        ("audit.record_disagrees", "261201-100000-aaaa", "c1"),
        ("audit.record_unbacked", "261201-100001-bbbb", "c1"),
    ]
