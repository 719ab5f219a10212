"""Language models and corpora. Knows nothing about agreement: every backend
answers "log-probability of these words after this prefix" (``lm.base.Scorer``)
and one loader (``lm.load.load_model``) reads any model directory."""
