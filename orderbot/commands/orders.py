"""`orderbot orders`: import orders into a database, and look at them without a model.

    orders import orders.json --to sqlite:///shop.db [--replace]   (or a tau2-shaped retail shop)
    orders export --orders sqlite:///shop.db out.json                 (a retail shop, back to tau2's JSON)
    orders list --user C001 [--status 处理中] [--limit N] [--offset N]
    orders show ORD-1001 [--user C001]

list and show follow the order tools' rules, in either shop: a customer (--user) sees their
own orders, anyone sees an order's status by its exact id. `--all` lifts the customer filter: it is
for whoever already holds the store itself (the file, the database's credentials), to
whom orderbot gives nothing they could not read directly.
"""

from __future__ import annotations

import sys
import time
import unicodedata
from itertools import islice
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress

from orderbot.commands import COMMAND_HELP, CommandGroup
from orderbot.commands.common import Json, Orders, User, errors_to_exit_codes
from orderbot.commands.logs import setup_logging
from orderbot.errors import ConfigError, ExitCode, ToolError, UsageError
from orderbot.i18n import t
from orderbot.runs.statedir import LOG_FILE
from orderbot.settings import load_settings
from orderbot.shops.choice import database_type, is_shop_file, open_retail_store, open_shop_store
from orderbot.shops.retail.actions import owned_order as retail_owned_order
from orderbot.shops.retail.data import Order as RetailOrder
from orderbot.shops.retail.data import dump
from orderbot.shops.retail.shop import SHOP as RETAIL
from orderbot.shops.retail.shop import check_customer
from orderbot.shops.sample.model import NOT_FOUND, order_details, order_summary
from orderbot.shops.sample.shop import SHOP as SAMPLE
from orderbot.shops.sample.stores.jsonfile import parse_orders, read_file
from orderbot.shops.sample.tools import owned_order
from orderbot.shops.session import orders_source
from orderbot.shops.source import parse_source
from orderbot.ui.console import make_console
from orderbot.ui.escape import json_text  # --json: valid JSON, no raw controls
from orderbot.ui.orders import print_order, print_order_list, print_retail_list, print_retail_order

HELP = COMMAND_HELP["orders"]
EPILOG = (
    "Examples: orderbot orders import orders.json --to sqlite:///shop.db · "
    "orderbot orders list --user C001 · orderbot orders show ORD-1001 --user C001"
)
PROGRESS_FROM = 10_000  # orders: smaller imports finish before a bar would be worth drawing

app = typer.Typer(
    cls=CommandGroup, help=HELP, epilog=EPILOG, no_args_is_help=False, rich_markup_mode="rich", add_completion=False
)


@app.callback(invoke_without_command=True)
def orders(ctx: typer.Context) -> None:
    """`orderbot orders` alone: its help, and no error (as `orderbot` alone)."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


All = Annotated[
    bool,
    typer.Option(
        "--all",
        help="Every customer's orders: for whoever holds the store itself (see docs/orders.md).",
    ),
]


@app.command(
    "import",
    help="Validate a JSON orders file and write it into a database, all or nothing.",
    epilog="Example: orderbot orders import orders.json --to sqlite:///shop.db",
)
def import_(
    file: Annotated[str, typer.Argument(help="The orders JSON file.", show_default=False)],
    to: Annotated[
        str,
        typer.Option("--to", help="sqlite:///path/to/shop.db or postgresql://user@host:5432/db.", show_default=False),
    ],
    replace: Annotated[bool, typer.Option("--replace", help="Replace the orders the database already holds.")] = False,
    json_out: Json = False,
) -> None:
    with errors_to_exit_codes():
        _settings(None, None)  # for the log file: a database's errors are logged, as in every command
        # The retail shop's store modules load its models: only a retail import or export pays for them.
        from orderbot.shops.retail.sql import TABLES as RETAIL_TABLES  # a database keeps one shop

        target = parse_source(to)
        if target.kind == "json":
            raise UsageError(t("orders.to_is_a_file", path=to))
        path = Path(file)
        if is_shop_file(path):
            _import_shop(path, target, replace=replace, json_out=json_out)
            return
        if target.kind == "postgres":
            from orderbot.shops.postgres_access import connect  # psycopg: the postgres extra

            connect(target).close()  # a wrong password says so before a long validation
        import_orders = database_type("sample", target).import_records
        began = time.monotonic()
        err = Console(stderr=True, highlight=False)  # progress goes to stderr: stdout stays clean
        show = not json_out and err.is_terminal
        if show:
            with err.status(t("orders.validating", path=path)):
                orders = list(parse_orders(path, read_file(path)[0]).values())
        else:
            orders = list(parse_orders(path, read_file(path)[0]).values())
        if show and len(orders) >= PROGRESS_FROM:
            with Progress(console=err, transient=True) as bar:
                task = bar.add_task(t("orders.importing", target=target.shown), total=len(orders))
                count = import_orders(
                    target,
                    orders,
                    replace=replace,
                    progress=lambda done: bar.update(task, completed=done),
                    other_tables=RETAIL_TABLES,
                )
        else:
            count = import_orders(target, orders, replace=replace, other_tables=RETAIL_TABLES)
        seconds = time.monotonic() - began
        if json_out:
            doc = {"imported": count, "from": str(path), "to": target.shown, "seconds": round(seconds, 3)}
            sys.stdout.write(json_text(doc, indent=None) + "\n")
        else:
            typer.echo(t("orders.imported", count=count, source=path, target=target.shown, seconds=seconds))


def _import_shop(path, target, *, replace: bool, json_out: bool) -> None:
    """A tau2-shaped file (the retail shop) into the database, read and written one record
    at a time; a terminal sees how many orders are in so far."""
    from orderbot.shops.retail.transfer import import_file  # a store: lazy, as the others

    if target.kind == "postgres":
        from orderbot.shops.postgres_access import connect  # psycopg: the postgres extra

        connect(target).close()  # a wrong password says so before a long validation
    began = time.monotonic()
    err = Console(stderr=True, highlight=False)  # progress goes to stderr: stdout stays clean
    if not json_out and err.is_terminal:
        with err.status(t("orders.validating", path=path)) as status:

            def progress(done: int) -> None:
                status.update(t("orders.importing_count", target=target.shown, count=done))

            counts = import_file(path, target, replace=replace, progress=progress)
    else:
        counts = import_file(path, target, replace=replace)
    seconds = time.monotonic() - began
    if json_out:
        doc = {"imported": counts["orders"], **counts, "from": str(path), "to": target.shown}
        sys.stdout.write(json_text({**doc, "seconds": round(seconds, 3)}, indent=None) + "\n")
    else:
        typer.echo(t("orders.imported_shop", **counts, source=path, target=target.shown, seconds=seconds))


@app.command(
    "export",
    help="Write a retail shop, from any store, back to tau2's JSON shape, whole and atomically.",
    epilog="Example: orderbot orders export --orders sqlite:///shop.db out.json",
)
def export(
    file: Annotated[str, typer.Argument(help="The JSON file to write (replaced when complete).", show_default=False)],
    orders: Orders = None,
    json_out: Json = False,
) -> None:
    with errors_to_exit_codes():
        from orderbot.shops.retail.transfer import export_shop  # a store: lazy, as the others

        settings = _settings(orders, None)
        source, _ = orders_source(settings)
        store = open_retail_store(source, writable=False)
        try:
            counts = export_shop(store, Path(file), source=str(source.path or ""))
        except ToolError:
            raise _unreadable(settings, source, target=file) from None
        finally:
            store.close()
        if json_out:
            sys.stdout.write(json_text({"exported": counts, "from": source.shown, "to": file}, indent=None) + "\n")
        else:
            typer.echo(t("orders.exported", **counts, source=source.shown, target=file))


@app.command(
    "list",
    help="A customer's orders, newest first (--user), or every customer's (--all).",
    epilog="Example: orderbot orders list --user C001 --status 处理中",
)
def list_(
    user: User = None,
    all_: All = False,
    status: Annotated[str | None, typer.Option("--status", help="Only orders in this status, e.g. 处理中.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=10_000, help="Show at most this many.")] = 20,
    offset: Annotated[int, typer.Option("--offset", min=0, help="Skip this many (the next page).")] = 0,
    orders: Orders = None,
    json_out: Json = False,
) -> None:
    with errors_to_exit_codes():
        settings = _settings(orders, user)
        if settings.user is not None and all_:
            raise UsageError(t("orders.user_and_all"))
        if settings.user is None and not all_:
            raise UsageError(t("orders.whose"))
        shop, store = _open(settings)
        try:
            if shop == "retail":
                found = retail_orders(store, settings.user, status=status, limit=limit + 1, offset=offset)
                rows = [retail_summary(o, with_customer=all_) for o in found[:limit]]
            else:
                found = store.list_orders(settings.user, status=status, limit=limit + 1, offset=offset)
                rows = [
                    dict(order_summary(o), **({"customer_id": o.customer_id} if all_ else {})) for o in found[:limit]
                ]
        except ToolError:
            raise _unreadable(settings) from None
        finally:
            store.close()
        more = len(found) > limit
        if json_out:
            doc = {"orders": rows, "more": more, "offset": offset}
            sys.stdout.write(json_text(doc) + "\n")
            return
        show_list = print_retail_list if shop == "retail" else print_order_list
        money = (RETAIL if shop == "retail" else SAMPLE).vocabulary.money
        show_list(make_console(), rows, more=more, next_offset=offset + limit, with_customer=all_, money=money)


@app.command(
    "show",
    help="One order: its details for its owner (--user), its status for anyone.",
    epilog="Example: orderbot orders show ORD-1001 --user C001",
)
def show(
    order_id: Annotated[str, typer.Argument(help="The order id, e.g. ORD-1001.", show_default=False)],
    user: User = None,
    all_: All = False,
    orders: Orders = None,
    json_out: Json = False,
) -> None:
    with errors_to_exit_codes():
        settings = _settings(orders, user)
        if settings.user is not None and all_:
            raise UsageError(t("orders.user_and_all"))
        shop, store = _open(settings)
        try:
            if shop == "retail":
                doc = retail_order(store, order_id, settings.user, every=all_)
            elif all_:
                order = store.get(order_id)
                doc = dict(order_details(order), customer_id=order.customer_id) if order else None
            elif settings.user is not None:
                try:
                    doc = order_details(owned_order(store, order_id, settings.user))
                except ToolError as exc:
                    if exc.code != "no_access":  # the store failed: not a question of who may see it
                        raise
                    message = t("orders.no_access", order_id=text(order_id[:40]), user=settings.user)
                    print(t("error.prefix", error=message), file=sys.stderr)
                    raise typer.Exit(ExitCode.DIFFERS) from None
            else:  # like get_order_status: anyone may learn an order's status by its exact id
                order = store.get(order_id)
                doc = {"order_id": order_id, "status": order.status} if order else None
        except ToolError:
            raise _unreadable(settings) from None
        finally:
            store.close()
        found = doc is not None
        if not found:  # in the shop's own words: the sample shop's statuses are Chinese, tau2's English
            doc = {"order_id": order_id, "status": NOT_FOUND if shop == "sample" else RETAIL_NOT_FOUND}
        if json_out:
            sys.stdout.write(json_text(doc) + "\n")
        else:
            view = print_retail_order if shop == "retail" and "items" in doc else print_order
            view(make_console(), doc, money=(RETAIL if shop == "retail" else SAMPLE).vocabulary.money)
        raise typer.Exit(0 if found else ExitCode.DIFFERS)


def _settings(orders, user):
    """The settings, and the log file set up in their state directory before any store is
    opened: a store logs what it cannot read (database errors, rows orderbot did not write),
    and those lines hold the store's data, which must not reach the terminal."""
    settings = load_settings(orders=orders, user=user)
    setup_logging(settings.resolved_state_dir())
    return settings


def _unreadable(settings, source=None, *, target: str | None = None) -> ConfigError:
    """A store that fails while it is read (a row orderbot did not write, a database error)
    is a configuration error (exit 6; 1 would say "no such order"), in one sentence that
    points at the log, where the store wrote what it found."""
    source = source or orders_source(settings)[0]
    log = settings.resolved_state_dir() / LOG_FILE
    if target is None:
        return ConfigError(t("orders.store_unreadable", source=source.shown, log=log))
    return ConfigError(t("orders.export_unreadable", source=source.shown, target=target, log=log))


RETAIL_NOT_FOUND = "not found"  # a status word of no retail order, as tau2's are English


def _open(settings):
    """(which shop, its store), opened read-only: list and show change nothing. A --user
    that names nobody in a retail shop is said before anything is read for it."""
    source, _writable = orders_source(settings)
    shop, store = open_shop_store(source, writable=False)
    if shop == "retail":
        try:
            check_customer(store, settings.user)
        except (ConfigError, ToolError):
            store.close()
            raise
    return shop, store


def retail_orders(store, user: str | None, *, status: str | None, limit: int, offset: int) -> list:
    """A retail customer's orders in the shop's order (tau2's orders have no date), or every
    customer's (None: --all, read through the store's export, which stops once enough are found)."""
    if user is not None:
        customer = store.user(user)
        orders = (store.order(order_id) for order_id in (customer.orders if customer else ()))
    else:
        orders = (record for record in store.export() if isinstance(record, RetailOrder))
    matching = (o for o in orders if o is not None and (status is None or o.status == status))
    return list(islice(matching, offset, offset + limit))


def retail_summary(order, *, with_customer: bool) -> dict:
    """One row of a retail listing: its id, status, item count and what was paid."""
    row = {"order_id": order.order_id, "status": order.status, "items": len(order.items), "paid": paid(order)}
    return {"order_id": order.order_id, "customer_id": order.user_id, **row} if with_customer else row


def paid(order) -> float:
    """What the order's payment history comes to: payments less refunds."""
    total = sum(p.amount if p.transaction_type == "payment" else -p.amount for p in order.payment_history)
    return round(total, 2)


def retail_order(store, order_id: str, user: str | None, *, every: bool) -> dict | None:
    """One retail order: in full for its customer (or --all), its status for anyone, None
    when there is none; someone else's order is refused as the tools refuse it."""
    order = store.order(order_id)
    if every:
        return dump(order) if order else None
    if user is not None:
        try:
            return dump(retail_owned_order(order, user))
        except ToolError:
            message = t("orders.no_access", order_id=text(order_id[:40]), user=user)
            print(t("error.prefix", error=message), file=sys.stderr)
            raise typer.Exit(ExitCode.DIFFERS) from None
    return {"order_id": order_id, "status": order.status} if order else None


def text(value: object) -> str:
    """Order data is untrusted: no control or format character reaches the terminal."""
    return "".join("�" if unicodedata.category(ch)[0] == "C" else ch for ch in str(value))
