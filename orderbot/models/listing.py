"""What the configured server offers: `GET /v1/models` through the SDK's client, for
`orderbot models`. Imported only by that command, when a server is configured, so the
openai SDK may be imported here (through the clients' own module)."""

from __future__ import annotations

from itertools import islice

from orderbot.errors import ModelError
from orderbot.models._client import make_client
from orderbot.models._failures import Classifier

MAX_MODELS = 1000  # a server's list is outside data: a hostile one could send millions


def served_models(settings, provider: str) -> list[str]:
    """The ids of the models the server lists, sorted; ConfigError when the client cannot be
    made as configured, ModelError (one sentence, no key) when the server cannot be asked."""
    client = make_client(settings, provider)
    secret = settings.api_key.get_secret_value() if settings.api_key is not None else ""
    try:
        listed = islice(client.models.list(), MAX_MODELS)
        return sorted({str(model.id) for model in listed})
    except Exception as exc:  # noqa: BLE001 - whatever the SDK raised becomes one sentence
        raise ModelError(Classifier(provider, settings.base_url, (secret,))(exc).message) from None
