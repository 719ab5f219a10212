"""Whole-sentence scoring for :class:`lm.neural.scorer.NeuralScorer` (``--method sentence``,
``--surprisal``): natural-log P(word | <eos>, words before) for every word of many
sentences, in the scorer's packed/padded batches.

Work saved: a position's output depends only on the tokens up to it, so a context
shared by several sentences (a minimal pair's common prefix, nonce variants' shared
starts) is read out of the network and normalised once. Every remaining row costs a
full softmax over the vocabulary (the normaliser), which is what makes this method
far costlier than the target method (one row per item).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch


class SentenceScoring:
    """Mixin for a scorer with ``_hidden_at``, ``_word_id``, ``subword``, ``eos_id``,
    ``device``, ``_W``/``_b`` (the output layer) and ``logit_rows``."""

    def word_logprobs(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """Per word, natural-log P(word | <eos>, words before): one pass per sentence,
        batched and packed like :meth:`logprob` (so a batch never changes a score).

        Subword models: a word's score is the sum of its pieces' (no word-end factor:
        the pieces of the whole sentence are scored, so per-word scores add up to
        the sentence's log-probability, lm-evaluation-harness's convention). The state
        is always fresh here (``carry_state`` applies to :meth:`logprob` only)."""
        out = [np.zeros(0) for _ in sentences]
        seqs, wanted, targets, owners, lengths = [], [], [], [], []
        # A position's output depends only on the tokens up to it, so a context shared by
        # several sentences (the prefix of a minimal pair's two sentences) is read out and
        # normalised once: contexts are numbered as a trie, key (parent context, token).
        contexts: dict[tuple[int, int], int] = {}
        rows: list[int] = []
        for i, words in enumerate(sentences):
            pieces = [list(self.subword.word_ids(w)) if self.subword is not None
                      else [self._word_id(w)] for w in words]
            ids = [p for ps in pieces for p in ps]
            if not ids:
                continue
            seq, new, parent = [self.eos_id] + ids, [], -1
            for t in range(len(ids)):
                key = (parent, seq[t])
                if key not in contexts:
                    contexts[key] = len(contexts)
                    new.append(t)
                parent = contexts[key]
                rows.append(parent)
            if new:
                seqs.append(seq)
                wanted.append(new)
            targets += ids
            owners.append(i)
            lengths.append([len(ps) for ps in pieces])
        if not owners:
            return out
        with torch.inference_mode():
            h = self._hidden_at(seqs, wanted)                       # one row per context
            flat = self._row_logprob(h, torch.tensor(rows, device=self.device),
                                     torch.tensor(targets, device=self.device))
            flat = flat.double().cpu().numpy()
        start = 0
        for i, counts in zip(owners, lengths):
            n = sum(counts)
            ends = np.cumsum([0] + counts)
            piece = flat[start:start + n]
            out[i] = np.array([piece[a:b].sum() for a, b in zip(ends[:-1], ends[1:])])
            start += n
        return out

    def _row_logprob(self, h: torch.Tensor, rows: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """log P(ids[j] | h[rows[j]]) for every request j; each row of ``h`` is decoded and
        normalised once, however many requests read it."""
        out = torch.empty(ids.shape[0], device=self.device, dtype=torch.float32)
        for s in range(0, h.shape[0], self.logit_rows):
            logits = torch.addmm(self._b, h[s:s + self.logit_rows], self._W.t())   # (r, V)
            norm = torch.logsumexp(logits.float(), dim=1)
            sel = ((rows >= s) & (rows < s + self.logit_rows)).nonzero().squeeze(1)
            local = rows[sel] - s
            out[sel] = logits[local, ids[sel]].float() - norm[local]
        return out

