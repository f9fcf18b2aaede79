"""Write a realistic orders file: `python benchmarks/gen_orders.py COUNT PATH`.

Orders look like the bundled sample (Chinese goods, carriers, cities; 1-4 line items;
totals that add up; every status), are valid per `orderbot.shops.sample.tools.Order`, and are
deterministic for a given count (seeded), so runs are comparable. The file is compact
JSON, as a program would write it. Generated files belong in a temporary directory:
they are never committed.
"""

from __future__ import annotations

import json
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

GOODS = [
    ("SKU-TEA-01", "西湖龙井 250g", 168.0),
    ("SKU-CUP-02", "玻璃茶杯", 29.5),
    ("SKU-BAG-07", "帆布托特包", 199.0),
    ("SKU-KBD-11", "机械键盘 87键", 459.0),
    ("SKU-MOU-03", "无线鼠标", 89.0),
    ("SKU-BOK-21", "《三体》全集", 93.6),
    ("SKU-PEN-05", "中性笔 12支装", 19.9),
    ("SKU-LMP-09", "护眼台灯", 239.0),
    ("SKU-TWL-04", "纯棉毛巾 3条", 45.0),
    ("SKU-RCE-30", "五常大米 5kg", 79.0),
    ("SKU-HDP-12", "降噪耳机", 899.0),
    ("SKU-UMB-06", "折叠雨伞", 59.0),
]
CARRIERS = ["顺丰速运", "中通快递", "圆通速递", "京东物流", "EMS"]
CITIES = ["杭州", "上海", "北京", "深圳", "成都", "武汉", "西安", "南京", "广州", "重庆"]
STATUSES = ["待付款", "处理中", "已发货", "已签收", "已取消", "退款中", "已退款"]
WEIGHTS = [5, 10, 20, 50, 8, 3, 4]
SHIPPED = {"已发货", "已签收", "退款中", "已退款"}
CST = timezone(timedelta(hours=8))
EPOCH = datetime(2025, 1, 1, tzinfo=CST)


def order(index: int, rng: random.Random) -> dict:
    status = rng.choices(STATUSES, WEIGHTS)[0]
    lines = []
    for sku, name, price in rng.sample(GOODS, rng.randint(1, 4)):
        lines.append({"sku": sku, "name": name, "quantity": rng.randint(1, 3), "unit_price": price})
    created = EPOCH + timedelta(minutes=rng.randrange(600_000))
    updated = created + timedelta(minutes=rng.randrange(1, 10_000))
    shipping: dict = {"city": rng.choice(CITIES)}
    if status in SHIPPED:
        shipping |= {"carrier": rng.choice(CARRIERS), "tracking_number": f"SF{rng.randrange(10**12, 10**13)}"}
    record = {
        "order_id": f"ORD-{100000 + index}",
        "customer_id": f"C{rng.randrange(1, max(2, index // 4 + 2)):06d}",
        "status": status,
        "items": lines,
        "total": round(sum(line["quantity"] * line["unit_price"] for line in lines), 2),
        "currency": "CNY",
        "created_at": created.isoformat(),
        "updated_at": updated.isoformat(),
        "shipping": shipping,
    }
    if rng.random() < 0.1:
        record["note"] = rng.choice(["请尽快发货", "工作日送货", "放门卫室", "礼品包装，谢谢"])
    return record


def write(count: int, path: Path, seed: int = 7) -> Path:
    """Stream the file out in chunks, so generating 1M orders needs little memory."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        out.write('{"orders":[')
        for start in range(0, count, 10_000):
            chunk = [order(i, rng) for i in range(start, min(count, start + 10_000))]
            text = ",".join(json.dumps(o, ensure_ascii=False, separators=(",", ":")) for o in chunk)
            out.write(("," if start else "") + text)
        out.write("]}")
    return path


def main(argv: list[str]) -> None:
    if len(argv) != 2 or not argv[0].isdigit():
        sys.exit("usage: gen_orders.py COUNT PATH")
    path = write(int(argv[0]), Path(argv[1]))
    print(f"{path}: {int(argv[0]):,} orders, {path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main(sys.argv[1:])
