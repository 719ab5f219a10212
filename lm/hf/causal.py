"""Causal Hugging Face language models (GPT-2, Llama, GGUF ...) as a :class:`lm.base.Scorer`.

Conventions (also in :meth:`HFCausalScorer.conventions`):

* What the model reads: the scorer's convention (:mod:`lm.pieces`; default ``agree``:
  the model's own beginning-of-text token, then the text as written, tokenized once).
  BOS is the tokenizer's ``bos_token_id``, else its ``eos_token_id`` (which one is
  stated); it is prepended here, never by the tokenizer (so never twice).
* Word values come from the pieces each word owns (character offsets).
* Target method::

      P(word | prefix) = prod_j P(piece_j | BOS, prefix, piece_<j) * P(word end | ..., word)

  where the text read ends with the candidate (the prefix as written, then the
  candidate). The word-end factor is the probability mass, after the word's last
  piece, of the tokens that cannot continue the word: tokens starting with the
  tokenizer's space marker (``Ġ``/``▁``), special/end tokens and tokens starting
  with an ASCII punctuation mark (``.``, ``'s``), which end a word in written text (convention
  ``words``: only the first two, as before). The Pimentel & Meister denominator
  P(word start | prefix) is the same for both candidates and cancels. Tokenizers
  without a space marker: WordPiece ``##`` continuations are the non-starts; with
  neither, the factor is 1.
* Sentence method (:meth:`word_logprobs`): the sum of every scored piece's log-prob,
  no word-end factor, no end-of-sentence token, fp32 (lm-evaluation-harness ``acc``).

Speed (:mod:`lm.hf.forward`): shared openings read once, length-sorted batches,
the output layer only where a token is scored, logit minus logsumexp in fp32.
"""
from __future__ import annotations

import string
from typing import Sequence

import numpy as np
import torch

from lm.base import TargetQuery
from lm.errors import FieldError, LMError
from lm.hf.base import HFBase
from lm.hf.forward import CausalRunner, Request
from lm.openings import distinct_sequences
from lm.pieces import spaces_of, word_sums

SPACE_MARKERS = ("Ġ", "▁", "Ċ", "ĉ")


#: marks that end a word in written text; ASCII only: a byte-level vocabulary spells
#: the bytes of other characters with Latin-1 stand-ins (``¢``, ``»``) that are no marks
PUNCTUATION = frozenset(string.punctuation)


def sentence_start(tokenizer, name: str) -> tuple[int, str]:
    """(the id a sentence is scored after, where it comes from): the tokenizer's BOS,
    else its EOS; :class:`LMError` when it has neither."""
    if tokenizer.bos_token_id is not None:
        return tokenizer.bos_token_id, "bos_token"
    if tokenizer.eos_token_id is not None:
        return tokenizer.eos_token_id, "eos_token (no bos_token)"
    raise LMError(f"{name}: the tokenizer has neither a bos nor an eos token to start a sentence with")


def word_start_mask(tokenizer, vocab_size: int, punctuation: bool = True) -> tuple[torch.Tensor, str]:
    """(bool (V,), description): which token ids cannot continue a word."""
    n = min(len(tokenizer), vocab_size)
    tokens = tokenizer.convert_ids_to_tokens(list(range(n)))
    tokens = [t if isinstance(t, str) else "" for t in tokens]
    special = set(tokenizer.all_special_ids)
    mask = torch.zeros(vocab_size, dtype=torch.bool)
    punct = " or punctuation" if punctuation else ""
    if any(t.startswith(SPACE_MARKERS[:2]) for t in tokens):
        rule = f"tokens starting with the space marker (Ġ/▁){punct}, or special/end tokens"
        starts = [t.startswith(SPACE_MARKERS) or (punctuation and t[:1] in PUNCTUATION)
                  for t in tokens]
    elif any(t.startswith("##") for t in tokens):
        rule = "tokens not starting with ## (WordPiece), or special/end tokens"
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
        self.bos_id, self.bos_from = sentence_start(tokenizer, self.name)
        self.prepend = self.bos_id
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.bos_id
        head = self.model.get_output_embeddings()
        self.max_positions = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
        self.runner = CausalRunner(self.model.base_model, head, device=self.device, pad_id=self.pad_id,
                                   batch_size=self.batch_size, max_positions=self.max_positions,
                                   fp32_head=self.model.dtype != torch.float32, config=self.model.config,
                                   threads=self.threads)
        mask, self.start_rule = word_start_mask(tokenizer, head.weight.shape[0],
                                                punctuation=self.convention != "words")
        self.start_mask = mask.to(self.device)
        self.example: dict | None = None
        self.sentences_asked = self.sentences_decoded = 0   # sentence method: distinct ones read

    def _note(self, enc) -> None:
        """Keep the first sentence read, as fed, for the manifest's record."""
        if self.example is None and enc is not None:
            self.example = {"text": enc.text, "ids": list(enc.ids),
                            "pieces": [str(p) for p in self.tok.convert_ids_to_tokens(list(enc.ids))]}

    # ---- target method -------------------------------------------------------
    def score_targets(self, queries: Sequence[TargetQuery]) -> np.ndarray:
        if self.convention == "minicons":
            raise FieldError("{convention} minicons scores whole sentences only; use {method} sentence")
        k = len(queries[0].candidates) if queries else 0
        out = np.full((len(queries), k), np.nan)
        reqs, where = [], []
        for qi, q in enumerate(queries):
            if len(q.candidates) != k:
                raise LMError("every query needs the same number of candidate words")
            flags = spaces_of(q.words, q.space_after)[:q.index + 1]
            for j, cand in enumerate(q.candidates):
                enc = self.try_encoded(tuple(q.words[:q.index]) + (cand,), flags)
                if enc is None:
                    continue
                self._note(enc)
                first = next((p for p, w in enumerate(enc.owner) if w == q.index), None)
                if first is None:
                    self.skipped_unencodable += 1
                    continue
                reqs.append(Request(enc.ids, first, word_end=True))
                where.append((qi, j))
        with self.torch_threads():
            lp, we = self.runner.run(reqs, self.start_mask)
        for (qi, j), x, e in zip(where, lp, we):
            out[qi, j] = float(np.sum(x)) + float(e)
        return out

    def logprob(self, prefixes: Sequence[Sequence[str]], targets: Sequence[Sequence[str]]) -> np.ndarray:
        if any(len(t) != len(targets[0]) for t in targets):
            raise LMError("every prefix needs the same number of candidate words")
        return self.score_targets([TargetQuery(tuple(p) + (t[0],), len(p), tuple(t))
                                   for p, t in zip(prefixes, targets)])

    # ---- sentence method -----------------------------------------------------
    def word_logprobs(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """Per sentence, each word's log-prob: the sum of the scored pieces it owns
        (NaN for a sentence skipped as too long or unencodable)."""
        encs = [self.try_encoded(s) for s in sentences]
        live = [i for i, e in enumerate(encs) if e is not None]
        for i in live[:1]:
            self._note(encs[i])
        # a sentence several items share is read once (the same ids, the same first)
        distinct, where = distinct_sequences([(encs[i].first, *encs[i].ids) for i in live])
        self.sentences_asked += len(live)
        self.sentences_decoded += len(distinct)
        with self.torch_threads():
            lp, _ = self.runner.run([Request(tuple(d[1:]), d[0]) for d in distinct])
        out = [np.full(len(s), np.nan) for s in sentences]
        for i, k in zip(live, where):
            out[i] = word_sums(encs[i], lp[k], len(sentences[i]))
        return out

    @property
    def skipped(self) -> int:
        return self.runner.skipped

    def conventions(self) -> dict:
        out = super().conventions()
        out.update({"context": "prefix (causal)",
                    "bos": f"{self.tok.convert_ids_to_tokens(self.bos_id)!s} "
                           f"(the tokenizer's {self.bos_from}), prepended once"
                           if self.convention != "minicons" else "none of ours (the tokenizer's own "
                           "special tokens, if any)",
                    "word_end": f"x P(next token cannot continue the word): {self.start_rule}; the "
                                "P(word start | prefix) denominator cancels, not computed",
                    "sentence": "sum of the scored pieces, no word-end factor, no end token",
                    "skipped_over_context": self.runner.skipped,
                    "max_positions": self.max_positions})
        if self.runner.lanes > 1:
            out["threads"] = (f"{self.threads}: {self.runner.lanes} lanes (threads reading their own "
                              f"batches) of {self.runner.lane_threads} torch thread(s)")
        if self.example is not None:
            out["example"] = self.example
        return out

