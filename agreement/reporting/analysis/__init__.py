"""Analyses beyond accuracy over ``agree score`` outputs (``agree analyze``).

- :mod:`.rows`          reads scored ``items.tsv`` files into one column table
  (graded comparison with human raters and the noise ceiling: :mod:`agreement.reporting.humans`)
- :mod:`.mixed`         logistic mixed-effects model of correctness (statsmodels, variational Bayes)
- :mod:`.systematicity` EW/MW accuracy over target-lemma swaps (Newman et al. 2021)
- :mod:`.challenge`     challenge subsets (items the baselines, or a reference model, get wrong)
  (paired comparisons of two models: :mod:`agreement.reporting.paired`)
- :mod:`.run`           runs them all into one :class:`~.run.Analysis`; :mod:`.render` writes it out
"""
