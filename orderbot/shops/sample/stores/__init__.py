"""Where orders are kept: one interface, three stores, chosen by the --orders value.

    orders.json, path/to/file.json      JsonStore       the file, parsed and validated once per command
    sqlite:///shop.db, sqlite:////abs   SqliteStore     the standard library's sqlite3
    postgresql://user@host:5432/shop    PostgresStore   psycopg 3: pip install 'orderbot[postgres]'
    (also postgres://)

Every store answers the same four questions, and the order tools (orderbot/shops/sample/tools.py) ask
nothing else, so permissions, approval and resume behave the same on all three:

    get(order_id)                       one order, or None
    list_orders(customer_id, ...)       newest first, with paging (None: every customer's)
    cancel(order_id, reason, call_id)   compare-and-set: only the owner's, only while it is
                                        cancellable, at most once per approved call
    count()                             how many orders (doctor, import)

`timeout` (seconds) is what is left of the run; a database store bounds its statements by it.
"""

from __future__ import annotations

from orderbot.shops.sample.stores.base import Store
from orderbot.shops.source import Source


def open_store(source: Source, *, writable: bool = True) -> Store:
    """The store behind a parsed source; ConfigError (exit 6) when it cannot be used.

    Each store is imported when it is chosen, as a model provider is: a run over a JSON file
    never loads sqlite3 (~10 ms) or psycopg (the postgres extra)."""
    if source.kind == "json":
        from orderbot.shops.sample.stores.jsonfile import JsonStore

        return JsonStore.load(source.path, writable=writable)
    if source.kind == "sqlite":
        from orderbot.shops.sample.stores.sqlite import SqliteStore

        return SqliteStore.open(source)
    from orderbot.shops.sample.stores.postgres import PostgresStore

    return PostgresStore.open(source)
