"""Each hostile test fails when the check of its rule is taken out: this script takes each
check out in turn (a one-line edit of the source, put back afterwards, whatever happens),
runs tests/shops/retail/test_retail_hostile.py against it and says whether a test caught it.
Not part of the suite (twenty test runs); run it after changing a check or its test:

    python tests/shops/retail/check_mutations.py [NAME ...]

Every line should say CAUGHT; it exits 1 when one says MISSED.
"""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
PYTHON = sys.executable
M = [
    ("reads need a customer", "orderbot/shops/retail/tools.py", 'signed_in = {"needs_user": True}', "signed_in = {}"),
    (
        "writes need a customer",
        "orderbot/shops/retail/tools.py",
        "            side_effect=True,\n            needs_user=True,",
        "            side_effect=True,\n            needs_user=False,",
    ),
    (
        "owner check",
        "orderbot/shops/retail/actions.py",
        "if order is None or order.user_id != customer:",
        "if order is None:",
    ),
    (
        "one customer",
        "orderbot/loop/dispatch.py",
        "if ctx.user is not None and value.customer != ctx.user:",
        "if False:",
    ),
    (
        "no identity args",
        "orderbot/shops/retail/tools.py",
        'model_config = ConfigDict(extra="forbid", frozen=True)',
        'model_config = ConfigDict(extra="ignore", frozen=True)',
    ),
    (
        "own payment method",
        "orderbot/shops/retail/actions.py",
        '    if method is None:\n        raise ToolError(\n            t("tool_error.not_your_payment_method"',
        '    if False:\n        raise ToolError(\n            t("tool_error.not_your_payment_method"',
    ),
    ("already modified", "orderbot/shops/retail/actions.py", "if order.status == ITEMS_MODIFIED:", "if False:"),
    ("only pending", "orderbot/shops/retail/actions.py", "    if order.status != PENDING:", "    if False:"),
    ("reason", "orderbot/shops/retail/actions.py", "if reason not in REASONS:", "if False:"),
    ("only delivered", "orderbot/shops/retail/actions.py", "if order.status != DELIVERED:", "if False:"),
    (
        "items in order",
        "orderbot/shops/retail/actions.py",
        "if item_ids.count(item_id) > held.count(item_id):",
        "if False:",
    ),
    ("count match", "orderbot/shops/retail/actions.py", "if len(item_ids) != len(new_item_ids):", "if False:"),
    ("same item", "orderbot/shops/retail/actions.py", "if item_id == new_item_id:", "if False:"),
    # a variant of any product passes: a swap across products would get through
    (
        "same product",
        "orderbot/shops/retail/actions.py",
        "variant = product.variants.get(new_item_id) if product is not None else None",
        "variant = next((p.variants[new_item_id] for p in products.values() if new_item_id in p.variants), None)",
    ),
    ("available", "orderbot/shops/retail/actions.py", "if not variant.available:", "if False:"),
    (
        "gift card covers",
        "orderbot/shops/retail/actions.py",
        "if isinstance(method, GiftCard) and cents(method.balance) < cents(amount):",
        "if False:",
    ),
    (
        "refund method",
        "orderbot/shops/retail/actions.py",
        "if not isinstance(method, GiftCard) and payment_method_id != original:",
        "if False:",
    ),
    (
        "another payment method",
        "orderbot/shops/retail/actions.py",
        "if original.payment_method_id == payment_method_id:",
        "if False:",
    ),
    ("one call per turn (cap)", "orderbot/loop/budget.py", "if count > limits.max_calls_per_step:", "if False:"),
    (
        "one call per turn (retail default)",
        "orderbot/shops/retail/shop.py",
        '"max_calls_per_step": 1,',
        '"max_calls_per_step": 3,',
    ),
]
only = sys.argv[1:]
missed = 0
for name, path, old, new in M:
    if only and name not in only:
        continue
    f = ROOT / path
    text = f.read_text()
    assert text.count(old) == 1, (name, text.count(old))
    f.write_text(text.replace(old, new))
    try:
        r = subprocess.run(
            [
                PYTHON,
                "-m",
                "pytest",
                "-n",
                "0",
                "-q",
                "-x",
                "-p",
                "no:cacheprovider",
                "tests/shops/retail/test_retail_hostile.py",
                "-k",
                "json or limit",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        failed = [line for line in r.stdout.splitlines() if line.startswith("FAILED")]
        print(f"{name:40s} {'CAUGHT' if r.returncode else 'MISSED'} {failed[:1]}")
        missed += not r.returncode
    finally:
        f.write_text(text)
sys.exit(1 if missed else 0)
