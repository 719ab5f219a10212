"""Scored rows for tests, written one row at a time: :func:`row` takes what one row
holds, :func:`table` makes the library's one form of scored rows of a list of them."""
from __future__ import annotations

from formats.scored import ScoredTable, empty


def row(item, model, group, kind, logp_correct, logp_wrong, oov=False, testset="", method="target",
        pieces_differ=False) -> dict:
    """One (item, model) row's fields."""
    return dict(item=item, model=model, group=group, kind=kind, logp_correct=logp_correct,
                logp_wrong=logp_wrong, oov=oov, testset=testset, method=method, pieces_differ=pieces_differ)


def table(rows) -> ScoredTable:
    """A :class:`ScoredTable` of :func:`row` dicts, in order."""
    rows = list(rows)
    if not rows:
        return empty()
    cols = {k: [r[k] for r in rows] for k in rows[0] if k != "item"}
    return ScoredTable.of_items([r["item"] for r in rows], **cols)
