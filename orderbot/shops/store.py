"""What every store of every shop implements, and how each store class opens.

A shop's store answers its own questions (the sample shop's `Store`, the retail shop's
`RetailStore`, each extending `ShopStore`); what a command, the session and a doctor ask of
any store is here. Every store class opens the same way (`StoreType.open`), so the one
chooser (orderbot.shops.choice) can open whichever it picks; the classes of the database
stores also load a shop into a new database (`DatabaseType.import_records`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from orderbot.shops.source import Source


class ShopStore(Protocol):
    source: str  # where the shop is, safe to show and to record: never a password
    writable: bool  # False for a store opened read-only: its one write then refuses (read_only)

    def count(self) -> int:
        """How many orders (doctor, import)."""
        ...

    def refresh(self) -> None:
        """See what another process wrote since the store was opened: a file store reads its
        file again when it changed; a database, read afresh at every query, has nothing to do."""
        ...

    def close(self) -> None:
        """Release connections and locks; the store is not used after it."""
        ...


S = TypeVar("S", bound=ShopStore, covariant=True)


class StoreType(Protocol[S]):
    """A store class: `open` the store at a source, over `connection` to it when the chooser
    already holds one (it asked the database which shop it keeps)."""

    def open(self, source: Source, connection: object = None, *, writable: bool = True) -> S: ...
