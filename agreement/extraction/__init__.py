"""Extraction: treebank sentences -> agreement items (mining the arcs, choosing the
target forms) and the ``extract``/``export`` output directories."""
