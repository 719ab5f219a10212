"""Opening a language model: its inner states, read and changed (``agree inspect``,
docs/inspect.md).

A :class:`lm.base.Scorer` answers with probabilities only. :func:`lm.load.open_model`
turns one into an :class:`OpenModel` (through its backend's record, :mod:`lm.backends`),
which also says where its states are (:class:`Site`: an LSTM's hidden and cell states
per layer, a transformer's residual stream, MLP units and attention heads) and runs the items with those states read, ablated or patched:

* :meth:`OpenModel.states` streams the clean states, batch by batch (nothing kept);
* :meth:`OpenModel.preference` is each item's ``log P(correct) - log P(wrong)``;
* :meth:`OpenModel.ablate` re-scores the items with sets of units fixed (zero, or a
  given value such as the unit's mean) at every position, many sets per pass;
* :meth:`OpenModel.patch` re-scores them with the state at one position per item
  replaced by a donor run's (the item with its cue in the other number), every
  layer (and head) per pass.

The preference is the target method's for a word-level model. A subword model
scores one piece per form (both forms must be a single piece in context: items
whose forms are not are left out, and counted: :meth:`OpenModel.encode`), without the
word-end factor of ``agree score`` (the two differ where a form's word-end mass
differs; ``agree inspect`` reports the clean accuracy it measures beside each table).

Backends: agree's LSTM (:mod:`lm.neural.open_lstm`), agree's transformer
(:mod:`lm.neural.open_transformer`) and Hugging Face causal models on transformers
(:mod:`lm.hf.open`). KenLM, unigram, masked and llama.cpp models cannot be opened:
:func:`lm.load.open_model` says so in one :class:`LMError` (:func:`cannot_open`).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from lm.base import TargetQuery
from lm.errors import LMError

#: what can be opened, said in every refusal
OPENABLE = ("agree's lstm and transformer models (`agree train-lm`), and Hugging Face causal "
            "models on the transformers engine (a save_pretrained directory, or gguf:FILE with "
            "engine transformers)")


@dataclass(frozen=True)
class Site:
    """A place inside a model whose states can be read or changed.

    name     ``hidden``/``cell`` (LSTM h and c), ``resid`` (a transformer block's
             output, the residual stream), ``mlp`` (a block's MLP hidden units),
             ``heads`` (a block's attention head outputs, before the output projection)
    layers   how many layers have it (layer indices 0..layers-1)
    width    units per layer (``heads``: heads per layer)
    probe    whether its states are vectors a probe reads (``heads``: no)
    ablate   whether its units can be ablated
    patch    whether :meth:`OpenModel.patch` takes it
    """
    name: str
    layers: int
    width: int
    probe: bool = True
    ablate: bool = True
    patch: bool = False


@dataclass(frozen=True)
class ItemInput:
    """One item as an opened model reads it.

    ids        the token ids fed: the start symbol, then the words' pieces through the
               target word (in its correct form)
    word_last  per word 0..target, the position in ``ids`` of its last piece
    predict    the position whose output scores the target (just before its first piece)
    correct    the id of the correct form (one piece); ``wrong``: of the wrong form
    """
    ids: tuple[int, ...]
    word_last: tuple[int, ...]
    predict: int
    correct: int
    wrong: int

    def __len__(self) -> int:
        return len(self.ids)


class OpenModel(ABC):
    """A model whose states can be read, ablated and patched (module docstring)."""

    #: the scorer's kind (lstm, transformer, hf, gguf) and name
    kind: str = ""
    name: str = ""
    #: rows per forward pass (a pass with interventions holds several rows per item)
    batch_rows: int = 4096

    @property
    @abstractmethod
    def sites(self) -> dict[str, Site]:
        """The sites of this model, by name."""

    @abstractmethod
    def encode(self, query: TargetQuery) -> ItemInput | str:
        """The item as this model reads it, or why it cannot be read (a short reason)."""

    @abstractmethod
    def states(self, inputs: Sequence[ItemInput], names: Sequence[str]) -> Iterator[
            tuple[list[int], dict[tuple[str, int], np.ndarray]]]:
        """Clean states at every position, a batch at a time: (indices into ``inputs``,
        {(site, layer): float32 (b, T, width)}), positions past an input's end padding."""

    @abstractmethod
    def preference(self, inputs: Sequence[ItemInput]) -> np.ndarray:
        """Per input, natural-log P(correct) - P(wrong) of the clean run, float64 (n,)."""

    @abstractmethod
    def ablate(self, inputs: Sequence[ItemInput], name: str,
               unit_sets: Sequence[Sequence[tuple[int, int]]],
               fill: dict[int, np.ndarray] | None = None) -> np.ndarray:
        """The preference with each set of (layer, unit) of site ``name`` fixed at every
        position to ``fill[layer][unit]`` (None, or a layer not in it: zero); float64
        (len(unit_sets), n)."""

    def patch_targets(self, name: str) -> list[tuple[int, int | None]]:
        """What :meth:`patch` changes, in the order of its rows: (layer, head or None)."""
        site = self.site(name)
        if not site.patch:
            raise LMError(f"{self.name}: the {name} site cannot be patched (patchable: "
                          f"{', '.join(n for n, s in self.sites.items() if s.patch) or 'none'})")
        if name == "heads":
            return [(layer, h) for layer in range(site.layers) for h in range(site.width)]
        return [(layer, None) for layer in range(site.layers)]

    @abstractmethod
    def patch(self, inputs: Sequence[ItemInput], donors: Sequence[ItemInput], name: str,
              pos: Sequence[int], donor_pos: Sequence[int]) -> np.ndarray:
        """The preference of each input with the state of ``name`` at position ``pos[i]``
        replaced by the donor run's at ``donor_pos[i]``, one row per :meth:`patch_targets`
        entry; float64 (targets, n)."""

    # ---- shared checks ---------------------------------------------------
    def site(self, name: str) -> Site:
        if name not in self.sites:
            raise LMError(f"{self.name}: no site {name!r} (this model has "
                          f"{', '.join(self.sites)})")
        return self.sites[name]

    def check_units(self, name: str, unit_sets: Sequence[Sequence[tuple[int, int]]]) -> Site:
        """The site, after checking every (layer, unit) of ``unit_sets`` against it."""
        site = self.site(name)
        if not site.ablate:
            raise LMError(f"{self.name}: the units of {name} cannot be ablated")
        for units in unit_sets:
            for layer, unit in units:
                if not 0 <= layer < site.layers:
                    raise LMError(f"{self.name}: layer {layer} is out of range for {name} "
                                  f"(layers 0 to {site.layers - 1})")
                if not 0 <= unit < site.width:
                    raise LMError(f"{self.name}: unit {unit} is out of range for {name} "
                                  f"layer {layer} (units 0 to {site.width - 1})")
        return site

    def set_masks(self, unit_sets: Sequence[Sequence[tuple[int, int]]], width: int,
                  fill: dict[int, np.ndarray] | None, per_unit: int = 1):
        """{layer: (mask, add)}, each (len(unit_sets), width * per_unit) float32 numpy:
        a state x becomes x * mask + add (``per_unit`` columns per unit: a head's slice)."""
        out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for k, units in enumerate(unit_sets):
            for layer, unit in units:
                if layer not in out:
                    out[layer] = (np.ones((len(unit_sets), width * per_unit), dtype=np.float32),
                                  np.zeros((len(unit_sets), width * per_unit), dtype=np.float32))
                mask, add = out[layer]
                cols = slice(unit * per_unit, (unit + 1) * per_unit)
                mask[k, cols] = 0.0
                add[k, cols] = 0.0 if fill is None or layer not in fill else float(fill[layer][unit])
        return out

def by_length(inputs: Sequence[ItemInput], rows: int, per_item: int = 1) -> Iterator[list[int]]:
    """Indices of ``inputs``, longest first, in batches of at most ``rows`` rows
    (``per_item`` rows each); the same inputs always give the same batches."""
    order = sorted(range(len(inputs)), key=lambda i: (-len(inputs[i]), i))
    step = max(1, rows // max(1, per_item))
    for s in range(0, len(order), step):
        yield order[s:s + step]


def single_piece_input(word_ids: Sequence[int], owner: Sequence[int], target: int,
                       wrong_ids: Sequence[int]) -> ItemInput | str:
    """An :class:`ItemInput` from a subword encoding of the words through the target
    (``owner``: the word of each id, -1 for the start symbol) and the wrong form's
    pieces in the same place; a reason when a form is not one piece."""
    first = [p for p, w in enumerate(owner) if w == target]
    if not first:
        return "the target has no piece of its own"
    if len(first) != 1 or len(wrong_ids) != 1:
        return "a form of several pieces"
    last: list[int] = []
    for w in range(target + 1):
        mine = [p for p, o in enumerate(owner) if o == w]
        if not mine:
            return "a word without a piece of its own"
        last.append(mine[-1])
    return ItemInput(tuple(word_ids), tuple(last), first[0] - 1, int(word_ids[first[0]]),
                     int(wrong_ids[0]))


def cannot_open(name: str, what: str) -> LMError:
    """The one refusal: model ``name`` (``what`` it is, in words) has no states to open."""
    return LMError(f"{name}: {what} cannot be opened (inspect reads states of {OPENABLE})")
