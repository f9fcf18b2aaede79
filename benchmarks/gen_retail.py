"""Write a retail shop in tau2's shape at any size: `python benchmarks/gen_retail.py ORDERS PATH [--users N]`.

    python benchmarks/gen_retail.py 1000000 /tmp/retail-1m.json     # 500,000 customers by default

The shop starts with tau2's own (tests/fixtures/tau2-retail/db.json: its 50 products, 500
customers and 1,000 orders, unchanged), so every record of the small shop is also in the
large one, and goes on with generated customers and orders of the same shape: names and
zip codes drawn from tau2's customers, 1-3 payment methods (credit card, PayPal, gift card
with a balance), 1-5 items drawn from tau2's product variants at their prices, the
statuses in tau2's proportions (fulfilments once processed, a refund once cancelled), and
the payment that adds up. Deterministic for a given size (seeded), compact JSON, written
as it is made so a million orders need little memory. Generated files belong in a
temporary directory: they are never committed.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
TAU2_DB = HERE.parent / "tests" / "fixtures" / "tau2-retail" / "db.json"  # tau2's licence is beside it
STATUSES = ["pending", "delivered", "processed", "cancelled"]
WEIGHTS = [423, 373, 102, 102]  # tau2's db.json
STREETS = ["Main Street", "Oak Street", "Maple Drive", "Elm Avenue", "Hillcrest Drive", "Sunset Drive", "River Road"]
CITIES = [("Denver", "CO"), ("Austin", "TX"), ("Seattle", "WA"), ("Boston", "MA"), ("Chicago", "IL"), ("Miami", "FL")]
BRANDS = ["visa", "mastercard"]


def tau2_shop() -> dict:
    return json.loads(TAU2_DB.read_text(encoding="utf-8"))


class Generator:
    """Customers and orders in tau2's shape, from one seeded random source."""

    def __init__(self, base: dict, seed: int = 11) -> None:
        self.rng = random.Random(seed)
        self.firsts = sorted({u["name"]["first_name"] for u in base["users"].values()})
        self.lasts = sorted({u["name"]["last_name"] for u in base["users"].values()})
        self.variants = [
            (product["name"], product["product_id"], variant)
            for product in base["products"].values()
            for variant in product["variants"].values()
        ]
        self.taken_orders = set(base["orders"])
        self.next_method = 9_000_000  # payment method ids: beyond tau2's, unique across the shop

    def user(self, number: int, orders: list[str]) -> dict:
        rng = self.rng
        first, last = rng.choice(self.firsts), rng.choice(self.lasts)
        city, state = rng.choice(CITIES)
        methods = {}
        for source in rng.sample(["credit_card", "paypal", "gift_card"], rng.choice([1, 1, 1, 2, 2, 3])):
            self.next_method += 1
            method_id = f"{source}_{self.next_method}"
            method = {"source": source, "id": method_id}
            if source == "credit_card":
                method |= {"brand": rng.choice(BRANDS), "last_four": f"{rng.randrange(10_000):04d}"}
            elif source == "gift_card":
                method["balance"] = float(rng.randrange(0, 200))
            methods[method_id] = method
        return {
            "user_id": f"{first.lower()}_{last.lower()}_{number}",
            "name": {"first_name": first, "last_name": last},
            "address": {
                "address1": f"{rng.randrange(1, 999)} {rng.choice(STREETS)}",
                "address2": f"Suite {rng.randrange(100, 999)}",
                "city": city,
                "country": "USA",
                "state": state,
                "zip": f"{rng.randrange(10_000, 99_999)}",
            },
            "email": f"{first.lower()}.{last.lower()}{number}@example.com",
            "payment_methods": methods,
            "orders": orders,
        }

    def order(self, order_id: str, user: dict) -> dict:
        rng = self.rng
        status = rng.choices(STATUSES, WEIGHTS)[0]
        items = []
        for name, product_id, variant in rng.sample(self.variants, rng.randint(1, 5)):
            items.append(
                {
                    "name": name,
                    "product_id": product_id,
                    "item_id": variant["item_id"],
                    "price": variant["price"],
                    "options": variant["options"],
                }
            )
        paid_with = rng.choice(list(user["payment_methods"]))
        total = round(sum(item["price"] for item in items), 2)
        history = [{"transaction_type": "payment", "amount": total, "payment_method_id": paid_with}]
        fulfillments = []
        if status != "pending":
            tracking = [f"{rng.randrange(10**11, 10**12)}"]
            fulfillments.append({"tracking_id": tracking, "item_ids": [item["item_id"] for item in items]})
        if status == "cancelled":
            history.append({"transaction_type": "refund", "amount": total, "payment_method_id": paid_with})
        return {
            "order_id": order_id,
            "user_id": user["user_id"],
            "address": dict(user["address"]),
            "items": items,
            "status": status,
            "fulfillments": fulfillments,
            "payment_history": history,
        }


def write(orders: int, path: Path, *, users: int | None = None, seed: int = 11) -> Path:
    """tau2's shop, then generated customers and orders up to `orders` in all (customers:
    `users`, half the orders by default), as one compact JSON document."""
    base = tau2_shop()
    users = orders // 2 if users is None else users
    extra_users = max(0, users - len(base["users"]))
    extra_orders = max(0, orders - len(base["orders"]))
    gen = Generator(base, seed)
    rng = gen.rng
    numbers = iter(rng.sample(range(10**7), extra_orders + len(base["orders"])))
    order_ids = []
    for number in numbers:
        if len(order_ids) == extra_orders:
            break
        order_id = f"#W{number:07d}"
        if order_id not in gen.taken_orders:
            order_ids.append(order_id)
    owners = [rng.randrange(extra_users) for _ in order_ids] if extra_users else []
    by_owner: list[list[str]] = [[] for _ in range(extra_users)]
    for order_id, owner in zip(order_ids, owners, strict=True):
        by_owner[owner].append(order_id)
    dump = json.dumps
    with path.open("w", encoding="utf-8") as out:
        out.write('{"products": ')
        out.write(dump(base["products"]))
        out.write(', "users": {')
        first = True
        for user in base["users"].values():
            out.write(("" if first else ", ") + f"{dump(user['user_id'])}: {dump(user)}")
            first = False
        made = []
        for number in range(extra_users):
            user = gen.user(10_000 + number, by_owner[number])
            made.append(user)
            out.write(("" if first else ", ") + f"{dump(user['user_id'])}: {dump(user)}")
            first = False
        out.write('}, "orders": {')
        first = True
        for order in base["orders"].values():
            out.write(("" if first else ", ") + f"{dump(order['order_id'])}: {dump(order)}")
            first = False
        for order_id, owner in zip(order_ids, owners, strict=True):
            order = gen.order(order_id, made[owner])
            out.write(("" if first else ", ") + f"{dump(order_id)}: {dump(order)}")
            first = False
        out.write("}}")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("orders", type=int)
    parser.add_argument("path", type=Path)
    parser.add_argument("--users", type=int, default=None, help="customers in all (default: half the orders)")
    options = parser.parse_args()
    path = write(options.orders, options.path, users=options.users)
    print(f"{path}: {max(options.orders, 1000):,} orders, {path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
