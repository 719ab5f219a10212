"""Masked Hugging Face language models (BERT, RoBERTa, XLM-R ...) as a :class:`lm.base.Scorer`.

Target method (Goldberg 2019): the whole sentence is in view with the target
position masked (``context = "sentence"``). A candidate of several pieces is
scored by the pseudo-log-likelihood variant ``within_word_l2r`` of Kauf & Ivanova
(2023): for piece j of the word, pieces j..end of that word are masked (the
earlier pieces of the word and the whole rest of the sentence are visible), and

    log P(word) = sum_j log P(piece_j | sentence, word pieces < j masked from j on)

A single-piece form is thus the plain Goldberg score. Forms whose piece counts
differ are scored all the same and counted in ``summary.md`` (they compare
products of different numbers of factors).

Sentence method (:meth:`HFMaskedScorer.word_logprobs`): PLL-word-l2r of every
word (the same rule, each word in turn); sentence log-prob = their sum.

The sequence is the tokenizer's own special-token frame
(what ``encode(add_special_tokens=True)`` adds: ``[CLS] ... [SEP]`` or ``<s> ... </s>``)
around the pieces (words joined by single spaces, as for causal models). Every
(word, piece) needs one forward pass; they are batched by length (right
padding, attention mask), ``batch_size`` sequences per pass; fp32 log-softmax.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from lm.errors import LMError
from lm.hf_base import HFBase


def special_frame(tokenizer) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after a text (``[CLS]``/``[SEP]``,
    ``<s>``/``</s>``): found by encoding a probe with and without them."""
    bare = tokenizer.encode("a", add_special_tokens=False)
    full = tokenizer.encode("a", add_special_tokens=True)
    for lead in range(len(full) - len(bare) + 1):
        if full[lead:lead + len(bare)] == bare:
            return list(full[:lead]), list(full[lead + len(bare):])
    raise LMError("cannot find how the tokenizer frames a sentence with special tokens")


class HFMaskedScorer(HFBase):
    """A transformers masked LM."""

    context = "sentence"

    def __init__(self, model, tokenizer, **kw):
        super().__init__(model, tokenizer, **kw)
        if tokenizer.mask_token_id is None:
            raise LMError(f"{self.name}: the tokenizer has no mask token")
        self.mask_id = tokenizer.mask_token_id
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.frame = special_frame(tokenizer)

    def _framed(self, pieces: Sequence[Sequence[int]]) -> tuple[list[int], list[int]]:
        """(ids with the special-token frame, start offset of each word)."""
        ids, starts = list(self.frame[0]), []
        for w in pieces:
            starts.append(len(ids))
            ids += w
        return ids + list(self.frame[1]), starts

    def _jobs_for_word(self, ids: list[int], start: int, word: Sequence[int], owner: int, jobs):
        """within_word_l2r: for piece j, mask pieces j..end of the word."""
        for j in range(len(word)):
            seq = list(ids)
            seq[start + j:start + len(word)] = [self.mask_id] * (len(word) - j)
            jobs.append((seq, start + j, word[j], owner))

    def _run(self, jobs, n_owners: int) -> np.ndarray:
        """Sum of log P(target id at pos | masked seq) per owner."""
        total = np.zeros(n_owners, dtype=np.float64)
        order = sorted(range(len(jobs)), key=lambda i: (-len(jobs[i][0]), i))
        with torch.inference_mode():
            for s in range(0, len(order), self.batch_size):
                batch = [jobs[i] for i in order[s:s + self.batch_size]]
                width = max(len(b[0]) for b in batch)
                ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for r, (seq, _, _, _) in enumerate(batch):
                    ids[r, :len(seq)] = torch.tensor(seq)
                    mask[r, :len(seq)] = 1
                logits = self.model(input_ids=ids.to(self.device),
                                    attention_mask=mask.to(self.device)).logits
                rows = torch.arange(len(batch), device=self.device)
                pos = torch.tensor([b[1] for b in batch], device=self.device)
                tgt = torch.tensor([b[2] for b in batch], device=self.device)
                lp = torch.log_softmax(logits[rows, pos].float(), dim=-1)[rows, tgt]
                np.add.at(total, [b[3] for b in batch], lp.double().cpu().numpy())
        return total

    def score_targets(self, queries) -> np.ndarray:
        if not queries:
            return np.zeros((0, 0))
        k = len(queries[0].candidates)
        jobs: list = []
        for qi, q in enumerate(queries):
            if len(q.candidates) != k:
                raise LMError("every query needs the same number of candidate words")
            for j, cand in enumerate(q.candidates):
                words = list(q.words)
                words[q.index] = cand
                ids, starts = self._framed(self.sentence_ids(words))
                self._jobs_for_word(ids, starts[q.index], self.word_ids(cand, q.index == 0),
                                    qi * k + j, jobs)
        return self._run(jobs, len(queries) * k).reshape(len(queries), k)

    def logprob(self, prefixes, targets) -> np.ndarray:
        raise LMError(f"{self.name} is a masked language model: it scores a target only with "
                      "the whole sentence in view (score_targets)")

    def word_logprobs(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """PLL-word-l2r of every word of every sentence."""
        jobs: list = []
        sizes, owner = [], 0
        for words in sentences:
            pieces = self.sentence_ids(list(words))
            ids, starts = self._framed(pieces)
            for w, start in zip(pieces, starts):
                self._jobs_for_word(ids, start, w, owner, jobs)
                owner += 1
            sizes.append(len(pieces))
        flat = self._run(jobs, owner)
        return list(np.split(flat, np.cumsum(sizes)[:-1])) if sizes else []

    def conventions(self) -> dict:
        out = super().conventions()
        out.update({"context": "whole sentence, target masked (Goldberg 2019)",
                    "multi_piece": "PLL within_word_l2r (Kauf & Ivanova 2023): piece j scored "
                                   "with pieces j..end of its word masked",
                    "sentence": "sum of PLL-word-l2r over words",
                    "sentence_start": "the tokenizer's special-token frame"})
        return out
