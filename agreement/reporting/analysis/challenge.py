"""Challenge subsets (after AQuA's adversarial filtering): the rows that cheap
solutions get wrong, with every model's accuracy on them.

- ``baselines``: rows that every unigram model *and* every 5-gram model got wrong
  (neither word frequency nor local context solves them). A model counts as a
  unigram / 5-gram baseline when its group or name contains ``unigram`` /
  ``kn5`` (the scored file has no kind column; a label is the model directory's
  name by default, e.g. ``en-kn5``, or the GROUP of ``--model GROUP=DIR``; the
  paper .tab's frequency baseline is ``unigram[freq]``).
- ``wrong:<MODEL>``: rows a named reference model (``--challenge-model``) got wrong.

Rows are matched across models by (test set, item_id, variant, perturbation).
Swap rows (:mod:`.systematicity`) are left out: they are another experiment.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from formats.scored import ScoredTable
from treebanks.errors import literal
from agreement.errors import AgreeError
from agreement.reporting.stats import bootstrap_ci

BASELINE_NAMES = {"unigram": ("unigram",), "5-gram": ("kn5",)}


@dataclass(frozen=True)
class SubsetScore:
    """One model on one subset: rows of the subset it scored, accuracy and 95% bootstrap CI."""
    model: str
    n: int
    accuracy: float
    ci: tuple[float, float]


@dataclass(frozen=True)
class ChallengeSubset:
    """name, how it was chosen, its size (rows), and every model on it;
    ``skipped`` says why it could not be built (then ``scores`` is empty)."""
    name: str
    rule: str
    size: int
    scores: tuple[SubsetScore, ...] = ()
    skipped: str = ""


def baseline_models(table: ScoredTable) -> dict[str, list[str]]:
    """Baseline kind -> model names recognised as that baseline."""
    found: dict[str, list[str]] = {k: [] for k in BASELINE_NAMES}
    for m in table.models():
        group = str(table.group[np.argmax(table.model == m)])
        for kind, names in BASELINE_NAMES.items():
            if any(p in group.lower() or p in m.lower() for p in names):
                found[kind].append(m)
    return found


def _wrong_everywhere(table: ScoredTable, keys: np.ndarray, models: list[str]) -> set[str]:
    """Row keys that every one of ``models`` scored and got wrong."""
    out: set[str] | None = None
    for m in models:
        sel = table.model == m
        wrong = set(keys[sel & ~table.correct].tolist())
        out = wrong if out is None else out & wrong
    return out or set()


def _score(table: ScoredTable, keys: np.ndarray, subset: set[str], rng) -> tuple[SubsetScore, ...]:
    in_subset = np.fromiter((k in subset for k in keys.tolist()), bool, len(keys))
    scores = []
    for m in table.models():
        vals = table.correct[in_subset & (table.model == m)].astype(float)
        acc = float(vals.mean()) if vals.size else float("nan")
        scores.append(SubsetScore(m, int(vals.size), acc, bootstrap_ci(vals, rng)))
    return tuple(scores)


def challenge_subsets(table: ScoredTable, rng: np.random.Generator,
                      reference: tuple[str, ...] = ()) -> list[ChallengeSubset]:
    """The baseline subset and one subset per reference model (see the module doc)."""
    table = table.subset(table.condition != "swap")
    keys = table.row_keys()
    out = []
    found = baseline_models(table)
    rule = "wrong for every unigram and every 5-gram model"
    missing = [k for k, v in found.items() if not v]
    if missing:
        out.append(ChallengeSubset("baselines", rule, 0,
                                   skipped=f"no {' and no '.join(missing)} model among the scored models"))
    else:
        subset = _wrong_everywhere(table, keys, found["unigram"] + found["5-gram"])
        rule += f" ({', '.join(found['unigram'] + found['5-gram'])})"
        out.append(ChallengeSubset("baselines", rule, len(subset), _score(table, keys, subset, rng)))
    models = table.models()
    for ref in reference:
        if ref not in models:
            raise AgreeError(f"{{challenge_model}} {literal(ref)}: no such model among the scored "
                             f"models ({literal(', '.join(models))})", fields=True)
        subset = _wrong_everywhere(table, keys, [ref])
        out.append(ChallengeSubset(f"wrong:{ref}", f"wrong for {ref}", len(subset),
                                   _score(table, keys, subset, rng)))
    return out
