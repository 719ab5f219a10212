"""Reporting: what scoring produced (:class:`agreement.scoring.score.Scoring`, scored rows) ->
results (accuracies, intervals, human comparisons, paired tests, robustness, learning
curves) and their renderings (summary.json/.md, PNG plots, the demo's report,
``analyze``'s sections and its verb)."""
