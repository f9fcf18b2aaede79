"""The bounded loop: the engine, the values of a run, its budget and limits, conversation items,
tool declarations, dispatch, result envelopes and the sanitiser. No I/O, no Rich: imports only
orderbot.errors, orderbot.text, orderbot.i18n and orderbot.models.base."""
