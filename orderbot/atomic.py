"""Replacing a file atomically: the one way orderbot writes files that matter.

Write a temporary file next to the target, flush it to disk, rename it over the target.
Readers, and a process killed at any moment, see either the old file or the new one,
never a mix. New files are private (mkstemp's 0600); a replaced file keeps its mode.

A symbolic link is followed: the file it points to is replaced (the temporary file is
made in that file's directory, so the rename stays on one file system) and the link is
kept. Renaming over the link itself would replace it with a regular file and leave the
real file unchanged. That is what the person's own files want (orders.json linked from
elsewhere); files in the state directory are orderbot's, and there `follow_links=False`
replaces whatever was planted (a link, a FIFO, a device) and leaves its target alone.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO


def atomic_write(path: Path, data: bytes, *, durable: bool = True, follow_links: bool = True) -> None:
    """Replace `path` with `data`. `durable=False` skips the fsyncs: still never half a file
    after a killed process, but after a power cut possibly the old one (or, on some file
    systems, an empty one). Only for files that can be rebuilt from others (an index)."""
    with atomic_writer(path, durable=durable, follow_links=follow_links) as handle:
        handle.write(data)


@contextmanager
def atomic_writer(path: Path, *, durable: bool = True, follow_links: bool = True) -> Iterator[BinaryIO]:
    """`atomic_write` for a file written piece by piece (too large to hold at once): the
    handle writes the temporary file, which replaces `path` when the block ends without
    an exception and is removed when it ends with one."""
    path = target(path) if follow_links else Path(path)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        with suppress(OSError):  # keep the file's permissions (a regular file's: never a planted node's)
            found = path.stat() if follow_links else os.lstat(path)
            if stat.S_ISREG(found.st_mode):
                os.chmod(temp, stat.S_IMODE(found.st_mode))
        os.replace(temp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(temp)
        raise
    if not durable:
        return
    with suppress(OSError):  # make the rename itself durable; not every platform can
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def target(path: Path) -> Path:
    """The file a write to `path` must replace: `path` with every link resolved."""
    return Path(os.path.realpath(path))
