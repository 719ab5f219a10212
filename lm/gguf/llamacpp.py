"""A GGUF model run natively by llama.cpp (llama-cpp-python's low-level API).

llama.cpp computes with the quantized weights as they are stored, so a 4-bit
7B model needs about 4 GB instead of the 28 GB of fp32 weights transformers
makes of it; or, with ``dtype``, with a float16/float32 copy made at load
(:mod:`lm.gguf.float_copy`: for a small model faster on CPU, and nearer the weights'
own values). Conventions (the same as the transformers engine's, see
:meth:`LlamaCppScorer.conventions`):

* natural log; log-softmax over the full vocabulary in fp32, in numpy, from
  llama.cpp's fp32 logits;
* what is read is the scorer's convention (:mod:`lm.pieces`; default: the model's
  BOS token (``llama_vocab_bos``; EOS when the model has none), prepended once by
  us, then the text as written, tokenized once with ``add_special=False,
  parse_special=False``); the pieces' bytes give their character offsets (llama.cpp
  has no offsets API), and a word owns the pieces that start in it;
* target method: P(word | prefix) = product of its pieces' probabilities x
  P(the next token cannot continue the word | prefix, word); the word-end mass
  sums the tokens whose text starts with whitespace or (text as written) an ASCII
  punctuation mark, plus the end-of-generation tokens (a vocabulary mask made
  once). The Pimentel & Meister denominator P(word start | prefix) is the same for
  both candidates and cancels, so it is not computed;
* sentence method: the sum of all piece log-probabilities after BOS, no
  end-of-sentence symbol, no word-end factor; a word's log-prob is the sum of the
  pieces it owns, so word log-probs sum exactly to the sentence's.

Speed: a shared prefix is evaluated once. Groups of sequences (a target query's
candidates after their prefix; for the sentence method, sentences that open with the
same tokens, a BLiMP pair's two wherever they are: :func:`lm.openings.group_openings`)
are packed into rounds, one ``llama_decode`` call each, and a round goes in as a
prefix tree: a token that several of its sequences open with (BOS in all, a group's
opening, a first word other groups share) is one batch entry tagged with each of their
sequence ids (llama.cpp stores it once, as ``llama_memory_seq_cp`` would leave it),
and its logits row answers all of them (:func:`lm.gguf.llamacpp_decode.decode_round`).
With ``threads`` given on CPU, rounds are decoded in lanes (:mod:`lm.thread_lanes`), one
context each on the same model; the rounds are the same, and so are the scores.
A sequence (a sentence, or a prefix + candidate) longer than the context window
is skipped (NaN score) and counted in ``skipped`` (``skipped_over_context`` in
:meth:`LlamaCppScorer.conventions`); never a crash.

Batch invariance: by default (no ``batch_size`` given) every sequence is decoded alone, one
``llama_decode`` per sentence (or prefix + candidate) on a cleared cache, so its scores
depend on it alone: the same bits whatever else is in the call, the chunk, the shard or the
run, and a sentence that several items share is decoded once without changing anything
(:data:`INVARIANT`). With ``batch_size`` given, sequences go in together as a prefix tree,
which llama.cpp's CPU kernels for quantized weights compute on other paths at other batch
shapes (Gemma 3's sentence scores moved by up to 3.09 nats; a K-quant model's bits even
depend on where one sentence's decode is cut: docs/models.md, "A long run made cheap and
batch-invariant"). The tests hold the batched path to BATCH_DRIFT_NATS of one at a time
(tests/test_llamacpp.py) and the default to identical bits.
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from lm.base import Scorer, TargetQuery
from lm.errors import FieldError, LMError
from lm.gguf.float_copy import FTYPES, KV_F32, FloatCopy, check_dtype
from lm.gguf.header import read_gguf_info
from lm.gguf.llamacpp_decode import Group, Lane, decode_round, join_splits, plan_rounds
from lm.gguf.llamacpp_lib import LOG_ERRORS, capture_log, import_llama_cpp, word_start_mask
from lm.gguf.llamacpp_record import conventions_record
from lm.thread_lanes import lanes_for, side_by_side
from lm.openings import distinct_sequences, group_openings
from lm.pieces import DEFAULT, EncodingCache, check_convention, offsets_from_pieces, spaces_of, word_sums
from formats.digests import sha256_of

#: llama.cpp's limit on distinct sequences in one context (LLAMA_MAX_SEQ)
MAX_SEQ = 256
#: the default path decodes one sequence per call, alone (module docstring, "Batch
#: invariance"; docs/models.md): False makes 64 sequences per decode the default again
INVARIANT = True
#: sentences sharing an opening decoded together (sentence method): at most two --
#: on six sentences, six on one opening drifted 0.17 nats from one-sequence scoring,
#: pairs under 0.005
MAX_GROUP = 2


class LlamaCppScorer(EncodingCache, Scorer):
    """A GGUF file scored with llama.cpp; see the module docstring for conventions.

    batch_size    sequences per decode call; None (the default, with ``share_prefix`` not
                  given): one sequence per decode, nothing shared with another, so that a
                  sentence's scores depend on it alone (batch invariant, :data:`INVARIANT`);
                  given: that many (at most 256) as a prefix tree
    share_prefix  decode a token that several sequences open with once (each round a prefix
                  tree; default: True when ``batch_size`` is given)
    n_ctx         context window in tokens (capped at the model's training context); also
                  the tokens of one decode call, so the logits buffer stays n_ctx x vocab
    threads       CPU threads (default: the CPUs this process may use)
    device        ``cpu`` keeps every layer on the CPU; otherwise layers are offloaded
                  to a GPU when llama.cpp was built with one
    dtype         None: the weights as stored; ``float16``/``bfloat16``/``float32``: compute
                  with a copy in that type (:mod:`lm.gguf.float_copy`; float32 also keeps a
                  float32 KV cache, and is then exact)
    """

    kind = "gguf"
    context = "prefix"

    def __init__(self, path: str | os.PathLike, *, batch_size: int | None = None,
                 share_prefix: bool | None = None, n_ctx: int = 512, threads: int | None = None,
                 device: str | None = None, convention: str = DEFAULT, dtype: str | None = None):
        self.path = Path(path)
        self.info = read_gguf_info(self.path)
        self.dtype = check_dtype(dtype)
        self._copy = None
        self.name = self.path.stem
        self.invariant = INVARIANT and batch_size is None and share_prefix is None
        self.batch_size = 1 if self.invariant else max(1, min(int(batch_size or 64), MAX_SEQ))
        self.share_prefix = not self.invariant if share_prefix is None else bool(share_prefix)
        self.threads = int(threads or len(os.sched_getaffinity(0)))
        self._asked_threads = threads
        self.skipped = 0
        self._sha256 = None
        self._lc = lc = import_llama_cpp(self.path)
        self._load(n_ctx, device)
        self.vocab = lc.llama_model_get_vocab(self.model)
        self.n_vocab = lc.llama_vocab_n_tokens(self.vocab)
        bos = lc.llama_vocab_bos(self.vocab)
        self.bos_source = "bos" if bos >= 0 else "eos"
        self.bos = bos if bos >= 0 else lc.llama_vocab_eos(self.vocab)
        self.convention = check_convention(convention)
        self._buf = ctypes.create_string_buffer(256)
        self._word_start = word_start_mask(lc, self.vocab, self.n_vocab, punctuation=self.convention != "words")
        self._tok_cache: dict[tuple[str, bool], tuple[int, ...]] = {}
        self._enc: dict = {}
        self.skipped_unencodable = 0
        self.sentences_asked = self.sentences_decoded = 0   # sentence method: distinct ones decoded
        self._lanes = [self._new_lane(self.ctx)]

    # ------------------------------------------------------------------ loading
    def _load(self, n_ctx: int, device: str | None) -> None:
        lc = self._lc
        errors = capture_log(lc)
        lc.llama_backend_init()
        mparams = lc.llama_model_default_params()
        mparams.n_gpu_layers = 0 if (device or "").startswith("cpu") else -1
        self.gpu = mparams.n_gpu_layers != 0 and bool(lc.llama_supports_gpu_offload())
        if self.dtype and FTYPES[self.dtype][1] != self.info.quantization:
            self._copy = FloatCopy(lc, self.info, self.dtype, self.threads, errors)
        weights = self._copy.path if self._copy else self.path
        self.model = lc.llama_model_load_from_file(str(weights).encode(), mparams)
        if self._copy:
            # loaded (mapped or read): removed now, so that a process that is killed
            # (a Ray worker at the end of a run) leaves no copy behind
            self._copy.cleanup()
        if not self.model:
            why = next((e for e in reversed(errors) if "architecture" in e), errors[-1] if errors else "")
            raise LMError(f"{self.path}: llama.cpp {lc.__version__} cannot load this file "
                          f"(architecture {self.info.architecture!r}){': ' + why if why else ''}")
        self.n_ctx = max(16, min(int(n_ctx), lc.llama_model_n_ctx_train(self.model) or n_ctx))
        cparams = lc.llama_context_default_params()
        cparams.n_ctx = cparams.n_batch = self.n_ctx
        cparams.n_ubatch = min(256, self.n_ctx)
        # llama.cpp reserves an output row per sequence: no more sequences than batch rows
        cparams.n_seq_max = self.n_seq_max = min(MAX_SEQ, self.n_ctx)
        self.batch_size = min(self.batch_size, self.n_seq_max)
        cparams.n_outputs_max = 0
        cparams.n_outputs_max_per_seq = 0
        cparams.kv_unified = True  # one cache: a copied prefix is shared, not duplicated
        # flash attention off: on CPU it accumulates in fp16 (measured 0.24 nats per
        # BLiMP sentence away from the fp32 path)
        cparams.flash_attn_type = 0
        if self.dtype == "float32":
            cparams.type_k = cparams.type_v = KV_F32
        self.lanes, lane_threads = lanes_for(self._asked_threads, not self.gpu)
        cparams.n_threads = cparams.n_threads_batch = self.threads if self.lanes == 1 else lane_threads
        cparams.no_perf = True
        self._cparams = cparams
        self.ctx = self._new_context(errors)

    def _new_context(self, errors: list[str]):
        ctx = self._lc.llama_init_from_model(self.model, self._cparams)
        if not ctx:
            raise LMError(f"{self.path}: llama.cpp could not create a context "
                          f"({errors[-1] if errors else 'unknown reason'})")
        return ctx

    def _new_lane(self, ctx) -> Lane:
        lc = self._lc
        return Lane(lc, ctx, lc.llama_get_memory(ctx), lc.llama_batch_init(self.n_ctx, 0, self.n_seq_max),
                    self.n_ctx, self.n_vocab, self._word_start, self.path, self.share_prefix)

    def close(self) -> None:
        lc = self._lc
        lanes = getattr(self, "_lanes", None)
        for lane in lanes or []:
            lc.llama_batch_free(lane.batch)
            lc.llama_free(lane.ctx)
        if lanes is None and getattr(self, "ctx", None):   # __init__ stopped before the first lane
            lc.llama_free(self.ctx)
        self._lanes, self.ctx = [], None
        if getattr(self, "model", None):
            lc.llama_model_free(self.model)
            self.model = None
        if getattr(self, "_copy", None) is not None:
            self._copy.cleanup()   # again: nothing to do once loaded, the directory if not

    # ------------------------------------------------------------------ tokens
    def _tokens(self, text: str, special: bool = False) -> tuple[int, ...]:
        toks = self._tok_cache.get((text, special))
        if toks is None:
            raw = text.encode("utf-8")
            arr = (self._lc.llama_token * (len(raw) + 8))()
            n = self._lc.llama_tokenize(self.vocab, raw, len(raw), arr, len(arr), special, False)
            if n < 0:
                raise LMError(f"{self.path}: cannot tokenize {text!r}")
            toks = self._tok_cache[(text, special)] = tuple(arr[:n])
        return toks

    def _piece_bytes(self, t: int) -> bytes:
        n = self._lc.llama_token_to_piece(self.vocab, t, self._buf, 256, 0, False)
        return self._buf.raw[:max(n, 0)]

    def tokenize(self, text: str, special: bool = False):
        """(ids, character offsets) of ``text`` (offsets from the pieces' bytes: llama.cpp
        has no offsets API); ``special``: with the model's own BOS, as its tokenizer adds it."""
        ids = self._tokens(text, special)
        return ids, offsets_from_pieces(text, [self._piece_bytes(t) for t in ids])

    @property
    def prepend(self) -> int:
        """The id the convention prepends (:class:`lm.pieces.EncodingCache`): BOS."""
        return self.bos

    def sentence_pieces(self, sentence) -> list[list[str]]:
        enc = self.try_encoded(sentence)
        if enc is None:
            return [[] for _ in sentence]
        # as tokens.tsv writes them: a space is spelled ▁ (pieces are space-separated there)
        return enc.word_pieces(len(sentence), lambda t: self._piece_bytes(t).decode("utf-8", "replace")
                               .replace(" ", "\u2581"))

    def _word_tokens(self, word: str, i: int) -> tuple[int, ...]:
        return self._tokens(word if i == 0 else " " + word)

    def word_pieces(self, word: str) -> list[str]:
        """The pieces of ``word`` in the middle of a sentence (tokenized as ``" " + word``)."""
        buf = ctypes.create_string_buffer(256)
        out = []
        for t in self._word_tokens(word, 1):
            n = self._lc.llama_token_to_piece(self.vocab, t, buf, 256, 0, False)
            out.append(buf.raw[:max(n, 0)].decode("utf-8", "replace"))
        return out

    def in_vocab(self, word: str) -> bool:
        """Every word has pieces in a subword vocabulary; only an empty word has none."""
        return bool(word) and len(self._word_tokens(word, 1)) > 0

    # ------------------------------------------------------------------ methods
    def score_targets(self, queries: Sequence[TargetQuery]) -> np.ndarray:
        """Natural-log P(candidate | prefix) with the word-end factor; (n, k) float64.
        The text read ends with the candidate; its prefix (up to the candidate's first
        piece) is decoded once for all candidates when they agree on it."""
        if self.convention == "minicons":
            raise FieldError("{convention} minicons scores whole sentences only; use {method} sentence")
        groups, owners = [], []
        for qi, q in enumerate(queries):
            flags = spaces_of(q.words, q.space_after)[:q.index + 1]
            encs = [self.try_encoded(tuple(q.words[:q.index]) + (c,), flags) for c in q.candidates]
            cuts = [None if e is None else next((p for p, w in enumerate(e.owner) if w == q.index), None)
                    for e in encs]
            if any(c is None for c in cuts):
                continue   # counted by try_encoded (or a candidate with no piece of its own)
            same = len(set(cuts)) == 1 and len({e.ids[:cuts[0]] for e in encs}) == 1
            if self.share_prefix and same:
                groups.append(Group(list(encs[0].ids[:cuts[0]]), [list(e.ids[cuts[0]:]) for e in encs],
                                    False, True))
                owners.append((qi, None))
            else:
                for m, (e, c) in enumerate(zip(encs, cuts)):
                    groups.append(Group(list(e.ids[:c]), [list(e.ids[c:])], False, True))
                    owners.append((qi, m))
        self._run(groups)
        k = max((len(q.candidates) for q in queries), default=0)
        out = np.full((len(queries), k), np.nan)
        for g, (qi, m) in zip(groups, owners):
            for j, (lp, we) in enumerate(zip(g.member_lp, g.member_we)):
                if lp is not None:
                    out[qi, j if m is None else m] = float(np.sum(lp)) + we
        return out

    def logprob(self, prefixes, targets) -> np.ndarray:
        return self.score_targets([TargetQuery(tuple(p) + (t[0],), len(p), tuple(t))
                                   for p, t in zip(prefixes, targets)])

    def word_logprobs(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """Per sentence, natural-log P(word_i | BOS, words before i) = sum of the scored
        pieces it owns (NaN for a sentence skipped)."""
        encs = [self.try_encoded(s) for s in sentences]
        live = [i for i, e in enumerate(encs) if e is not None and len(e.ids) > 1]
        token_lp = self._sentence_token_logprobs([list(encs[i].ids) for i in live])
        out = [np.full(len(s), np.nan) for s in sentences]
        for i, lp in zip(live, token_lp):
            # lp[j] is the log-prob of token j+1
            out[i] = word_sums(encs[i], lp[encs[i].first - 1:], len(sentences[i]))
        return out

    def _sentence_token_logprobs(self, seqs: list[list[int]]) -> list[np.ndarray]:
        """Log-probs of tokens 1.. of each sequence (NaN for a skipped one). Sequences
        that open alike (a pair's two sentences, wherever they are in the list) are
        grouped by :func:`lm.openings.group_openings`, at most MAX_GROUP together. A
        sequence asked for several times (a sentence several items share) is decoded once
        and its log-probs handed to each asker."""
        distinct, where = distinct_sequences(seqs)
        self.sentences_asked += len(seqs)
        self.sentences_decoded += len(distinct)
        scored = self._distinct_token_logprobs(distinct)
        return [scored[k] for k in where]

    def _distinct_token_logprobs(self, seqs: list[list[int]]) -> list[np.ndarray]:
        groups = group_openings(seqs, max_group=MAX_GROUP if self.share_prefix else 1)
        members = [list(g.members) for g in groups]
        built = []
        for g, idx in zip(groups, members):
            c = g.shared if len(idx) > 1 else len(seqs[idx[0]]) - 1
            built.append(Group(seqs[idx[0]][:c], [seqs[i][c:] for i in idx], True, False))
        self._run(built)
        out: list[np.ndarray] = [None] * len(seqs)
        for g, idx in zip(built, members):
            for m, i in enumerate(idx):
                lp = g.member_lp[m]
                out[i] = np.concatenate([g.prefix_lp, lp]) if lp is not None \
                    else np.full(len(seqs[i]) - 1, np.nan)
        return out

    # ------------------------------------------------------------------ decoding
    def _run(self, groups: list[Group]) -> None:
        """Fill every group's log-probs, packing groups into decode rounds; with lanes,
        round i is decoded by lane i mod n (:mod:`lm.thread_lanes`), each in its own context on
        the same model. The rounds are the same whatever the lanes, and so are the scores."""
        rounds, splits, skipped = plan_rounds(groups, self.n_ctx, self.batch_size)
        if self.lanes > 1 and len(rounds) > 1:
            while len(self._lanes) < min(self.lanes, len(rounds)):
                self._lanes.append(self._new_lane(self._new_context(LOG_ERRORS)))

            def read(k, mine, stop) -> None:
                for r in mine:
                    if stop.is_set():
                        return
                    decode_round(self._lanes[k], r)

            side_by_side(read, rounds, self.lanes)
        else:
            for r in rounds:
                decode_round(self._lanes[0], r)
        join_splits(splits)
        self.skipped += skipped

    # ------------------------------------------------------------------ the record
    def conventions(self) -> dict:
        if self._sha256 is None:
            self._sha256 = sha256_of(self.path)
        return conventions_record(self, self._sha256)


def load_llamacpp(path: str | os.PathLike, *, batch_size: int | None = None, share_prefix: bool | None = None,
                  n_ctx: int = 512, threads: int | None = None, device: str | None = None,
                  convention: str = DEFAULT, dtype: str | None = None) -> LlamaCppScorer:
    """Load a GGUF file with llama.cpp (the options: :class:`LlamaCppScorer`'s)."""
    return LlamaCppScorer(path, batch_size=batch_size, share_prefix=share_prefix, n_ctx=n_ctx,
                          threads=threads, device=device, convention=convention, dtype=dtype)
