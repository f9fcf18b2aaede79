"""Conversation items: the run's canonical history, shaped like the Responses API.

They are the project's own small pydantic types, not SDK objects, so a run can be saved
as plain JSON and resumed with any provider.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

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

    type: Literal["provider"] = "provider"
    provider: str
    data: dict[str, Any]


Item = Annotated[Union[Message, FunctionCall, FunctionCallOutput, ProviderItem], Field(discriminator="type")]
ITEMS = TypeAdapter(list[Item])


def user(text: str) -> Message:
    return Message(role="user", content=text)


def assistant(text: str) -> Message:
    return Message(role="assistant", content=text)
