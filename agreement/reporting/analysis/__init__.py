"""Analyses beyond accuracy over ``agree score`` outputs (``agree analyze``).

- :mod:`.rows`          reads scored ``items.tsv`` files into one column table
- :mod:`.ceiling`       graded comparison with human raters and the split-half noise ceiling
- :mod:`.mixed`         logistic mixed-effects model of correctness (statsmodels, variational Bayes)
- :mod:`.systematicity` EW/MW accuracy over target-lemma swaps (Newman et al. 2021)
- :mod:`.challenge`     challenge subsets (items the baselines, or a reference model, get wrong)
- :mod:`.paired`        item-clustered bootstrap comparison of two models
- :mod:`.run`           runs them all into one results dict; :mod:`.render` writes it out
"""
