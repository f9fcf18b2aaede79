"""The bounded loop: the engine, the values of a run, its budget and limits, conversation items,
tool declarations, dispatch, result envelopes, the sanitiser, and the model protocol it calls (model).
No I/O, no Rich: imports only orderbot.errors, orderbot.text and orderbot.i18n (the floors below it)."""
