"""agree's LSTM opened (:class:`lm.open.OpenModel`): per-layer hidden and cell states,
unit ablation and state patching, many interventions per pass.

``nn.LSTM`` runs its layers fused and returns only the top layer's outputs, so the
network is stepped here with its own weights (gates i, f, g, o as torch orders them;
the same floats as ``nn.LSTM`` to 1e-5, tests/test_inspect_lstm.py):

    g_t = W_ih x_t + b_ih + W_hh h_{t-1} + b_hh;  c_t = f * c_{t-1} + i * g;  h_t = o * tanh(c_t)

Ablating a unit fixes its ``h`` to zero (or a given value) at every time step, as
it leaves the cell: the recurrence, the layer above and the decoder all see the
fixed value (Lakretz et al. 2019 zero the unit's outgoing weights, the same thing for
zero). Its cell state runs on but is never read.

Why it is fast (:meth:`OpenLSTM.ablate`): an intervention in layer ``l`` leaves the
layers below unchanged, so they run once per item, and the input projection of layer
``l`` (``W_ih x_t + b``, half of its work) is computed once and shared by every copy of
the item; only the recurrence of layer ``l`` and the layers above run once per unit
set, K sets side by side in one batch of rows (item-major: the K copies of item 0,
then of item 1 ...). Items are sorted by length and leave the batch once their
target is scored, so no step is spent on padding, and only the two forms' rows of
the decoder are used (their logit difference is the log-probability difference: the
normaliser cancels). Memory: the states of the rows in flight, (rows, H) per layer;
nothing is kept across batches.
"""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np
import torch

from lm.base import TargetQuery
from lm.errors import LMError
from lm.open import ItemInput, OpenModel, Site, by_length, single_piece_input

#: items whose states at every position are read at once (h and c of every layer kept
#: for the batch: 256 x 50 steps x 650 units x 2 layers x 2 is 133 MB)
STATE_ROWS = 256
#: a patch target standing for every layer at once (the whole state at the position)
ALL_LAYERS = -1


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
    ids = scorer._sentence_ids(words)
    return ItemInput(tuple(ids), tuple(range(1, t + 2)), t, ids[-1], scorer._word_id(query.candidates[1]))


def _cell(gates: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One LSTM step from its pre-activation gates (R, 4H) and cell state (R, H)."""
    i, f, g, o = gates.chunk(4, 1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


class OpenLSTM(OpenModel):
    """A :class:`lm.neural.scorer.NeuralScorer` of kind lstm, opened."""

    def __init__(self, scorer):
        self.scorer, self.kind, self.name = scorer, "lstm", scorer.name
        rnn = scorer.model.rnn
        self.device = scorer.device
        self.n_layers, self.width = rnn.num_layers, rnn.hidden_size
        get = lambda name, l: getattr(rnn, f"{name}_l{l}").detach()  # noqa: E731
        self.w_ih = [get("weight_ih", l) for l in range(self.n_layers)]
        self.w_hh_t = [get("weight_hh", l).t().contiguous() for l in range(self.n_layers)]
        self.bias = [get("bias_ih", l) + get("bias_hh", l) for l in range(self.n_layers)]
        self.embedding = scorer.model.embedding.weight.detach()
        self.out_w, self.out_b = scorer._W.detach(), scorer._b.detach()

    @property
    def sites(self) -> dict[str, Site]:
        L, H = self.n_layers, self.width
        return {"hidden": Site("hidden", L, H), "cell": Site("cell", L, H, ablate=False),
                "state": Site("state", L, H, probe=False, ablate=False, patch=True)}

    # ---- reading items ----------------------------------------------------
    def encode(self, query: TargetQuery) -> ItemInput | str:
        return neural_input(self.scorer, query)

    # ---- the stepping engine ------------------------------------------------
    def _tensor(self, inputs: Sequence[ItemInput], steps: Sequence[int]) -> torch.Tensor:
        ids = torch.full((len(inputs), max(steps)), self.scorer.eos_id, dtype=torch.long)
        for b, (inp, n) in enumerate(zip(inputs, steps)):
            ids[b, :n] = torch.tensor(inp.ids[:n])
        return ids.to(self.device)

    def _clean_below(self, x: torch.Tensor, start: int, steps: Sequence[int]) -> torch.Tensor:
        """The input of layer ``start`` (B, T, in): the embeddings through the clean layers below."""
        if start == 0:
            return x
        return self._steps(x, 0, 1, steps, record=True, stop=start)[0][start - 1]

    def _steps(self, x: torch.Tensor, start: int, copies: int, steps: Sequence[int], *,
               masks=None, patches=None, record: bool = False, top_at=None,
               stop: int | None = None):
        """Run layers ``start``..``stop - 1`` (default: to the top) over ``copies`` rows per item from the shared input ``x``
        (B, T, in) of layer ``start``; ``steps`` (descending): time steps per item.

        masks       {layer: (mask, fill)}, each (copies, H): that layer's h at every step
                    becomes h * mask + fill
        patches     {t: [(layer, rows, h, c)]}: after layer ``layer`` at step t, those
                    rows' states are replaced
        record      keep every layer's h and c at every step: ({layer: (B, T, H)} twice)
        top_at      per item, the step whose top-layer h is returned (B * copies, H)
        """
        B, T = x.shape[0], max(steps)
        H, K = self.width, copies
        stop = self.n_layers if stop is None else stop
        if any(a < b for a, b in zip(steps, steps[1:])):
            raise ValueError("items must come longest first")
        xp = torch.nn.functional.linear(x, self.w_ih[start], self.bias[start])   # (B, T, 4H), shared
        h = [x.new_zeros((B * K, H)) for _ in range(stop)]
        c = [x.new_zeros((B * K, H)) for _ in range(stop)]
        hs = {l: x.new_zeros((B, T, H)) for l in range(start, stop)} if record else None
        cs = {l: x.new_zeros((B, T, H)) for l in range(start, stop)} if record else None
        masks = {l: (m.repeat(B, 1), f.repeat(B, 1)) for l, (m, f) in (masks or {}).items()}
        top = x.new_empty((B * K, H)) if top_at is not None else None
        for t in range(T):
            n = sum(1 for s in steps if s > t)
            r = n * K
            below = None
            for layer in range(start, stop):
                hh, cc = h[layer][:r], c[layer][:r]
                if layer == start:
                    gates = (hh @ self.w_hh_t[layer]).view(n, K, -1) + xp[:n, t, None]
                    gates = gates.view(r, -1)
                else:
                    gates = torch.addmm(self.bias[layer], below, self.w_ih[layer].t()) + hh @ self.w_hh_t[layer]
                hh, cc = _cell(gates, cc)
                if layer in masks:
                    hh = hh * masks[layer][0][:r] + masks[layer][1][:r]
                for (pl, rows, ph, pc) in (patches or {}).get(t, ()):
                    if pl == layer:
                        hh, cc = hh.index_copy(0, rows, ph), cc.index_copy(0, rows, pc)
                h[layer], c[layer] = hh, cc
                if record:
                    hs[layer][:n, t], cs[layer][:n, t] = hh, cc
                below = hh
            if top is not None:
                done = [b for b in range(n) if top_at[b] == t]
                if done:
                    top[done[0] * K:(done[-1] + 1) * K] = below[done[0] * K:(done[-1] + 1) * K]
        return (hs, cs) if record else top

    def _preference_of(self, top: torch.Tensor, inputs: Sequence[ItemInput], copies: int) -> np.ndarray:
        """(copies, B) logit differences of the two forms from the top h (B * copies, H)."""
        good = torch.tensor([i.correct for i in inputs], device=self.device)
        bad = torch.tensor([i.wrong for i in inputs], device=self.device)
        dw = (self.out_w[good] - self.out_w[bad]).repeat_interleave(copies, 0)
        db = (self.out_b[good] - self.out_b[bad]).repeat_interleave(copies, 0)
        d = (top * dw).sum(1) + db
        return d.view(len(inputs), copies).t().double().cpu().numpy()

    # ---- the interface --------------------------------------------------------
    def states(self, inputs, names) -> Iterator[tuple[list[int], dict]]:
        for name in names:
            self.site(name)
        with torch.inference_mode():
            for batch in by_length(inputs, STATE_ROWS):
                part = [inputs[i] for i in batch]
                steps = [len(i) for i in part]
                x = self.embedding[self._tensor(part, steps)]
                hs, cs = self._steps(x, 0, 1, steps, record=True)
                got = {}
                for layer in range(self.n_layers):
                    if "hidden" in names:
                        got[("hidden", layer)] = hs[layer].float().cpu().numpy()
                    if "cell" in names:
                        got[("cell", layer)] = cs[layer].float().cpu().numpy()
                yield batch, got

    def preference(self, inputs) -> np.ndarray:
        return self.ablate(inputs, "hidden", [[]])[0]

    def ablate(self, inputs, name, unit_sets, fill=None) -> np.ndarray:
        self.check_units(name, unit_sets)
        masks = {l: (torch.from_numpy(m).to(self.device), torch.from_numpy(a).to(self.device))
                 for l, (m, a) in self.set_masks(unit_sets, self.width, fill).items()}
        start = min(masks, default=0)
        out = np.empty((len(unit_sets), len(inputs)))
        with torch.inference_mode():
            for batch in by_length(inputs, min(self.batch_rows, 512)):
                part = [inputs[i] for i in batch]
                steps = [i.predict + 1 for i in part]
                x = self._clean_below(self.embedding[self._tensor(part, steps)], start, steps)
                per = max(1, self.batch_rows // len(part))
                for s in range(0, len(unit_sets), per):
                    k = slice(s, s + per)
                    n_sets = len(unit_sets[k])
                    top = self._steps(x, start, n_sets, steps, masks={l: (m[k], a[k]) for l, (m, a) in masks.items()},
                                      top_at=[i.predict for i in part])
                    out[k, batch] = self._preference_of(top, part, n_sets)
        return out

    def patch_targets(self, name: str) -> list[tuple[int, int | None]]:
        return super().patch_targets(name) + [(ALL_LAYERS, None)]

    def patch(self, inputs, donors, name, pos, donor_pos) -> np.ndarray:
        targets = [layer for layer, _ in self.patch_targets(name)]
        K = len(targets)
        donor_h, donor_c = self._donor_states(donors, donor_pos)
        out = np.empty((K, len(inputs)))
        with torch.inference_mode():
            for batch in by_length(inputs, self.batch_rows, per_item=K):
                part = [inputs[i] for i in batch]
                steps = [i.predict + 1 for i in part]
                for b, i in enumerate(batch):
                    if not 0 <= pos[i] <= part[b].predict:
                        raise LMError(f"{self.name}: patch position {pos[i]} is not before the target")
                patches: dict = {}
                for b, i in enumerate(batch):
                    for k, tl in enumerate(targets):
                        for layer in (range(self.n_layers) if tl == ALL_LAYERS else (tl,)):
                            patches.setdefault(pos[i], {}).setdefault(layer, []).append((b * K + k, i))
                plan = {t: [(layer, torch.tensor([r for r, _ in v], device=self.device),
                             donor_h[layer][[i for _, i in v]], donor_c[layer][[i for _, i in v]])
                            for layer, v in by_layer.items()] for t, by_layer in patches.items()}
                x = self.embedding[self._tensor(part, steps)]
                top = self._steps(x, 0, K, steps, patches=plan, top_at=[i.predict for i in part])
                out[:, batch] = self._preference_of(top, part, K)
        return out

    def _donor_states(self, donors, donor_pos):
        """Per layer, the donors' h and c at their ``donor_pos`` (n, H) each."""
        n = len(donors)
        hs = [torch.empty((n, self.width), device=self.device) for _ in range(self.n_layers)]
        cs = [torch.empty((n, self.width), device=self.device) for _ in range(self.n_layers)]
        for batch, got in self.states(donors, ("hidden", "cell")):
            where = [donor_pos[i] for i in batch]
            for layer in range(self.n_layers):
                rows = np.arange(len(batch))
                hs[layer][batch] = torch.from_numpy(got[("hidden", layer)][rows, where]).to(self.device)
                cs[layer][batch] = torch.from_numpy(got[("cell", layer)][rows, where]).to(self.device)
        return hs, cs


def open_scorer(scorer) -> OpenLSTM | None:
    """agree's LSTM scorer opened; None for anything else (lm.open refuses it)."""
    if type(scorer).__name__ != "NeuralScorer" or scorer.kind != "lstm":
        return None
    if scorer.carry_state:
        raise LMError(f"{scorer.name}: inspect reads each item from a fresh state (carry_state is off)")
    return OpenLSTM(scorer)
