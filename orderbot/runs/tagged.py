"""A run record as bytes: the integrity tag that ends it, the key the tag is made with, and
reading one back with its shape checked (orderbot.runs.record says what a record holds).

Every run store keeps each record as the text `RunRecord.to_json` gives, tagged: an
HMAC-SHA256 of the rest, with a key the store keeps apart from the records (the state
directory's `record.key`, mode 0600; a SQL store's `run_key` table). A record whose tag does
not verify was edited by another tool or copied from elsewhere, and is never resumed or
replayed. `orderbot runs export` writes these bytes as they are kept, which is what an
earlier orderbot kept in `runs/<run id>.json`.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import tempfile
from pathlib import Path

from pydantic import ValidationError

from orderbot.errors import Phrase, RecordError
from orderbot.runs import statedir
from orderbot.runs.record import FORMAT, KEY_BYTES, READS, TAG, TAG_PREFIX, RecordFile, RunRecord, upgrade
from orderbot.text import cut, decode_error, first_error


def tag_record(key: bytes, body: bytes) -> bytes:
    """A record's bytes with the integrity tag made with `key` as their last member."""
    return body[:-1] + TAG_PREFIX + _digest(key, body).encode() + b'"}'


def tag_problem(key: bytes | None, raw: bytes, elsewhere: Phrase) -> Phrase | None:
    """Why the tag of these record bytes does not verify with `key`, or None when it does;
    `elsewhere` is where such a record may have come from (another state directory)."""
    found = re.search(TAG, raw)
    if found is None:
        return Phrase("runs.no_tag")
    body = raw[: found.start()] + b"}"
    if key is None or not hmac.compare_digest(_digest(key, body).encode(), found.group(1)):
        return Phrase("runs.tag_mismatch", {"elsewhere": elsewhere})
    return None


def _digest(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def read_or_create_key(path: Path, *, create: bool) -> bytes | None:
    """The key in `path`; when missing and `create`, a new random one, written 0600 and
    linked into place so that two processes racing to make it end up with the same key."""
    try:
        key = statedir.read_own(path)  # never through a planted link, never waiting on a FIFO
    except FileNotFoundError:
        key = None
    except OSError as exc:
        raise RecordError("runs.key_unreadable", path=path, reason=statedir.reason(exc)) from None
    if key is not None:
        if len(key) != KEY_BYTES:
            raise RecordError("runs.key_file_damaged", path=path)
        return key
    if not create:
        return None
    try:
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # mode 0600
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(os.urandom(KEY_BYTES))
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(FileExistsError):  # another process made it first: use theirs
                os.link(temp, path)
        finally:
            os.unlink(temp)
    except OSError as exc:
        raise RecordError("runs.key_not_created", path=path, reason=statedir.reason(exc)) from None
    return read_or_create_key(path, create=False)


def read_record(path: Path) -> RunRecord:
    """One record file (`runs export`'s, or an earlier orderbot's), its shape checked but not
    its tag, which only the store that wrote it can check; any problem is a RecordError
    naming the file."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise RecordError("runs.no_such_record", path=path) from None
    except OSError as exc:
        raise RecordError("runs.record_unreadable", path=path, reason=statedir.reason(exc)) from None
    return parse_record(path, raw)


def parse_record(where: Path | Phrase, raw: bytes) -> RunRecord:
    """A record from its bytes, its shape checked; a RecordError naming `where` otherwise."""
    try:
        doc = json.loads(raw)
    except UnicodeDecodeError as exc:  # JSON is UTF-8 (or -16, -32): these bytes are none of them
        raise RecordError("runs.record_not_json", path=where, error=decode_error(exc)) from None
    except ValueError as exc:
        raise RecordError("runs.record_not_json", path=where, error=str(exc)) from None  # the parser's own words
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise RecordError("runs.not_a_record", path=where)
    if doc.get("version") not in READS:
        version = cut(repr(doc.get("version")), 20)
        raise RecordError("runs.version_unsupported", path=where, version=version, reads=", ".join(map(str, READS)))
    try:
        checked = RecordFile.model_validate(upgrade(doc))
    except ValidationError as exc:
        found, what = first_error(exc)
        raise RecordError(
            "runs.record_damaged", path=where, where=cut(found, 80) if found else Phrase("runs.the_record"), what=what
        ) from None
    return RunRecord.from_file(checked)
