"""What the retail shop's offline planner answers (orderbot/shops/retail/offline.py), in the
language of the question, whatever the UI language is: the built-in model's own words, so
they are its output, not the screen's, and a copy edit of the UI's catalogue cannot change
what it answers. The same shape as the catalogue: an id, its English and Chinese, with
`str.format` placeholders."""

from __future__ import annotations

WORDS: dict[str, dict[str, str]] = {
    "offline.with_id": {"en": "{text} ({id})", "zh": "{text}（{id}）"},
    "offline.order": {
        "en": "Order {order_id} is {status}. Items: {items}.",
        "zh": "订单 {order_id}：{status}。商品：{items}。",
    },
    "offline.tracking": {"en": " Tracking: {shipments}.", "zh": "物流单号：{shipments}。"},
    "offline.no_tracking": {"en": " No tracking yet.", "zh": "还没有物流信息。"},
    "offline.no_orders": {"en": "You have no orders.", "zh": "你目前没有订单。"},
    "offline.orders": {"en": "Your orders ({count}):", "zh": "你的订单（{count} 个）："},
    "offline.order_row": {"en": "{order_id}: {status}", "zh": "{order_id}：{status}"},
    "offline.orders_first": {"en": "(the first {count} are listed)", "zh": "（只列出了前 {count} 个）"},
    "offline.variants": {"en": "Available {name} variants ({count}):", "zh": "{name} 目前有货的规格（{count} 个）："},
    "offline.variant_row": {
        "en": "{options}: ${price} (item {item_id})",
        "zh": "{options}：${price}（商品编号 {item_id}）",
    },
    "offline.no_variants": {
        "en": "No variant of the {name} is available right now.",
        "zh": "{name} 目前没有有货的规格。",
    },
    "offline.cancelled": {
        "en": "Order {order_id} is cancelled ({reason}); the payment goes back to the original payment method "
        "in 5 to 7 business days.",
        "zh": "订单 {order_id} 已取消（原因：{reason}），款项将在 5 到 7 个工作日内退回原支付方式。",
    },
    "offline.cancelled_gift_card": {
        "en": "Order {order_id} is cancelled ({reason}); the payment is back on the gift card.",
        "zh": "订单 {order_id} 已取消（原因：{reason}），款项已退回礼品卡。",
    },
    "offline.which_reason": {
        "en": "To cancel order {order_id} I need the reason: '{needed}' or '{mistake}'. Which is it?",
        "zh": "取消订单 {order_id} 需要一个原因：“{needed}”（不再需要）或“{mistake}”（买错了）。是哪一个？",
    },
    "offline.which_product": {
        "en": "Which product do you mean? We have: {names}.",
        "zh": "你想看哪种商品？我们有：{names}。",
    },
    "offline.sign_in": {
        "en": "Please tell me your e-mail address, or your name and zip code, so I can find your account "
        "(or pass --user).",
        "zh": "请先告诉我你的邮箱，或者姓名和邮编，以便确认你的身份（也可以用 --user 指定）。",
    },
    "offline.what_do_you_need": {
        "en": "Please give me the order id (it starts with #W), or the product you are asking about.",
        "zh": "请告诉我订单号（以 #W 开头），或者你想了解的商品。",
    },
    "offline.failure": {"en": "That did not work: {error}", "zh": "没有办成：{error}"},
    "offline.failure.user_not_found": {
        "en": "No customer matches these details; please check the e-mail, or the name and zip code.",
        "zh": "没有找到与这些信息匹配的客户，请核对邮箱，或者姓名和邮编。",
    },
    "offline.failure.other_customer": {
        "en": "This conversation is about one customer only, and these details are not theirs.",
        "zh": "这次对话只能处理一位客户的事务，这些信息不是当前客户的。",
    },
    "offline.failure.no_access": {
        "en": "Order {target} is not among your orders.",
        "zh": "你的账户下没有订单 {target}。",
    },
    "offline.failure.no_such_product": {
        "en": "There is no product {target} (a product id is not an item id).",
        "zh": "没有找到商品 {target}（商品编号和商品规格编号不同）。",
    },
    "offline.failure.not_pending": {
        "en": "Order {target} is no longer pending, so it cannot be cancelled or changed.",
        "zh": "订单 {target} 已经不是待处理状态，不能取消或修改。",
    },
    "offline.failure.already_modified": {
        "en": "The items of order {target} were already modified; it cannot be cancelled or changed any more.",
        "zh": "订单 {target} 的商品已经修改过，不能再取消或修改。",
    },
    "offline.failure.bad_reason": {
        "en": "The reason for a cancellation must be '{needed}' or '{mistake}'.",
        "zh": "取消原因只能是 “{needed}” 或 “{mistake}”。",
    },
    "offline.failure.rejected": {
        "en": "You did not approve, so nothing was done to order {target}.",
        "zh": "你没有确认，所以订单 {target} 没有任何改动。",
    },
    "offline.failure.read_only": {
        "en": "This shop was opened read-only; nothing was changed.",
        "zh": "这个商店是以只读方式打开的，没有做任何改动。",
    },
    "offline.failure.internal_error": {
        "en": "Something went wrong inside orderbot; please try again later.",
        "zh": "处理时发生内部错误，请稍后再试。",
    },
    "offline.failure.gift_card_insufficient": {
        "en": "The gift card's balance does not cover it; nothing was done to order {target}.",
        "zh": "礼品卡余额不足，订单 {target} 没有任何改动。",
    },
    "offline.failure.bad_refund_method": {
        "en": "A refund for order {target} goes to its original payment method or one of your gift cards.",
        "zh": "订单 {target} 的退款只能退回原支付方式或你的礼品卡。",
    },
    "offline.failure.not_your_payment_method": {
        "en": "That payment method is not one of yours; nothing was done to order {target}.",
        "zh": "这个支付方式不是你的，订单 {target} 没有任何改动。",
    },
    "offline.failure.same_payment_method": {
        "en": "Order {target} is already paid with that payment method.",
        "zh": "订单 {target} 已经在用这个支付方式。",
    },
    "offline.which_order": {
        "en": "Which order is it about? Please give me its id (it starts with #W).",
        "zh": "是哪个订单？请告诉我订单号（以 #W 开头）。",
    },
    "offline.which_items": {
        "en": "Which items of order {order_id} do you mean: {items}?",
        "zh": "你指的是订单 {order_id} 里的哪件商品：{items}？",
    },
    "offline.which_variant": {
        "en": "Which {name} would you like instead? Available now: {variants}.",
        "zh": "你想换成哪一款 {name}？目前有货：{variants}。",
    },
    "offline.no_variant": {
        "en": "No available {name} matches that; available now: {variants}.",
        "zh": "没有符合要求且有货的 {name}；目前有货：{variants}。",
    },
    "offline.no_other_variant": {
        "en": "No other {name} is available right now, so it cannot be exchanged.",
        "zh": "目前没有其他有货的 {name}，所以不能换货。",
    },
    "offline.which_method": {
        "en": "Which of your payment methods do you mean: {methods}?",
        "zh": "你指的是哪一种支付方式：{methods}？",
    },
    "offline.which_address": {
        "en": "What is the new address? Please write it as: street, apartment (or none), city, state, "
        "country, zip code.",
        "zh": "新地址是什么？请按这个格式写：街道，门牌或公寓（没有就写 none），城市，州，国家，邮编。",
    },
    "offline.not_delivered": {
        "en": "Order {order_id} is {status}: only a delivered order can be returned or exchanged.",
        "zh": "订单 {order_id} 的状态是“{status}”：只有已送达的订单才能退货或换货。",
    },
    "offline.not_changeable": {
        "en": "Order {order_id} is {status}: only a pending order can be changed, and only a delivered "
        "one returned or exchanged.",
        "zh": "订单 {order_id} 的状态是“{status}”：只有待处理的订单才能修改，只有已送达的订单才能退货或换货。",
    },
    "offline.returned": {
        "en": "The return of {items} from order {order_id} is requested; the refund goes to {method}.",
        "zh": "订单 {order_id} 中 {items} 的退货申请已提交，退款将退回 {method}。",
    },
    "offline.exchanged": {
        "en": "The exchange for order {order_id} is requested: {swaps}; the price difference is settled with {method}.",
        "zh": "订单 {order_id} 的换货申请已提交：{swaps}；差价通过 {method} 结算。",
    },
    "offline.modified": {
        "en": "Order {order_id} is changed: {swaps}; the price difference is settled with {method}.",
        "zh": "订单 {order_id} 已修改：{swaps}；差价通过 {method} 结算。",
    },
    "offline.order_address": {
        "en": "Order {order_id} now ships to {address}.",
        "zh": "订单 {order_id} 的收货地址已改为 {address}。",
    },
    "offline.user_address": {"en": "Your address is now {address}.", "zh": "你的地址已改为 {address}。"},
    "offline.payment_changed": {
        "en": "Order {order_id} is now paid with {method}.",
        "zh": "订单 {order_id} 现在用 {method} 支付。",
    },
    "offline.cannot": {
        "en": "The built-in planner cannot do that: it looks up orders and products, and proposes returns, "
        "exchanges, cancellations, changes of a pending order, address changes and a hand-off to a person. "
        "A model can: --provider openai with an API key, or a local server (see docs/providers.md).",
        "zh": "内置规划器做不到这一点：它只能查询订单和商品，并提出退货、换货、取消、修改待处理订单、修改地址和转人工。"
        "模型可以做到：使用 --provider openai 并提供 API 密钥，或者使用本地服务器（见 docs/providers.md）。",
    },
}
