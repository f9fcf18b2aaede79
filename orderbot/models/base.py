"""What the providers share beside the protocol they implement (orderbot.loop.model, the
model as the loop calls it): the output-token cap, a server's name made safe, and arguments
as they may go back in the history."""

from __future__ import annotations

import json

# A token is about four characters of English (Chinese runs closer to one or two), so this
# many output tokens fill about the response-size cap: the server stops generating near
# where orderbot would refuse the response anyway.
CHARS_PER_TOKEN = 4


def output_token_cap(settings) -> int:
    """The output-token cap sent with every request (max_output_tokens / max_tokens):
    ORDERBOT_MAX_OUTPUT_TOKENS when set, else derived from the response-size limit."""
    if settings.max_output_tokens is not None:
        return settings.max_output_tokens
    return max(256, settings.max_response_chars // CHARS_PER_TOKEN)


def server_name(value: object) -> str | None:
    """A name the server gave (its model, its fingerprint), kept only as short printable
    text: it is shown by `runs show` and nothing from a server reaches the terminal raw."""
    if not isinstance(value, str):
        return None
    text = "".join(ch for ch in value[:200] if ch.isprintable()).strip()
    return text or None


PLACEHOLDER_ARGUMENTS = "{}"


def replayable(arguments: str) -> str:
    """Arguments as they may go back to a provider in the history: a JSON object's text,
    or `{}` when the model wrote something else. Servers such as llama.cpp refuse a whole
    request whose history holds unparseable arguments; the original text stays in the run
    record, and the model still gets the `invalid_json` result for that call."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return PLACEHOLDER_ARGUMENTS
    return arguments if isinstance(parsed, dict) else PLACEHOLDER_ARGUMENTS
