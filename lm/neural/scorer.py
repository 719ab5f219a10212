"""Scoring with the neural language models (model directories of kind "lstm" and "transformer";
:mod:`lm.neural.load` opens them).

What is computed, and why it is cheap: for a prefix w_1..w_n the model reads
``[<eos>] + prefix`` (``<eos>`` is the sentence boundary the models were trained
with), and only the hidden vector after the last word is kept. From it come the
logits of the k candidate words and one normaliser ``logsumexp(h @ W.T + b)``;
natural-log ``P(w | prefix) = logit(w) - normaliser``. No softmax at earlier
positions, nothing written out. The (rows, V) logits block exists only
transiently, a chunk of rows at a time, because the normaliser needs it; the
candidate logits are gathered from that same block (identical to ``h @ W[t].T +
b[t]``, minus the extra work).

Batching: sequences are sorted by length, longest first, and cut into batches of
at most ``batch_size``. The LSTM reads a batch one time step at a time, one row
per distinct prefix (:mod:`lm.neural.prefixes`): a sequence that has ended leaves
the batch, and a beginning that several sequences share (nonce variants, the two
sentences of a pair, a prefix read once per subword candidate) is read once, so
no step is computed on padding or twice. Its first layer's input projection is
computed once per distinct word of the batch (:mod:`lm.neural.cell`). The transformer reads a right-padded
batch in one call; batches are also cut where padding would pass 25%. Both
models are causal (an output at position t depends on inputs up to t), so
padding after a sequence never changes the vectors gathered at its real positions.
A transformer reads at most ``max_len`` tokens: a longer input keeps its last
``max_len`` tokens (a sliding window).

Subword (sentencepiece) models, the word-boundary convention: a word is the
piece sequence that sentencepiece gives it as a separate word (first piece
starts with ``▁``, see :mod:`lm.corpus.subword`), and::

    P(word | prefix) = prod_j P(piece_j | prefix, piece_<j)  *  P(boundary | prefix, word)

where *boundary* is the event "the next piece starts a new word or ends the
sentence" (a piece starting with ``▁``, or ``<eos>``). Without that last factor
``volano = ▁vola + no`` would make ``P(vola)`` include every continuation of
``vola...``, so a word that is a prefix of its alternative would always win.
``word_end=False`` drops the factor (the plain product of pieces), for comparison.

``carry_state=True`` (word-level LSTM only) reproduces the released code's habit:
the prefixes are read as one stream in the given order, ``<eos>`` between them,
the hidden state never reset, also across calls (:meth:`NeuralScorer.reset_state`
starts over). The scorer sees prefixes only, so the state carried into sentence
i has read prefix i-1, not the rest of sentence i-1 as in the released code. A
transformer has no state to carry: the option is ignored there
(``scorer.carry_state`` tells what is in effect).
"""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np
import torch

from lm.base import Scorer
from lm.device import resolve_device
from lm.errors import LMError
from lm.neural.sentence import SentenceScoring
from lm.corpus.subword import EOS, UNK, SubwordVocab
from lm.neural.prefixes import prefix_steps
from lm.neural.cell import SteppedLSTM, gather_state

#: rows of the (rows, V) logits block computed at once (memory: rows * V * 4 bytes)
LOGIT_ROWS = 1024
#: a padded batch holds at most this many tokens per real token
PAD_SLACK = 1.25
#: tokens per features() call when streaming with carry_state
STREAM_CHUNK = 2048


class NeuralScorer(SentenceScoring, Scorer):
    """:class:`lm.base.Scorer` over a model with ``features(input, state)`` and ``decoder``.

    ``model``: ``features(LongTensor (B,T), state) -> (h (B,T,H), state)`` and
    ``decoder: nn.Linear(H, V)``; ``vocab``: id -> token (``vocab.txt``);
    ``subword``: a :class:`lm.corpus.subword.SubwordVocab` for sentencepiece models,
    None for word models.
    """

    #: rows of the (rows, V) logits block computed at once
    logit_rows = LOGIT_ROWS

    def __init__(self, model: torch.nn.Module, vocab: Sequence[str], *, kind: str,
                 subword: SubwordVocab | None = None, device: str | torch.device = "auto",
                 batch_size: int = 512, carry_state: bool = False, word_end: bool = True,
                 name: str = ""):
        if batch_size < 1:
            raise LMError(f"batch_size must be at least 1 (got {batch_size})")
        self.kind, self.name = kind, name
        self.device = resolve_device(device)
        self.model = model.to(self.device).eval()
        self.vocab = list(vocab)
        self.index = {w: i for i, w in enumerate(self.vocab)}
        if EOS not in self.index or UNK not in self.index:
            raise LMError(f"vocabulary lacks {EOS} or {UNK}")
        self.eos_id, self.unk_id = self.index[EOS], self.index[UNK]
        self.subword = subword
        self.batch_size = batch_size
        self.word_end = word_end
        self.stateful = kind == "lstm"
        # a transformer reads at most max_len tokens: longer inputs keep their last
        # max_len tokens (a sliding window; <eos> then falls out of view)
        self.max_len = None if self.stateful else getattr(
            getattr(model, "config", None), "max_len", None)
        if carry_state and subword is not None and self.stateful:
            raise LMError("carry_state is implemented for word-level LSTM models only")
        self.carry_state = bool(carry_state) and self.stateful
        self._carried = None
        dec = self.model.decoder
        self._W = dec.weight                                   # (V, H)
        self._b = dec.bias if dec.bias is not None else torch.zeros(
            dec.weight.shape[0], device=self.device, dtype=dec.weight.dtype)
        if subword is not None:
            self._boundary = torch.tensor(subword.boundary_ids, device=self.device)

    # ---- vocabulary -------------------------------------------------------
    def in_vocab(self, word: str) -> bool:
        if self.subword is not None:
            return self.subword.known(word)
        return word in self.index and word not in (UNK, EOS)

    def _word_id(self, word: str) -> int:
        return self.index.get(word, self.unk_id)

    # public for opening the model (lm/neural/item_input.py, open_lstm.py, open_transformer.py)
    def word_id(self, word: str) -> int:
        """A word's id (``<unk>``'s when it is not in the vocabulary; word-level models)."""
        return self._word_id(word)

    def sentence_ids(self, words: Sequence[str]) -> list[int]:
        """The ids the model reads for ``words``: ``<eos>``, then the words (or pieces)."""
        return self._sentence_ids(words)

    def output_layer(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The decoder's weight (V, H) and bias (V,; zero when it has none), as scored."""
        return self._W, self._b

    def _sentence_ids(self, words: Sequence[str]) -> list[int]:
        if self.subword is not None:
            return [self.eos_id] + self.subword.encode_sentence(words)
        return [self.eos_id] + [self.index.get(w, self.unk_id) for w in words]

    def reset_state(self) -> None:
        """Forget the state carried across sentences (``carry_state=True`` only)."""
        self._carried = None

    # ---- the interface ----------------------------------------------------
    def logprob(self, prefixes: Sequence[Sequence[str]],
                targets: Sequence[Sequence[str]]) -> np.ndarray:
        n = len(prefixes)
        if len(targets) != n:
            raise LMError(f"{n} prefixes but {len(targets)} target lists")
        k = len(targets[0]) if n else 0
        if any(len(t) != k for t in targets):
            raise LMError("every prefix needs the same number of candidate targets")
        if n == 0 or k == 0:
            return np.zeros((n, k), dtype=np.float64)
        with torch.inference_mode():
            if self.subword is not None:
                out = self._subword_logprob(prefixes, targets, k)
            else:
                seqs = [self._sentence_ids(p) for p in prefixes]
                if self.carry_state:
                    h = self._stream_last_hidden(seqs)
                else:
                    h = self._hidden_at(seqs, [[len(s) - 1] for s in seqs])
                ids = torch.tensor([[self._word_id(w) for w in t] for t in targets],
                                   device=self.device)
                out = self._candidate_logprob(h, ids)
        return out.double().cpu().numpy()

    def word_pieces(self, word: str) -> list[str]:
        return self.subword.word_pieces(word) if self.subword is not None else [word]

    def conventions(self) -> dict:
        return {**super().conventions(), "sentence_start": "<eos> (the training boundary)",
                "subword": "sentencepiece; target: pieces x word-end factor; sentence: sum of "
                           "pieces" if self.subword is not None else "none (word-level)"}

    # ---- hidden vectors ----------------------------------------------------
    def _hidden_at(self, seqs: list[list[int]], wanted: list[list[int]]) -> torch.Tensor:
        """Hidden vectors at the ``wanted`` positions of each sequence, fresh state.

        Returns (sum of len(wanted[i]), H), rows in order of i then position.
        Sequences go longest first in batches of ``batch_size``. The LSTM reads a batch
        one step at a time, one row per distinct prefix (:mod:`lm.neural.prefixes`): no
        step is spent on padding, nor twice on a beginning that sequences share. The
        transformer reads a right-padded batch in one call.
        """
        order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))
        offsets = np.cumsum([0] + [len(w) for w in wanted])
        # the LSTM's weights laid out for stepping once per call (the weights as they are now)
        read = functools.partial(self._read_prefixes, SteppedLSTM.of(self.model.rnn)) \
            if self.stateful else self._read_padded
        rows = None
        for batch in self._batches(order, seqs):
            dest = [range(offsets[i], offsets[i + 1]) for i in batch]
            for where, picked in read([seqs[i] for i in batch], [wanted[i] for i in batch], dest):
                if rows is None:
                    rows = picked.new_empty((int(offsets[-1]), picked.shape[1]))
                rows[torch.tensor(where, device=self.device)] = picked
        return rows

    def _read_prefixes(self, lstm: SteppedLSTM, seqs, wanted, dest):
        """Yield (destination rows, hidden vectors) step by step, one row per distinct
        prefix, the first layer's input projection computed once per distinct word
        (:mod:`lm.neural.cell`)."""
        want: dict[int, list[tuple[int, int]]] = {}     # step -> (sequence, destination row)
        for b, (positions, rows) in enumerate(zip(wanted, dest)):
            for t, d in zip(positions, rows):
                want.setdefault(t, []).append((b, d))
        steps = prefix_steps(seqs)
        words = sorted({w for step in steps for w in step.tokens})
        slot = {w: i for i, w in enumerate(words)}
        # the embedding as the model reads it (its dropout is off in eval mode)
        x = self.model.embedding(torch.tensor(words, device=self.device))
        word_gates = lstm.input_gates(x)                     # (words, 4H)
        state = None
        for t, step in enumerate(steps):
            if state is not None:
                state = gather_state(state, step.parents)
            gates = word_gates.index_select(0, torch.tensor([slot[w] for w in step.tokens], device=self.device))
            h, state = lstm.step(gates, state)                # (rows, H)
            if t in want:
                seq, where = zip(*want[t])
                yield where, h[torch.tensor([step.rows[b] for b in seq], device=self.device)]

    def _read_padded(self, seqs, wanted, dest):
        """Yield (destination rows, hidden vectors) of one right-padded call."""
        cut = [self._overflow(len(s), w) for s, w in zip(seqs, wanted)]
        lens = [len(s) - c for s, c in zip(seqs, cut)]
        x = torch.full((len(seqs), max(lens)), self.eos_id, dtype=torch.long)
        b_idx, t_idx, where = [], [], []
        for b, (s, c) in enumerate(zip(seqs, cut)):
            x[b, :lens[b]] = torch.tensor(s[c:])
            b_idx += [b] * len(wanted[b])
            t_idx += [t - c for t in wanted[b]]
            where += dest[b]
        h, _ = self.model.features(x.to(self.device))              # (B, T, H)
        yield where, h[torch.tensor(b_idx, device=self.device), torch.tensor(t_idx, device=self.device)]

    def _batches(self, order: list[int], seqs: list[list[int]]):
        """Consecutive runs of ``order`` (longest first), at most ``batch_size`` each; for
        a padded model (transformer) also cut where padding would pass 25% of the batch."""
        batch, real = [], 0
        for i in order:
            n = len(seqs[i])
            if batch and (len(batch) == self.batch_size or (
                    not self.stateful and
                    (len(batch) + 1) * len(seqs[batch[0]]) > PAD_SLACK * (real + n))):
                yield batch
                batch, real = [], 0
            batch.append(i)
            real += n
        if batch:
            yield batch

    def _overflow(self, length: int, wanted: list[int]) -> int:
        """Tokens to drop at the left so that the model can read the sequence."""
        if self.max_len is None or length <= self.max_len:
            return 0
        cut = length - self.max_len
        if min(wanted) < cut:
            raise LMError(f"a target word needs more than the transformer's "
                          f"max_len {self.max_len} positions")
        return cut

    def _stream_last_hidden(self, seqs: list[list[int]]) -> torch.Tensor:
        """carry_state: read all sequences as one stream (batch 1), state never reset."""
        stream = torch.tensor([t for s in seqs for t in s], device=self.device)
        ends = torch.tensor(np.cumsum([len(s) for s in seqs]) - 1, device=self.device)
        outs = []
        for start in range(0, len(stream), STREAM_CHUNK):
            h, self._carried = self.model.features(
                stream[None, start:start + STREAM_CHUNK], self._carried)
            outs.append(h[0])
        return torch.cat(outs)[ends]                                # (n, H)

    # ---- output layer -------------------------------------------------------
    def _logit_blocks(self, h: torch.Tensor):
        """Yield (start, logits) for ``LOGIT_ROWS`` rows of ``h`` at a time: the (r, V)
        logits in one block reused for every slice (a fresh one costs its page faults),
        which the caller may use up (:func:`_logsumexp_`)."""
        block = None
        for s in range(0, h.shape[0], LOGIT_ROWS):
            rows = h[s:s + LOGIT_ROWS]
            if block is None:
                block = rows.new_empty((rows.shape[0], self._W.shape[0]))
            yield s, torch.addmm(self._b, rows, self._W.t(), out=block[:rows.shape[0]])

    def _candidate_logprob(self, h: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """log P(ids[r, j] | h[r]) for (rows, H) hidden vectors and (rows, k) ids."""
        out = torch.empty(ids.shape, device=self.device, dtype=torch.float32)
        for s, logits in self._logit_blocks(h):
            picked = logits.gather(1, ids[s:s + LOGIT_ROWS]).float()
            out[s:s + LOGIT_ROWS] = picked - _logsumexp_(logits.float())
        return out

    def _boundary_logprob(self, h: torch.Tensor) -> torch.Tensor:
        """log P(next piece starts a word or is <eos> | h) for (rows, H) vectors."""
        out = torch.empty(h.shape[0], device=self.device, dtype=torch.float32)
        for s, logits in self._logit_blocks(h):
            logits = logits.float()
            boundary = torch.logsumexp(logits[:, self._boundary], dim=1)    # a copy: before the block is used up
            out[s:s + LOGIT_ROWS] = boundary - _logsumexp_(logits)[:, 0]
        return out

    def _subword_logprob(self, prefixes, targets, k: int) -> torch.Tensor:
        """Sum of piece log-probabilities (+ word end); one sequence per (item, candidate)."""
        seqs, wanted, piece_ids, end_rows, owner = [], [], [], [], []
        row = 0
        for i, (prefix, cands) in enumerate(zip(prefixes, targets)):
            base = self._sentence_ids(prefix)
            p = len(base) - 1              # position whose output predicts the first piece
            for j, word in enumerate(cands):
                pieces = list(self.subword.word_ids(word))
                if not pieces:
                    raise LMError(f"cannot score an empty target word (item {i})")
                seqs.append(base + pieces)
                m = len(pieces)
                wanted.append(list(range(p, p + m + 1)))
                piece_ids += pieces
                owner += [i * k + j] * m
                end_rows.append(row + m)
                row += m + 1
        h = self._hidden_at(seqs, wanted)                            # (rows, H)
        is_end = torch.zeros(h.shape[0], dtype=torch.bool, device=self.device)
        is_end[torch.tensor(end_rows, device=self.device)] = True
        piece_lp = self._candidate_logprob(
            h[~is_end], torch.tensor(piece_ids, device=self.device)[:, None])[:, 0]
        total = torch.zeros(len(prefixes) * k, device=self.device)
        total.index_add_(0, torch.tensor(owner, device=self.device), piece_lp)
        if self.word_end:
            total += self._boundary_logprob(h[is_end])
        return total.view(len(prefixes), k)


def _logsumexp_(x: torch.Tensor) -> torch.Tensor:
    """``torch.logsumexp(x, 1, keepdim=True)`` with ``x`` used up as its scratch space:
    the same operations in the same order (so the same bits), without the (rows, V)
    temporary torch's own allocates for ``x - max``."""
    top = x.amax(1, keepdim=True)
    shift = top.masked_fill(top.abs() == float("inf"), 0)
    return x.sub_(top).exp_().sum(1, keepdim=True).log_().add_(shift)
