"""Where the retail shop is kept: one interface, implemented by the JSON file
(orderbot/shops/retail/jsonstore.py), SQLite and PostgreSQL.

The retail tools ask a store nothing else, so the policy checks (orderbot/shops/retail/
actions.py) and the at-most-once writes behave the same on every store. A store holds
records of the types in orderbot/shops/retail/data.py and returns them typed, equal (==) to
what was stored: amounts are kept at cents, and a record read back after a write equals
the record that was written.

Reads (each `timeout` is what is left of the run, in seconds; a database store bounds its
statement by it, a file store may ignore it):

    user(user_id)            the User with this id, or None
    order(order_id)          the Order with this id, or None
    product(product_id)      the Product with this id (all its variants), or None
    item(item_id)            the Variant with this item id, whichever product holds it, or None
    product_types()          {product name: product_id} for every product, sorted by name
                             (tau2's list_all_product_types)
    find_user_by_email(email)
                             the user_id of the first user, in the shop's order, whose email
                             equals `email` ignoring case (Python's str.lower on both sides);
                             None if there is none
    find_user_by_name_zip(first_name, last_name, zip)
                             the user_id of the first user, in the shop's order, whose first
                             and last names equal the given ones ignoring case (str.lower) and
                             whose address's zip equals `zip` exactly; None if there is none

"The shop's order" is the order of the records in the file the shop came from (the
insertion order of tau2's db.json): a store keeps it, for these first matches and for
`export`.

The one write:

    apply(write, call_key)   compare-and-set of every record in `write.changes`, all or
                             nothing, at most once per `call_key`:
        - if `call_key` was applied before, nothing is written and the result stored with
          it then is returned (even if `write` differs: a resumed run repeating an approved
          call gets exactly the first answer);
        - else, if any change's `old` differs from the record now stored under its id
          (another writer changed it since it was read), nothing is written and
          ToolError(code "changed_meanwhile") is raised;
        - else every change's `new` replaces its record, `call_key` is stored with
          `write.result` in the same transaction (the ledger), and `write.result` is returned.
      Refusals: ToolError "read_only" (not writable), "busy" (another writer holds the
      store longer than the store waits), "store_unavailable" / "write_failed" (nothing
      was written). The ledger lives beside the data (a table, a member of the file that
      is not part of the shop) and never appears in `export`.

And:

    export()                 every record, typed: all products, then all users, then all
                             orders, each section in the shop's order; an iterator, so a
                             large shop is never in memory at once (data.write_document
                             writes it as tau2's JSON, data.document builds the dict)
    count()                  how many orders (doctor, import)
    source                   where the shop is, safe to show and to record: never a password
    writable                 False for a store opened read-only; apply then refuses
    close()                  release connections and locks; the store is not used after it
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from orderbot.shops.retail.data import Order, Product, User, Variant
from orderbot.shops.store import ShopStore, StoreType

if TYPE_CHECKING:
    from orderbot.shops.source import Source

ShopRecord = Order | User | Product


@dataclass(frozen=True)
class Change:
    """One record a write replaces: the version it was computed from, and the new one
    (same type, same id)."""

    old: ShopRecord
    new: ShopRecord

    def __post_init__(self) -> None:
        if type(self.old) is not type(self.new):
            raise TypeError("a change replaces a record with one of the same kind")


@dataclass(frozen=True)
class Write:
    """What an approved tool call changes, and what the tool then returns (JSON data)."""

    changes: tuple[Change, ...]
    result: Any


class RetailStore(ShopStore, Protocol):
    def user(self, user_id: str, *, timeout: float | None = None) -> User | None: ...

    def order(self, order_id: str, *, timeout: float | None = None) -> Order | None: ...

    def product(self, product_id: str, *, timeout: float | None = None) -> Product | None: ...

    def item(self, item_id: str, *, timeout: float | None = None) -> Variant | None: ...

    def product_types(self, *, timeout: float | None = None) -> dict[str, str]: ...

    def find_user_by_email(self, email: str, *, timeout: float | None = None) -> str | None: ...

    def find_user_by_name_zip(
        self, first_name: str, last_name: str, zip: str, *, timeout: float | None = None
    ) -> str | None: ...

    def apply(self, write: Write, call_key: str, *, timeout: float | None = None) -> Any: ...

    def export(self) -> Iterator[ShopRecord]: ...


class DatabaseType(StoreType[RetailStore], Protocol):
    """A class of the retail shop's database stores (SQLite, PostgreSQL)."""

    def import_records(
        self,
        source: Source,
        records: Iterable[ShopRecord],
        *,
        replace: bool,
        orphan: Callable[[str], NoReturn],
        ledger: dict[str, Any] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> dict[str, int]:
        """Write the records into the database in one transaction: all of them or none."""
        ...
