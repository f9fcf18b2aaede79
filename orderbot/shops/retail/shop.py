"""The retail shop as a session sees it (orderbot.shops.session): its name, the limits a
customer conversation needs, and the check of a --user before a run. Which sources hold
the shop is orderbot.shops.choice's to say."""

from __future__ import annotations

from orderbot.errors import ConfigError
from orderbot.i18n import t
from orderbot.shops.retail.store import RetailStore

NAME = "retail"
# A customer conversation needs more room than a status query: tau2's training tasks take up
# to 13 actions, one per turn, and a person's approval in between. One call per turn is the
# policy's. Flags, ORDERBOT_* and .env still override each of them.
LIMIT_DEFAULTS: dict[str, int | float] = {
    "max_steps": 30,
    "max_tool_calls": 30,
    "max_calls_per_step": 1,
    "timeout": 120.0,
}


def check_customer(store: RetailStore, user: str | None) -> None:
    """A --user that names nobody in the shop is a mistake to say before the run, not a
    conversation in which every tool refuses."""
    if user is not None and store.user(user) is None:
        raise ConfigError(t("retail.no_customer", source=store.source, user=repr(user)))
