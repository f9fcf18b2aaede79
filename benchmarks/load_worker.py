"""One measurement of loading an orders file, in a fresh process, printed as JSON.

    python benchmarks/load_worker.py json-gc-off|json-gc-on|orderbot|cancel PATH

`json-gc-on` is what a plain script does: json.load, then a dict by id, with the cyclic
garbage collector on as Python starts. `json-gc-off` is the same load given orderbot's
treatment of the collector: paused while the objects are built, then the loaded objects
frozen out of its sight (gc.freeze). That is the fair baseline: orderbot's own load does
the same around its validation (it freezes only large stores; a small one is cheap). `orderbot` is
OrderStore.load (every order validated). All three are timed with one full garbage
collection at the end, so work the collector would do later is not hidden. Peak memory
is the rise of the process's resident-set high-water mark over what it held before the
load (imports excluded): the kernel's counter is reset just before loading when Linux
allows it, so the figure counts every allocator, not only Python's. `cancel` times one
cancellation on a copy of the file.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path


def _status(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
    except OSError:
        pass


def load_plain(path: Path) -> dict:
    with path.open(encoding="utf-8") as handle:
        data = json.load(handle)
    return {order["order_id"]: order for order in data["orders"]}


def load_plain_gc_off(path: Path) -> dict:
    gc.disable()
    try:
        orders = load_plain(path)
    finally:
        gc.enable()
    gc.freeze()
    return orders


def load_orderbot(path: Path):
    from orderbot.shops.sample.stores.jsonfile import JsonStore as OrderStore

    return OrderStore.load(path)


def cancel_one(path: Path) -> dict:
    """One cancellation through the store's own API (lock, re-read, atomic rewrite)."""
    from orderbot.shops.sample.model import CANCELLABLE, CANCELLED
    from orderbot.shops.sample.stores.jsonfile import JsonStore as OrderStore

    store = OrderStore.load(path)
    order = next(o for o in store.orders.values() if o.status in CANCELLABLE)
    began = time.perf_counter()
    store.cancel(order.order_id, "benchmark", "call_bench", user=order.customer_id)
    seconds = time.perf_counter() - began
    after = OrderStore.load(path).get(order.order_id).status  # read back from the file: was it written?
    return {
        "mode": "cancel",
        "seconds": seconds,
        "how": "OrderStore.cancel: lock, re-read, validate, atomic rewrite",
        "order_id": order.order_id,
        "cancelled": CANCELLED,
        "status_after": after,
    }


def main(mode: str, path: Path) -> None:
    if mode == "cancel":
        print(json.dumps(cancel_one(path)))
        return
    import orderbot.shops.sample.tools  # noqa: F401 - imports are not part of the load (and the same for all)

    load = {"json-gc-on": load_plain, "json-gc-off": load_plain_gc_off, "orderbot": load_orderbot}[mode]
    gc.collect()
    _reset_peak()
    before = _status("VmRSS:")
    began = time.perf_counter()
    loaded = load(path)
    gc.collect()
    seconds = time.perf_counter() - began
    peak = _status("VmHWM:") - before
    result = {"mode": mode, "seconds": seconds, "peak_bytes": peak, "count": len(loaded)}
    if mode == "orderbot":
        ids = list(loaded.orders)[:: max(1, len(loaded) // 1000)]
        rounds = 200
        began = time.perf_counter()
        for _ in range(rounds):
            for order_id in ids:
                loaded.get(order_id)
        result["lookup_us"] = (time.perf_counter() - began) / (rounds * len(ids)) * 1e6
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
