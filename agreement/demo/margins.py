"""How far a demo run's models stand above chance, from its scored rows.

Neural training takes another float path on another CPU (kernels, thread count), so one
seed's LSTM is not the same network everywhere: what the demo can promise is a margin,
the lower end of a 95% Wilson interval well above 50%, on every float path. The tests
(``tests/test_demo.py``) assert it for one run; ``benchmarks/bench_demo.py`` tabulates it
over seeds, thread counts and torch's CPU kernels.
"""
from __future__ import annotations

from pathlib import Path

from agreement.reporting.results import Count
from formats.scored import read_scored

CHANCE = 50.0
#: condition -> what it counts: the originals, and the demo's headline figure (nonce
#: sentences with at least one attractor)
CONDITIONS = {"original": "original sentences", "nonce_attr": "nonce sentences, attractors >= 1"}


def counts(out_dir: str | Path, model: str = "lstm") -> dict[str, Count]:
    """``model``'s decidable outcomes in a demo directory (``score/items.tsv``), per
    :data:`CONDITIONS` (undecidable rows are counted apart, as the report does)."""
    t = read_scored(Path(out_dir) / "score" / "items.tsv")
    mine = t.model == model
    nonce = mine & (t.variant > 0)
    cells = {"original": mine & (t.variant == 0), "nonce_attr": nonce & (t.attractors >= 1)}
    return {name: Count(int((t.correct & rows & ~t.undecidable).sum()), int((rows & ~t.undecidable).sum()),
                        int((rows & t.undecidable).sum()))
            for name, rows in cells.items()}


def margin(count: Count) -> float | None:
    """Points by which the 95% interval's lower end lies above chance (negative: it does
    not; None: no decidable item)."""
    interval = count.interval()
    return None if interval is None else interval[0] - CHANCE
