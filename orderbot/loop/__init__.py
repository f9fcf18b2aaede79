"""The bounded loop: the engine, the values of a run, its budget and limits, conversation items,
tool declarations, dispatch, result envelopes, the sanitiser, and the model protocol it calls (model).
No I/O, no Rich, no words for a person: imports only orderbot.errors and orderbot.text (the floors below
it); what the model reads from orderbot itself is model_text's fixed English."""
