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
around the pieces of the text as written (convention ``agree``; ``words``: words
joined by single spaces, each encoded alone), attributed to words by their
character offsets (:mod:`lm.pieces`); for the target method the text holds the
candidate at the target. Every (word, piece) needs one forward pass; they are
batched by length (right padding, attention mask), ``batch_size`` sequences per
pass; fp32 log-softmax.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from lm.errors import FieldError, LMError
from lm.hf.base import HFBase


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
        if self.convention not in ("agree", "words"):
            raise FieldError(f"{{convention}} {self.convention} is a causal model's convention; a "
                             "masked model reads the text as written (agree) or the words (words)")
        if tokenizer.mask_token_id is None:
            raise LMError(f"{self.name}: the tokenizer has no mask token")
        self.mask_id = tokenizer.mask_token_id
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.frame = special_frame(tokenizer)

    def _framed(self, enc) -> tuple[list[int], list[tuple[int, list[int]]]]:
        """(ids in the special-token frame, per word: (its first position, its piece ids))."""
        lead = len(self.frame[0])
        ids = list(self.frame[0]) + list(enc.ids) + list(self.frame[1])
        words: dict[int, list[int]] = {}
        for p, w in enumerate(enc.owner):
            if w >= 0:
                words.setdefault(w, []).append(p + lead)
        return ids, [(pos[0], [ids[p] for p in pos]) for _, pos in sorted(words.items())]

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
        skipped = set()
        for qi, q in enumerate(queries):
            if len(q.candidates) != k:
                raise LMError("every query needs the same number of candidate words")
            for j, cand in enumerate(q.candidates):
                words = list(q.words)
                words[q.index] = cand
                enc = self.try_encoded(words, q.space_after)
                ids, word_list = self._framed(enc) if enc is not None else ([], [])
                if len(word_list) != len(words):   # unencodable, or a word without a piece
                    skipped.add(qi * k + j)
                    continue
                start, wids = word_list[q.index]
                self._jobs_for_word(ids, start, wids, qi * k + j, jobs)
        with self.torch_threads():
            out = self._run(jobs, len(queries) * k)
        out[sorted(skipped)] = np.nan
        return out.reshape(len(queries), k)

    def logprob(self, prefixes, targets) -> np.ndarray:
        raise LMError(f"{self.name} is a masked language model: it scores a target only with "
                      "the whole sentence in view (score_targets)")

    def word_logprobs(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """PLL-word-l2r of every word of every sentence (NaN for one that cannot be encoded)."""
        jobs: list = []
        sizes, owner, bad = [], 0, []
        for words in sentences:
            enc = self.try_encoded(words)
            word_list = self._framed(enc)[1] if enc is not None else []
            if enc is None or len(word_list) != len(words):
                bad.append(len(sizes))
                word_list = []
            else:
                ids = self._framed(enc)[0]
                for w, (start, wids) in enumerate(word_list):
                    self._jobs_for_word(ids, start, wids, owner + w, jobs)
            owner += len(words)
            sizes.append(len(words))
        with self.torch_threads():
            flat = self._run(jobs, owner)
        out = list(np.split(flat, np.cumsum(sizes)[:-1])) if sizes else []
        for i in bad:
            out[i] = np.full(sizes[i], np.nan)
        return out

    def conventions(self) -> dict:
        out = super().conventions()
        out.update({"context": "whole sentence, target masked (Goldberg 2019)",
                    "multi_piece": "PLL within_word_l2r (Kauf & Ivanova 2023): piece j scored "
                                   "with pieces j..end of its word masked",
                    "sentence": "sum of PLL-word-l2r over words",
                    "sentence_start": "the tokenizer's special-token frame"})
        return out
