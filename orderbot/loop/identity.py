"""The identity-name policy: a tool never asks the model who the customer is.

Identity comes from the session, never from the model, so a tool whose arguments smell of
identity is refused when it is declared. The one exception is a sign-in lookup, which may
take the customer's credentials (what the customer knows: an e-mail address, a name and zip
code), never an id, and does nothing else.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from orderbot.errors import ConfigError

# Argument names that smell of identity. Names are compared without case, "_" or "-", so
# customerId and customer_id both count.
IDENTITY_WORDS = (
    "user",
    "customer",
    "account",
    "owner",
    "member",
    "identity",
    "login",
    "session",
    "principal",
    "tenant",
    "buyer",
    "caller",
    "requester",
    "email",
    "phone",
)
IDENTITY_TOKENS = frozenset({"uid", "cid", "who", "me"})  # whole words only: "guide" is not "uid"


def check_arguments(tool: str, args: type[BaseModel], schema: dict, credentials: tuple[str, ...]) -> None:
    """Refuse a tool (`ConfigError`) that takes identity from the model, except the
    `credentials` a sign-in lookup names (`schema` is the arguments' JSON schema)."""
    for name in argument_names(args, schema):
        if is_identity_name(name) and name not in credentials:
            raise ConfigError("tools.identity_argument", tool=repr(tool), name=repr(name))


def check_sign_in(tool: str, args: type[BaseModel], credentials: tuple[str, ...], *, does_more: bool) -> None:
    """A sign-in lookup reads credentials and nothing else: never an id that would let the
    model name the customer, never a side effect, never after sign-in only (`does_more`)."""
    for name in credentials:
        if name not in args.model_fields:
            raise ConfigError("tools.sign_in_unknown", tool=repr(tool), name=repr(name))
        if "id" in name_tokens(name):
            raise ConfigError("tools.sign_in_with_id", tool=repr(tool), name=repr(name))
    if credentials and does_more:
        raise ConfigError("tools.sign_in_does_more", tool=repr(tool))


def argument_names(model: type[BaseModel], schema: dict) -> set[str]:
    """Every property name the model could send, aliases and nested models included
    (`schema` is the model's JSON schema)."""
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            properties = node.get("properties")
            if isinstance(properties, dict):
                names.update(properties)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return names | set(model.model_fields)


def name_tokens(name: str) -> list[str]:
    """An argument name's words, lower case: customerId and customer_id are both customer, id."""
    return re.findall(r"[a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower())


def is_identity_name(name: str) -> bool:
    tokens = name_tokens(name)
    flat = "".join(tokens)
    return any(word in flat for word in IDENTITY_WORDS) or any(token in IDENTITY_TOKENS for token in tokens)
