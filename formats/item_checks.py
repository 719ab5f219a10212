"""What an item of ``items.tsv`` must be to mean what it claims (:func:`item_problem`).

:func:`formats.items.read_items` asks this of every row, so that a row that is not a
test item (a target that is not in the sentence, a "wrong" form equal to the correct
one, a direction or POS column out of step) is an error naming FILE:LINE before any
command scores, perturbs, varies or exports it, instead of a silent result.
"""
from __future__ import annotations

#: L: the head is the target; R: the head is the cue; "_" or empty: no direction
#: (minimal pairs read from BLiMP and MultiBLiMP)
DIRECTIONS = ("L", "R", "_", "")


def item_problem(item) -> str | None:
    """Why ``item`` (a :class:`formats.items.Item`, which imports this module: so it is
    not imported here) is not a usable test item, or None when it is."""
    n = len(item.tokens)
    if not 0 <= item.target_index < n:
        return f"target_index {item.target_index} is outside the sentence of {n} tokens"
    if not 0 <= item.cue_index < n:
        return f"cue_index {item.cue_index} is outside the sentence of {n} tokens"
    if item.tokens[item.target_index] != item.correct:
        return (f"the correct form {item.correct!r} is not the token at target_index "
                f"{item.target_index} ({item.tokens[item.target_index]!r})")
    if not item.wrong or item.wrong == item.correct:
        return f"the wrong form {item.wrong!r} is not an alternative to the correct form {item.correct!r}"
    if item.direction not in DIRECTIONS:
        return f"direction {item.direction!r} is not one of L, R (or _ for none)"
    if len(item.pos) != n or len(item.feats) != n:
        return (f"{n} tokens but {len(item.pos)} POS tags and {len(item.feats)} feature sets "
                "(the columns are out of step)")
    if item.variant < 0 or item.attractors < 0:
        return "a negative variant or attractor count"
    if item.scoring not in ("", "target", "sentence"):
        return f"scoring {item.scoring!r} is not one of target, sentence"
    if item.relation and item.target_index < item.cue_index and item.scoring != "sentence":
        # the prefix before the target does not hold its cue: only whole sentences decide
        return (f"the target (index {item.target_index}) precedes its cue (index {item.cue_index}) "
                f"but scoring is {item.scoring or 'target'!r}, not 'sentence'")
    return None
