"""The files agree reads and writes, one owner (reader and writer) per format.

This layer sits between ``treebanks`` (the ground floor) and everything else:
``lm``, ``nonce`` and ``agreement`` import it; it imports none of them. See
``docs/architecture.md`` for the layers."""
