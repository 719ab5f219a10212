"""Causal Hugging Face language models (GPT-2, Llama, GGUF ...) as a :class:`lm.base.Scorer`.

Conventions (also in :meth:`HFCausalScorer.conventions`):

* BOS: every sentence is read after the model's own beginning-of-text token,
  the tokenizer's ``bos_token_id``, else its ``eos_token_id`` (which one is
  stated); it is prepended here, never by the tokenizer (so never twice).
* Target method::

      P(word | prefix) = prod_j P(piece_j | BOS, prefix, piece_<j) * P(word end | ..., word)

  the word-end factor is the probability mass of the "word-start" tokens (token
  string starting with the tokenizer's space marker ``Ġ``/``▁``, or a special /
  end token) at the position after the word's last piece: the same factor as
  our sentencepiece transformer (:mod:`lm.neural`). The Pimentel & Meister
  denominator P(word start | prefix) is the same for both candidates and cancels
  in the comparison, so it is not computed. Tokenizers without a space marker:
  WordPiece-style ``##`` continuations are the non-starts; with neither, every
  token starts a word and the factor is 1.
* Sentence method (:meth:`word_logprobs`): the sum of every piece's log-prob
  after BOS, no word-end factor, no end-of-sentence token, fp32 log-softmax
  (lm-evaluation-harness ``acc``); a word's value is the sum of its pieces.

Efficiency: the two candidates share their prefix. Prefixes are sorted by length
and read in right-padded batches (attention mask) of ``batch_size`` sequences
once; the cache is repeated once per candidate and all candidates' pieces are
read in one more forward pass from it (explicit position ids, the padded prefix
slots masked). Logits are computed only at the
positions needed (the final hidden state times the output embedding), a block
of rows at a time, and log-softmax is in fp32.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from lm.errors import LMError
from lm.hf_base import HFBase

#: rows of the (rows, V) logits block computed at once
LOGIT_ROWS = 256
SPACE_MARKERS = ("Ġ", "▁")


def word_start_mask(tokenizer, vocab_size: int) -> tuple[torch.Tensor, str]:
    """(bool (V,), description): which token ids start a new word."""
    n = min(len(tokenizer), vocab_size)
    tokens = tokenizer.convert_ids_to_tokens(list(range(n)))
    tokens = [t if isinstance(t, str) else "" for t in tokens]
    special = set(tokenizer.all_special_ids)
    mask = torch.zeros(vocab_size, dtype=torch.bool)
    if any(t.startswith(SPACE_MARKERS) for t in tokens):
        rule = "tokens starting with the space marker (Ġ/▁) or special/end tokens"
        starts = [t.startswith(SPACE_MARKERS) for t in tokens]
    elif any(t.startswith("##") for t in tokens):
        rule = "tokens not starting with ## (WordPiece) or special/end tokens"
        starts = [not t.startswith("##") for t in tokens]
    else:
        return torch.ones(vocab_size, dtype=torch.bool), "none (no word-boundary marker: factor 1)"
    mask[:n] = torch.tensor(starts, dtype=torch.bool)
    for i in special:
        if 0 <= i < vocab_size:
            mask[i] = True
    return mask, rule


class HFCausalScorer(HFBase):
    """A transformers causal LM; ``batch_size`` = sequences per forward pass."""

    context = "prefix"

    def __init__(self, model, tokenizer, **kw):
        super().__init__(model, tokenizer, **kw)
        cfg = self.model.config
        if getattr(cfg, "final_logit_softcapping", None) or getattr(cfg, "logit_scale", None):
            raise LMError(f"{self.name}: models with logit soft-capping or scaling are not "
                          "supported (logits are the output embedding of the last hidden state)")
        if tokenizer.bos_token_id is not None:
            self.bos_id, self.bos_from = tokenizer.bos_token_id, "bos_token"
        elif tokenizer.eos_token_id is not None:
            self.bos_id, self.bos_from = tokenizer.eos_token_id, "eos_token (no bos_token)"
        else:
            raise LMError(f"{self.name}: the tokenizer has neither a bos nor an eos token to "
                          "start a sentence with")
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.bos_id
        self.body = self.model.base_model
        self.head = self.model.get_output_embeddings()
        mask, self.start_rule = word_start_mask(tokenizer, self.head.weight.shape[0])
        self.start_mask = mask.to(self.device)

    # ---- output layer --------------------------------------------------------
    def _logsoftmax_rows(self, h: torch.Tensor):
        """Yield (start, fp32 log-softmax of the logits) for blocks of (R, H) rows."""
        for s in range(0, h.shape[0], LOGIT_ROWS):
            yield s, torch.log_softmax(self.head(h[s:s + LOGIT_ROWS]).float(), dim=-1)

    def _piece_logprob(self, h: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        out = torch.empty(h.shape[0], dtype=torch.float32, device=self.device)
        for s, lp in self._logsoftmax_rows(h):
            out[s:s + lp.shape[0]] = lp.gather(1, ids[s:s + lp.shape[0], None])[:, 0]
        return out

    def _word_end_logprob(self, h: torch.Tensor) -> torch.Tensor:
        out = torch.empty(h.shape[0], dtype=torch.float32, device=self.device)
        for s, lp in self._logsoftmax_rows(h):
            out[s:s + lp.shape[0]] = torch.logsumexp(lp[:, self.start_mask], dim=1)
        return out

    def _pad(self, seqs: Sequence[Sequence[int]]):
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for r, s in enumerate(seqs):
            ids[r, :len(s)] = torch.tensor(s, dtype=torch.long)
            mask[r, :len(s)] = 1
        return ids.to(self.device), mask.to(self.device)

    # ---- target method -------------------------------------------------------
    def logprob(self, prefixes: Sequence[Sequence[str]],
                targets: Sequence[Sequence[str]]) -> np.ndarray:
        n = len(prefixes)
        k = len(targets[0]) if n else 0
        out = np.zeros((n, k), dtype=np.float64)
        if n == 0:
            return out
        pre = [[self.bos_id] + [i for w in self.sentence_ids(p) for i in w] for p in prefixes]
        cands = [[self.word_ids(w, first=len(p) == 0) for w in ts]
                 for p, ts in zip(prefixes, targets)]
        if any(len(ts) != k for ts in targets):
            raise LMError("every prefix needs the same number of candidate words")
        order = sorted(range(n), key=lambda i: (-len(pre[i]), i))
        with torch.inference_mode():
            for s in range(0, n, self.batch_size):
                rows = order[s:s + self.batch_size]
                out[rows] = self._score_batch([pre[i] for i in rows], [cands[i] for i in rows])
        return out

    def _score_batch(self, prefixes: list[list[int]], cands: list[list[tuple[int, ...]]]):
        """One forward over the B prefixes, then one over all B*k candidates, each row
        reading its prefix from the cache (repeated k times, row b*k+j = prefix b)."""
        n, k = len(prefixes), len(cands[0])
        ids, mask = self._pad(prefixes)
        res = self.body(input_ids=ids, attention_mask=mask, use_cache=True)
        cache, lens = res.past_key_values, mask.sum(1)
        last = res.last_hidden_state[torch.arange(n, device=self.device), lens - 1]
        if k > 1:
            cache.batch_repeat_interleave(k)
            mask, lens, last = (t.repeat_interleave(k, dim=0) for t in (mask, lens, last))
        pieces = [c for row in cands for c in row]
        cid, cmask = self._pad(pieces)
        pos = lens[:, None] + torch.arange(cid.shape[1], device=self.device)[None, :]
        h = self.body(input_ids=cid, attention_mask=torch.cat([mask, cmask], 1),
                      position_ids=pos, past_key_values=cache, use_cache=True).last_hidden_state
        m = cmask.sum(1)
        rng = range(len(pieces))
        # piece 0 from the prefix's last state, piece t from the candidate's state t-1
        rows = [last] + [h[r, :m[r] - 1] for r in rng]
        targets = [cid[:, 0]] + [cid[r, 1:m[r]] for r in rng]
        lp = self._piece_logprob(torch.cat(rows), torch.cat(targets))
        owner = torch.cat([torch.arange(len(pieces), device=self.device)]
                          + [torch.full((int(m[r]) - 1,), r, device=self.device) for r in rng])
        total = torch.zeros(len(pieces), device=self.device).index_add_(0, owner, lp)
        total += self._word_end_logprob(h[torch.arange(len(pieces), device=self.device), m - 1])
        return total.double().cpu().numpy().reshape(n, k)

    # ---- sentence method -----------------------------------------------------
    def word_logprobs(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """Per sentence, each word's log-prob: the sum of its pieces' log-probs after
        BOS (no word-end factor); one forward pass per sentence, batched."""
        pieces = [self.sentence_ids(list(s)) for s in sentences]
        seqs = [[self.bos_id] + [i for w in p for i in w] for p in pieces]
        order = sorted(range(len(seqs)), key=lambda i: (-len(seqs[i]), i))
        out: list[np.ndarray] = [np.zeros(0)] * len(seqs)
        with torch.inference_mode():
            for s in range(0, len(order), self.batch_size):
                rows = order[s:s + self.batch_size]
                ids, mask = self._pad([seqs[i] for i in rows])
                h = self.body(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state
                for r, i in enumerate(rows):
                    t = len(seqs[i])
                    lp = self._piece_logprob(h[r, :t - 1], ids[r, 1:t]).double().cpu().numpy()
                    owner = np.repeat(np.arange(len(pieces[i])), [len(w) for w in pieces[i]])
                    out[i] = np.bincount(owner, weights=lp, minlength=len(pieces[i])) \
                        if len(owner) else np.zeros(0)
        return out

    def conventions(self) -> dict:
        out = super().conventions()
        out.update({"context": "prefix (causal)",
                    "bos": f"{self.tok.convert_ids_to_tokens(self.bos_id)!s} "
                           f"(the tokenizer's {self.bos_from}), prepended once",
                    "word_end": f"x P(next token starts a word): {self.start_rule}; the "
                                "P(word start | prefix) denominator cancels, not computed",
                    "sentence": "sum of pieces after BOS, no word-end factor, no end token"})
        return out
