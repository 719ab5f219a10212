"""CoNLL-U reading and paradigm tables. Imports nothing else of ours."""
