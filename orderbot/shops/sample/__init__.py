"""The sample shop: the orders of orderbot's first example (orders.json), its four order tools and
their permission checks, and the stores that keep its orders. Imports orderbot.loop, never the UI."""
