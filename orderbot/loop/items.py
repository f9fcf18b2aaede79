"""Conversation items: the run's canonical history, shaped like the Responses API.

They are the project's own small pydantic types, not SDK objects, so a run can be saved
as plain JSON and resumed with any provider.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class _Item(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Message(_Item):
    type: Literal["message"] = "message"
    role: Literal["user", "assistant"]
    content: str


class FunctionCall(_Item):
    type: Literal["function_call"] = "function_call"
    call_id: str
    name: str
    arguments: str  # the raw JSON text the model produced; parsed only by dispatch


class FunctionCallOutput(_Item):
    type: Literal["function_call_output"] = "function_call_output"
    call_id: str
    output: str  # the JSON envelope {"ok": ..., ...} as text


class ProviderItem(_Item):
    """An item only one provider understands (e.g. a reasoning item), kept verbatim."""

    model_config = ConfigDict(defer_build=True)  # built when a provider first keeps one: offline runs never do

    type: Literal["provider"] = "provider"
    provider: str
    data: dict[str, Any]


Item = Annotated[Message | FunctionCall | FunctionCallOutput | ProviderItem, Field(discriminator="type")]
ITEMS = TypeAdapter(list[Item], config=ConfigDict(defer_build=True))  # built when replay first reads turns


def user(text: str) -> Message:
    return Message(role="user", content=text)


def assistant(text: str) -> Message:
    return Message(role="assistant", content=text)


# The text field of each item type. Looked up by type because getattr with a default on a
# pydantic model goes through its slow __getattr__ for every missing name (a hot path).
_TEXT_FIELD = {"message": "content", "function_call": "arguments", "function_call_output": "output"}


def text_chars(item: Item) -> int:
    """Characters of the item's text: what request sizes and the REPL's context budget count."""
    field = _TEXT_FIELD.get(item.type)
    return len(getattr(item, field)) if field is not None else 0
