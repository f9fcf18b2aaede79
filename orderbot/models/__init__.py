"""Model providers, one module each, all behind the protocol the loop calls (orderbot.loop.model).

`create()` imports a provider's module only when it is chosen, so `orderbot --help` and
offline runs never import the openai SDK. The `offline` provider is the session's shop's own
planner (orderbot.shops.shop.Shop.offline): each shop brings one. `FACTORIES` is the registry:
tests add a scripted provider to it and then drive the real command line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from orderbot.settings import public_base_url

if TYPE_CHECKING:
    from orderbot.loop.model import Model
    from orderbot.settings import Settings
    from orderbot.shops.shop import Shop


def _offline(settings: Settings, shop: Shop) -> Model:
    return shop.offline()


def _openai(settings: Settings, shop: Shop) -> Model:
    from orderbot.models.openai import ResponsesModel

    return ResponsesModel.from_settings(settings)


def _chat(settings: Settings, shop: Shop) -> Model:
    from orderbot.models.chat import ChatModel

    return ChatModel.from_settings(settings)


MCP = "mcp"  # the provider of an MCP host's own model, reached through its client (orderbot.models.mcp_client)

# Each makes the model from the settings, for a run on the session's shop.
FACTORIES: dict[str, Callable[[Settings, Shop], Model]] = {"offline": _offline, "openai": _openai, "chat": _chat}


def resolve_provider(settings: Settings) -> str:
    """`auto` means chat when a base URL is set (`--base-url`, OPENAI_BASE_URL: an
    OpenAI-compatible server, and Chat Completions is what they all speak), else openai
    when an API key is configured, else the offline model."""
    if settings.provider != "auto":
        return settings.provider
    if settings.base_url is not None:
        return "chat"
    return "openai" if settings.api_key is not None else "offline"


def endpoint(settings: Settings) -> str | None:
    """The base URL the chosen provider sends requests to, stripped for the record and the
    screen; None for the offline model and for the provider's own default service."""
    if resolve_provider(settings) in ("offline", "scripted") or settings.base_url is None:
        return None

    return public_base_url(settings.base_url)


def create(settings: Settings, shop: Shop) -> Model:
    provider = resolve_provider(settings)
    factory = FACTORIES.get(provider)
    if factory is None:
        choices = ", ".join(("auto", *FACTORIES))
        raise settings.error_for("provider")("error.unknown_provider", name=repr(provider), choices=choices)
    return factory(settings, shop)
