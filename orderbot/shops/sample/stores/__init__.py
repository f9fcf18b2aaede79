"""Where the sample shop's orders are kept: one interface, three stores, chosen by the
--orders value (in orderbot.shops.choice, with the retail shop's).

    orders.json, path/to/file.json      JsonStore       the file, parsed and validated once per command
    sqlite:///shop.db, sqlite:////abs   SqliteStore     the standard library's sqlite3
    postgresql://user@host:5432/shop    PostgresStore   psycopg 3: pip install 'orderbot[postgres]'
    (also postgres://)

Every store answers the same four questions, and the order tools (orderbot/shops/sample/tools.py) ask
nothing else, so permissions, approval and resume behave the same on all three:

    get(order_id)                       one order, or None
    list_orders(customer_id, ...)       newest first, with paging (None: every customer's)
    cancel(order_id, reason, call_id)   compare-and-set: only the owner's, only while it is
                                        cancellable, at most once per approved call; refused
                                        (read_only) by a store opened read-only
    count()                             how many orders (doctor, import)

`timeout` (seconds) is what is left of the run; a database store bounds its statements by it.
"""
