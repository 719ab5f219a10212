"""Language models and corpora. Knows nothing about agreement: every backend
answers "log-probability of these words after this prefix" (``lm.base.Scorer``),
and one entry point (``lm.load.load_model``) loads any model spec through the backends'
records (``lm.backends.Backend``, listed in ``lm.load.BACKENDS``). One folder per backend (``neural/``, ``hf/``, ``gguf/``,
``kenlm/``; the unigram baseline is ``unigram.py``), corpora in ``corpus/``, training
in ``training/``."""
