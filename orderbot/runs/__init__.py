"""Run records: their format and bounds (record), the on-disk store and its key (store), the
recorder that writes them (recorder), the list cache (index) and resume checks (resume). Replay
runs a record again, so it sits a floor up, with the runner (orderbot.runner.replay)."""
