"""agree's LSTM opened (:class:`lm.open.OpenModel`): per-layer hidden and cell states,
unit ablation and state patching, many interventions per pass.

``nn.LSTM`` runs its layers fused and returns only the top layer's outputs, so the
network is stepped by the scorer's own stepper (:class:`lm.neural.cell.SteppedLSTM`,
the same floats as ``nn.LSTM`` to 1e-5, tests/test_inspect_lstm.py), and every
intervention is a hook on its hook points ``layers.{l}.hook_h`` / ``layers.{l}.hook_c``:
reading a state records it, ablating a unit fixes its ``h`` to zero (or a given value)
at every time step as it leaves the cell (the recurrence, the layer above and the
decoder all see the fixed value; Lakretz et al. 2019 zero the unit's outgoing weights,
the same thing for zero; its cell state runs on but is never read), patching replaces
given rows' ``h`` and ``c`` at one step.

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
from lm.neural.cell import Hook, SteppedLSTM, hook_point
from lm.neural.item_input import neural_input
from lm.neural.scorer import NeuralScorer
from lm.open import ItemInput, OpenModel, Site, by_length

#: items whose states at every position are read at once (h and c of every layer kept
#: for the batch: 256 x 50 steps x 650 units x 2 layers x 2 is 133 MB)
STATE_ROWS = 256
#: a patch target standing for every layer at once (the whole state at the position)
ALL_LAYERS = -1


class OpenLSTM(OpenModel):
    """A :class:`lm.neural.scorer.NeuralScorer` of kind lstm, opened."""

    def __init__(self, scorer):
        self.scorer, self.kind, self.name = scorer, "lstm", scorer.name
        self.device = scorer.device
        self.lstm = SteppedLSTM.of(scorer.model.rnn)
        self.n_layers, self.width = self.lstm.layers, self.lstm.hidden
        self.embedding = scorer.model.embedding.weight.detach()
        self.out_w, self.out_b = (w.detach() for w in scorer.output_layer())

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
        hs: dict = {}
        self._run(x, range(start), 1, steps, _recorders(hs, None, [start - 1], x.shape[1]))
        return hs[start - 1]

    def _run(self, x: torch.Tensor, layers: range, copies: int, steps: Sequence[int],
             hooks: dict[str, Hook], top_at: Sequence[int] | None = None) -> torch.Tensor | None:
        """Step ``layers`` over ``copies`` rows per item (item-major) from their shared input
        ``x`` (B, T, in) of the first of them, with ``hooks`` on the hook points;
        ``steps`` (descending): time steps per item; ``top_at``: per item, the step whose
        last-layer h is returned (B * copies, H)."""
        B, T, K = x.shape[0], max(steps), copies
        if any(a < b for a, b in zip(steps, steps[1:])):
            raise ValueError("items must come longest first")
        xp = self.lstm.input_gates(x.reshape(B * T, -1), layers.start).view(B, T, -1)   # shared
        top = x.new_empty((B * K, self.width)) if top_at is not None else None
        state = None
        for t in range(T):
            n = sum(1 for s in steps if s > t)
            if state is not None:
                state = [(h[:n * K], c[:n * K]) for h, c in state]
            gates = xp[:n, t].repeat_interleave(K, 0) if K > 1 else xp[:n, t].clone()
            h, state = self.lstm.step(gates, state, hooks, t, layers)
            if top is not None:
                done = [b for b in range(n) if top_at[b] == t]
                if done:
                    top[done[0] * K:(done[-1] + 1) * K] = h[done[0] * K:(done[-1] + 1) * K]
        return top

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
                hs, cs = {}, {}
                self._run(x, range(self.n_layers), 1, steps, _recorders(hs, cs, range(self.n_layers), max(steps)))
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
                    fixed = {l: (m[k].repeat(len(part), 1), a[k].repeat(len(part), 1)) for l, (m, a) in masks.items()}
                    top = self._run(x, range(start, self.n_layers), n_sets, steps, _fixers(fixed),
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
                            patches.setdefault(layer, {}).setdefault(pos[i], []).append((b * K + k, i))
                plan = {layer: {t: (torch.tensor([r for r, _ in v], device=self.device),
                                    donor_h[layer][[i for _, i in v]], donor_c[layer][[i for _, i in v]])
                                for t, v in at.items()} for layer, at in patches.items()}
                x = self.embedding[self._tensor(part, steps)]
                top = self._run(x, range(self.n_layers), K, steps, _patchers(plan),
                                top_at=[i.predict for i in part])
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
    """agree's LSTM scorer opened; None for anything else (lm.load.open_model refuses it)."""
    if not isinstance(scorer, NeuralScorer) or scorer.kind != "lstm":
        return None
    if scorer.carry_state:
        raise LMError(f"{scorer.name}: inspect reads each item from a fresh state (carry_state is off)")
    return OpenLSTM(scorer)


# ---- interventions as hooks on the stepper's hook points (lm/neural/cell.py) ----------
def _recorders(hs: dict, cs: dict | None, layers, steps: int) -> dict[str, Hook]:
    """Hooks keeping ``layers``' h (into ``hs``) and c (into ``cs``, unless None) at every
    step: {layer: (items, steps, H)}, one row per item (one copy), zero past its end."""
    def keep(into: dict, layer: int) -> Hook:
        def hook(v: torch.Tensor, t: int) -> None:
            if t == 0:      # every item is in flight at the first step
                into[layer] = v.new_zeros((v.shape[0], steps, v.shape[1]))
            into[layer][:v.shape[0], t] = v
        return hook
    hooks = {hook_point(layer, "h"): keep(hs, layer) for layer in layers}
    if cs is not None:
        hooks.update({hook_point(layer, "c"): keep(cs, layer) for layer in layers})
    return hooks


def _fixers(masks: dict) -> dict[str, Hook]:
    """Hooks turning each layer's h into ``h * mask + add`` at every step ({layer: (mask,
    add)}, each (rows, H) for every row of the batch; the rows in flight come first)."""
    def fix(mask: torch.Tensor, add: torch.Tensor) -> Hook:
        return lambda h, t: h * mask[:h.shape[0]] + add[:h.shape[0]]
    return {hook_point(layer, "h"): fix(m, a) for layer, (m, a) in masks.items()}


def _patchers(plan: dict) -> dict[str, Hook]:
    """Hooks replacing given rows' h and c: ``plan`` {layer: {step: (rows, h, c)}}."""
    def put(at: dict, which: int) -> Hook:
        def hook(v: torch.Tensor, t: int) -> torch.Tensor | None:
            return v.index_copy(0, at[t][0], at[t][which]) if t in at else None
        return hook
    hooks: dict[str, Hook] = {}
    for layer, at in plan.items():
        hooks[hook_point(layer, "c")] = put(at, 2)
        hooks[hook_point(layer, "h")] = put(at, 1)
    return hooks
