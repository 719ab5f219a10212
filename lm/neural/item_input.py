"""An agreement item as agree's own models read it (:class:`lm.open.ItemInput`), shared
by the opened LSTM (:mod:`lm.neural.open_lstm`) and transformer
(:mod:`lm.neural.open_transformer`): ``<eos>``, then the words through the target."""
from __future__ import annotations

from lm.base import TargetQuery
from lm.open import ItemInput, single_piece_input


def neural_input(scorer, query: TargetQuery) -> ItemInput | str:
    """An item as agree's LSTM or transformer reads it: ``<eos>``, then the words through
    the target (word ids, or sentencepiece pieces whose forms must be one piece each)."""
    t = query.index
    words = list(query.words[:t]) + [query.candidates[0]]
    if scorer.subword is not None:
        pieces = [list(scorer.subword.word_ids(w)) for w in words]
        owner = [-1] + [w for w, p in enumerate(pieces) for _ in p]
        ids = [scorer.eos_id] + [i for p in pieces for i in p]
        return single_piece_input(ids, owner, t, list(scorer.subword.word_ids(query.candidates[1])))
    if not (scorer.in_vocab(query.candidates[0]) and scorer.in_vocab(query.candidates[1])):
        return "a form outside the model's vocabulary"
    ids = scorer.sentence_ids(words)
    return ItemInput(tuple(ids), tuple(range(1, t + 2)), t, ids[-1], scorer.word_id(query.candidates[1]))
