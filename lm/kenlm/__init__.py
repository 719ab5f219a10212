"""The 5-gram baseline on KenLM: the scorer and trainer (lmplz + the kenlm module), and
the build of KenLM's tools (``agree setup kenlm``)."""
