"""Transformers opened through hooks (:class:`HookedModel`): the engine shared by agree's
transformer (:mod:`lm.neural.open_transformer`) and Hugging Face causal models
(:mod:`lm.hf.open`).

Sites: ``resid`` (each block's output, the residual stream), ``mlp`` (the input of a
block's MLP output projection: its hidden units, after the activation) and ``heads``
(the input of the attention output projection, split into heads: each head's output
before it is mixed into the stream). Forward hooks read them and change them; the
changes of one pass are a plan of operations on rows (several rows per item, one per
intervention): ``set`` (rows at one position each get given values, in a slice of the
units for a head) and ``affine`` (every position of the rows becomes ``x * mask + fill``:
ablation).

Why it is fast: a pass holds many interventions (rows = items x interventions), and
the output layer runs only for the two forms at the scored position. Where the
backend can start a pass at a given block from given hidden states
(:meth:`HookedModel.run_from`: agree's transformer, and Llama-family Hugging Face
models), an intervention at block ``l`` runs blocks ``l``.. only, from the clean
states below, kept from one clean pass per batch of items: on average half the blocks.
Otherwise every pass runs the whole model with the hooks (same numbers, slower).
Right padding needs no attention mask: the models are causal, so a position never
reads the padding after it.
"""
from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from lm.errors import LMError
from lm.open import ItemInput, OpenModel, Site, by_length
from treebanks.progress import progress

log = logging.getLogger(__name__)

#: items of one clean pass whose states at every block are kept for the passes that
#: start inside the model (B x T x width x (blocks + 1) floats)
CLEAN_ITEMS = 64


@dataclass
class Op:
    """One change at a site: ``set`` values (rows, hi - lo) at (rows, pos), units lo:hi;
    ``affine``: x * mask + fill at every position, mask and fill (R, width)."""
    kind: str
    rows: torch.Tensor | None = None
    pos: torch.Tensor | None = None
    values: torch.Tensor | None = None
    lo: int = 0
    hi: int | None = None
    mask: torch.Tensor | None = None
    fill: torch.Tensor | None = None


def _apply(x: torch.Tensor, ops: Sequence[Op]) -> torch.Tensor:
    x = x.clone()
    for op in ops:
        if op.kind == "set":
            x[op.rows, op.pos, op.lo:op.hi] = op.values.to(x.dtype)
        else:
            x = x * op.mask[:, None, :].to(x.dtype) + op.fill[:, None, :].to(x.dtype)
    return x


class HookedModel(OpenModel):
    """The engine (module docstring). A backend sets, in its ``__init__``:
    ``blocks`` (the block modules, in order), ``mlp_out`` / ``head_out`` (per block, the
    module whose *input* is the MLP units / the concatenated heads; None when not
    reachable), ``n_heads``, ``d_model``, ``device``, ``pad_id``, ``out_w``/``out_b``
    (the output layer, fp32), and implements :meth:`embed`, :meth:`final` and, where it
    can, :meth:`run_from`."""

    blocks: list
    mlp_out: list | None = None
    head_out: list | None = None
    n_heads: int = 0
    d_model: int = 0
    skips: bool = False     # whether run_from works

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """The input of block 0 (R, T, D)."""
        raise NotImplementedError

    def final(self, ids: torch.Tensor) -> torch.Tensor:
        """The whole model with the hooks: the final hidden states (R, T, D)."""
        raise NotImplementedError

    def run_from(self, start: int, hidden: torch.Tensor) -> torch.Tensor:
        """Blocks ``start``.. from ``hidden`` (R, T, D), then the final norm."""
        raise NotImplementedError

    # ---- sites ---------------------------------------------------------------
    @property
    def sites(self) -> dict[str, Site]:
        L = len(self.blocks)
        out = {"resid": Site("resid", L, self.d_model, patch=True)}
        if self.mlp_out is not None:
            out["mlp"] = Site("mlp", L, _in_width(self.mlp_out[0]))
        if self.head_out is not None:
            out["heads"] = Site("heads", L, self.n_heads, probe=False, patch=True)
        return out

    def _module(self, name: str, layer: int):
        return {"resid": self.blocks, "mlp": self.mlp_out, "heads": self.head_out}[name][layer]

    @contextlib.contextmanager
    def _hooks(self, plan: dict, record: dict | None = None):
        """Hooks carrying out ``plan`` {(site, layer): [Op]} and filling ``record``
        {(site, layer): None} with what each site held (after the plan's changes)."""
        handles = []
        wanted = set(plan) | set(record or {})

        def post(key):
            def hook(module, args, output):
                x = output[0] if isinstance(output, tuple) else output
                if key in plan:
                    x = _apply(x, plan[key])
                if record is not None and key in record:
                    record[key] = x
                if key not in plan:
                    return None
                return (x, *output[1:]) if isinstance(output, tuple) else x
            return hook

        def pre(key):
            def hook(module, args):
                x = args[0]
                if key in plan:
                    x = _apply(x, plan[key])
                if record is not None and key in record:
                    record[key] = x
                return (x, *args[1:]) if key in plan else None
            return hook

        try:
            for key in wanted:
                module = self._module(*key)
                handles.append(module.register_forward_hook(post(key)) if key[0] == "resid"
                               else module.register_forward_pre_hook(pre(key)))
            yield
        finally:
            for h in handles:
                h.remove()

    # ---- helpers --------------------------------------------------------------
    def _ids(self, part: Sequence[ItemInput], upto) -> torch.Tensor:
        steps = [upto(i) for i in part]
        ids = torch.full((len(part), max(steps)), self.pad_id, dtype=torch.long)
        for b, (inp, n) in enumerate(zip(part, steps)):
            ids[b, :n] = torch.tensor(inp.ids[:n])
        return ids.to(self.device)

    def _score(self, final: torch.Tensor, part: Sequence[ItemInput], copies: int) -> np.ndarray:
        """(copies, B): the forms' logit difference at each row's scored position."""
        rows = torch.arange(final.shape[0], device=self.device)
        where = torch.tensor([i.predict for i in part], device=self.device).repeat_interleave(copies)
        h = final[rows, where].float()
        good = torch.tensor([i.correct for i in part], device=self.device)
        bad = torch.tensor([i.wrong for i in part], device=self.device)
        dw = (self.out_w[good] - self.out_w[bad]).repeat_interleave(copies, 0)
        d = (h * dw).sum(1)
        if self.out_b is not None:
            d = d + (self.out_b[good] - self.out_b[bad]).repeat_interleave(copies, 0)
        return d.view(len(part), copies).t().double().cpu().numpy()

    def _clean(self, ids: torch.Tensor) -> list[torch.Tensor]:
        """The input of every block and the last block's output: [embeddings, resid 0, ...]."""
        record = {("resid", l): None for l in range(len(self.blocks))}
        with self._hooks({}, record):
            self.final(ids)
        return [self.embed(ids)] + [record[("resid", l)] for l in range(len(self.blocks))]

    def _recorded(self, inputs, keys, upto):
        """Clean passes, a batch of items at a time: (indices, {key: what the site held})."""
        with torch.inference_mode():
            for batch in by_length(inputs, CLEAN_ITEMS):
                record = dict.fromkeys(keys)
                with self._hooks({}, record):
                    self.final(self._ids([inputs[i] for i in batch], upto))
                yield batch, record

    # ---- the interface ----------------------------------------------------------
    def states(self, inputs, names):
        keys = [(n, l) for n in names for l in range(self.site(n).layers) if self.site(n).probe]
        for batch, record in self._recorded(inputs, keys, len):
            yield batch, {k: v.float().cpu().numpy() for k, v in record.items()}

    def preference(self, inputs) -> np.ndarray:
        out = np.empty(len(inputs))
        with torch.inference_mode():
            for batch in by_length(inputs, self.batch_rows):
                part = [inputs[i] for i in batch]
                out[batch] = self._score(self.final(self._ids(part, _scored)), part, 1)[0]
        return out

    def ablate(self, inputs, name, unit_sets, fill=None) -> np.ndarray:
        site = self.check_units(name, unit_sets)
        per_unit = self._module_width(name, 0) // site.width
        masks = {l: (torch.from_numpy(m).to(self.device), torch.from_numpy(a).to(self.device))
                 for l, (m, a) in self.set_masks(unit_sets, site.width, fill, per_unit).items()}
        out = np.empty((len(unit_sets), len(inputs)))
        with torch.inference_mode():
            for batch in by_length(inputs, CLEAN_ITEMS):
                part = [inputs[i] for i in batch]
                ids = self._ids(part, _scored)
                clean = self._clean(ids) if self.skips and masks else None
                per = max(1, self.batch_rows // len(part))
                for s in range(0, len(unit_sets), per):
                    k = slice(s, s + per)
                    K = len(unit_sets[k])
                    rows = {l: (m[k].repeat(len(part), 1), a[k].repeat(len(part), 1))
                            for l, (m, a) in masks.items()}
                    out[k, batch] = self._score(self._ablated(ids, clean, name, K, rows), part, K)
        return out

    def _ablated(self, ids, clean, name, K, rows) -> torch.Tensor:
        """Final states of ``K`` rows per item with ``rows`` {layer: (mask, add)} applied."""
        plan = {(name, l): [Op("affine", mask=m, fill=a)] for l, (m, a) in rows.items()}
        if clean is None:
            with self._hooks(plan):
                return self.final(ids.repeat_interleave(K, 0))
        first = min(rows)
        if name == "resid":   # the first block's output changed: start at the next block
            m, a = rows[first]
            del plan[(name, first)]
            hidden = clean[first + 1].repeat_interleave(K, 0) * m[:, None] + a[:, None]
            with self._hooks(plan):
                return self.run_from(first + 1, hidden)
        with self._hooks(plan):
            return self.run_from(first, clean[first].repeat_interleave(K, 0))

    def _module_width(self, name: str, layer: int) -> int:
        return self.d_model if name == "resid" else _in_width(self._module(name, layer))

    def patch(self, inputs, donors, name, pos, donor_pos) -> np.ndarray:
        targets = self.patch_targets(name)
        L = len(self.blocks)
        source = "heads" if name == "heads" else "resid"
        donor = self._donor_values(donors, donor_pos, source)             # {layer: (n, width)}
        out = np.empty((len(targets), len(inputs)))
        hd = self._module_width("heads", 0) // self.n_heads if name == "heads" else 0
        bar = progress(log, total=len(targets) * len(inputs), desc=f"patching {name}", unit="run")
        with torch.inference_mode(), bar:
            for batch in by_length(inputs, CLEAN_ITEMS):
                part = [inputs[i] for i in batch]
                for b, i in enumerate(batch):
                    if not 0 <= pos[i] <= part[b].predict:
                        raise LMError(f"{self.name}: patch position {pos[i]} is not before the target")
                ids = self._ids(part, _scored)
                where = torch.tensor([pos[i] for i in batch], device=self.device)
                groups: dict[int, list[int]] = {}
                for k, (layer, head) in enumerate(targets):
                    start = layer + 1 if head is None else layer
                    groups.setdefault(start if self.skips else 0, []).append(k)
                clean = self._clean(ids) if self.skips else None
                for start, ks in sorted(groups.items()):
                    per = max(1, self.batch_rows // len(part))
                    for s in range(0, len(ks), per):
                        chunk = ks[s:s + per]
                        final = self._patched(ids, clean, start, [targets[k] for k in chunk], donor,
                                              batch, where, hd, L)
                        out[np.ix_(chunk, batch)] = self._score(final, part, len(chunk))
                        bar.update(len(chunk) * len(batch))
        return out

    def _patched(self, ids, clean, start, chunk, donor, batch, where, hd, L) -> torch.Tensor:
        """Final hidden states of rows (item-major, one per target of ``chunk``)."""
        K, B = len(chunk), len(batch)
        plan: dict = {}
        hidden = None if clean is None else clean[start].repeat_interleave(K, 0).clone()
        for k, (layer, head) in enumerate(chunk):
            rows = torch.arange(B, device=self.device) * K + k
            values = donor[layer][batch]
            if head is not None:
                plan.setdefault(("heads", layer), []).append(
                    Op("set", rows, where, values[:, head * hd:(head + 1) * hd], head * hd, (head + 1) * hd))
            elif clean is None:
                plan.setdefault(("resid", layer), []).append(Op("set", rows, where, values))
            else:
                hidden[rows, where] = values.to(hidden.dtype)
        with self._hooks(plan):
            if clean is None:
                return self.final(ids.repeat_interleave(K, 0))
            return self.run_from(start, hidden)

    def _donor_values(self, donors, donor_pos, source: str) -> dict[int, torch.Tensor]:
        """Per block, what ``source`` held at each donor's position (n, width)."""
        out: dict[int, torch.Tensor] = {}
        keys = [(source, l) for l in range(len(self.blocks))]
        for batch, record in self._recorded(donors, keys, _scored):
            rows = torch.arange(len(batch), device=self.device)
            where = torch.tensor([donor_pos[i] for i in batch], device=self.device)
            for (_, layer), x in record.items():
                if layer not in out:
                    out[layer] = x.new_empty((len(donors), x.shape[-1]))
                out[layer][torch.tensor(batch, device=self.device)] = x[rows, where]
        return out


def _scored(inp: ItemInput) -> int:
    """Positions a pass must read for the item's preference: through the scored one."""
    return inp.predict + 1


def _in_width(module) -> int:
    """The input width of a linear-like module (nn.Linear, GPT-2's Conv1D)."""
    if hasattr(module, "in_features"):
        return int(module.in_features)
    w = module.weight
    return int(w.shape[0]) if type(module).__name__ == "Conv1D" else int(w.shape[1])
