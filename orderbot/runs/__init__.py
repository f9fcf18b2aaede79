"""Run records: their format and bounds (record), the on-disk store and its key (store), the
recorder that writes them (recorder), the list cache (index), resume checks (resume) and replay."""
