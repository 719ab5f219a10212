"""Scoring: models x test sets -> scored rows (target and sentence methods, spans,
SyntaxGym predictions, surprisal), in this process or sharded over executors (Ray),
and the learning-curve points of model series."""
