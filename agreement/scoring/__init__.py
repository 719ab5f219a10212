"""Scoring: models x test sets -> one typed :class:`~agreement.scoring.score.Scoring` record
(scored rows by the target and sentence methods, spans, SyntaxGym prediction outcomes,
surprisal), in this process or sharded over executors (Ray), and the learning-curve points
of model series. Nothing here imports :mod:`agreement.reporting`, which renders the record."""
