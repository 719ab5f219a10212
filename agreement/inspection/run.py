"""``agree inspect``'s library verb, :func:`inspect_to_dir`: a test set and one model ->
unit ablation, activation trajectories, diagnostic probes and activation patching
(docs/inspect.md), written as tables, PNGs, ``inspect.md`` and a manifest.

Everything the input can get wrong is checked before ``--out`` is claimed: the test
set must have items, the model must open (:func:`lm.load.open_spec`), the site and
layers must exist, some item must be readable, and an analysis asked for by name
must have items it can use (patching: items with a known cue and its other-number
form). What is left out, and why, is counted in ``inspect.md`` and the manifest.
"""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from agreement.errors import AgreeError
from agreement.inspection.ablation import Ablation, SetRow, UnitRow, ablate_units
from agreement.inspection.cases import Case, make_cases, twin_queries
from agreement.inspection.patching import PatchRow, Patching, patch_cases
from agreement.inspection.plots import plot_ablation, plot_patching, plot_probes, plot_trajectories
from agreement.inspection.probes import ProbeRow, probe_states, sample_cases
from agreement.inspection.report import write_report
from agreement.inspection.tables import (PATCHING_FILE, PROBES_FILE, TOPK_FILE, TRAJECTORIES_FILE,
                                         UNITS_FILE, write_rows)
from agreement.inspection.trajectories import TrajectoryRow, trajectories
from formats.files import check_out
from formats.run import RunContext
from formats.testsets import load_testset, testset_inputs
from lm.errors import FieldError
from lm.load import model_spec, open_spec, spec_path
from lm.open import ItemInput, OpenModel
from treebanks.paradigms import ParadigmTable

log = logging.getLogger(__name__)

ANALYSES = ("ablation", "trajectories", "probes", "patching")
FILLS = ("zero", "mean")
#: units whose trajectories are drawn (the top of the ablation ranking)
TRAJECTORY_UNITS = 4


@dataclass(frozen=True)
class InspectOptions:
    """What to run and how (None: the model's default).

    analyses      of :data:`ANALYSES`; ``named``: the user chose them (one that cannot run
                  is then an error, not a note); trajectories need the ablation's ranking
    site          the ablation site (lstm: hidden; transformers: mlp)
    layers        the layers swept (all)
    fill          ``zero`` or ``mean`` (each unit's mean state over the items)
    top, draws    units ablated together, and random sets of as many
    folds, probe_items  probe folds; cases probed at most
    max_items     cases inspected at most (whole items drawn by the seed)
    paradigms     a paradigms.tsv or an extract directory holding one
    fmt, lang     the test set's format and language (as ``agree score``)
    device, dtype, batch_size (rows per pass), threads, engine: the model's
    """
    analyses: tuple[str, ...] = ANALYSES
    named: bool = False
    site: str | None = None
    layers: tuple[int, ...] | None = None
    fill: str = "zero"
    top: int = 2
    draws: int = 20
    folds: int = 5
    probe_items: int = 2000
    max_items: int | None = None
    paradigms: str | None = None
    fmt: str = "auto"
    lang: str | None = None
    device: str | None = None
    dtype: str | None = None
    batch_size: int | None = None
    threads: int | None = None
    engine: str | None = None


@dataclass
class Inspection:
    """What one run found (the report renders it)."""
    model: str
    kind: str
    testset: str
    items: int
    cases: int
    inspected: int
    sampled: int | None = None
    skipped: Counter = field(default_factory=Counter)
    clean_accuracy: float = float("nan")
    ablation: Ablation | None = None
    trajectories: list[TrajectoryRow] = field(default_factory=list)
    probes: list[ProbeRow] = field(default_factory=list)
    probed: int = 0
    patching: Patching | None = None
    patched: int = 0
    twin_skipped: Counter = field(default_factory=Counter)
    sites: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _load(testset: str, model: str, options: InspectOptions, run: RunContext):
    ts = load_testset(run.path(testset), options.fmt, lang=options.lang)
    if not ts.items:
        raise AgreeError(f"{testset}: no items in the test set")
    table = ParadigmTable.load(run.path(options.paradigms)) if options.paradigms else None
    load_opts = {k: v for k, v in (("device", options.device), ("dtype", options.dtype),
                                   ("threads", options.threads), ("engine", options.engine))
                 if v is not None}
    # the backend decides how it opens (a GGUF file: on transformers, llama.cpp refused)
    opened = open_spec(model_spec(model, run.root), **load_opts)
    if options.batch_size:
        opened.batch_rows = options.batch_size
    return ts, table, opened


def _defaults(model: OpenModel, options: InspectOptions) -> dict:
    """The sites each analysis uses on this model."""
    sites = model.sites
    lstm = "hidden" in sites
    ablate = options.site or ("hidden" if lstm else "mlp" if "mlp" in sites else "resid")
    site = model.site(ablate)
    if not site.ablate:
        raise FieldError(f"{{site}} {ablate}: its units cannot be ablated (ablatable: "
                         + ", ".join(n for n, s in sites.items() if s.ablate) + ")")
    if options.fill == "mean" and not site.probe:
        raise FieldError(f"{{fill}} mean: the states of {ablate} are not read one by one; use zero")
    layers = tuple(options.layers) if options.layers is not None else tuple(range(site.layers))
    bad = [l for l in layers if not 0 <= l < site.layers]
    if bad:
        raise FieldError(f"{{layers}}: layer {bad[0]} is out of range for {ablate} of {model.name} "
                         f"(layers 0 to {site.layers - 1})")
    units = site.width * len(set(layers))
    if "ablation" in options.analyses or "trajectories" in options.analyses:
        if options.top >= units:   # the random sets of as many would be the top set itself
            raise FieldError(f"{{top}} {options.top}: {ablate} of {model.name} has {units} units in the layers "
                             f"swept; the top set is compared with random sets of as many, so at most {units - 1}")
    return {"ablation": ablate, "layers": layers,
            "trajectories": ("hidden", "cell") if lstm and ablate == "hidden" else (ablate,),
            "probes": tuple(n for n, s in sites.items() if s.probe and n != "mlp") or ("resid",),
            "patching": tuple(n for n, s in sites.items() if s.patch)}


def _encode(model: OpenModel, cases: Sequence[Case]) -> tuple[list[Case], list[ItemInput], Counter]:
    kept, inputs, why = [], [], Counter()
    for c in cases:
        got = model.encode(c.query)
        if isinstance(got, str):
            why[f"{got} (for this model)"] += 1
        else:
            kept.append(c)
            inputs.append(got)
    return kept, inputs, why


def _twins(model: OpenModel, cases, inputs, table) -> tuple[list[int], list[ItemInput], Counter]:
    queries, why = twin_queries(cases, table)
    keep, twins = [], []
    for i, q in enumerate(queries):
        if q is None:
            continue
        got = model.encode(q)
        if isinstance(got, str):
            why[f"the twin: {got}"] += 1
            continue
        keep.append(i)
        twins.append(got)
    return keep, twins, why


def inspect_to_dir(run: RunContext, testset: str, model: str, options: InspectOptions) -> Inspection:
    """Run the analyses (module docstring) and write ``run.out`` (``run.seed`` fixes every
    draw); returns what was found."""
    seed = run.seed
    # --out checked before the model loads (the claim itself comes with the results)
    check_out(run.path(run.out), run.command, [run.path(p) for p in (testset, spec_path(model), options.paradigms)],
              run.force)
    ts, table, opened = _load(testset, model, options, run)
    sites = _defaults(opened, options)
    analyses = set(options.analyses) | ({"ablation"} if "trajectories" in options.analyses else set())
    cases, skipped = make_cases(ts.items, table)
    if not cases:
        raise AgreeError(f"{testset}: no item has a known subject number ({_reasons(skipped)})")
    rng = np.random.default_rng(seed)
    known, sampled = len(cases), None
    if options.max_items is not None and len(cases) > options.max_items:
        every = cases
        cases = [cases[i] for i in sample_cases(cases, options.max_items, rng)]
        sampled = len(cases)
        if not cases:   # whole items are drawn: an item's variants come together
            smallest = min(Counter(c.item.item_id for c in every).values())
            raise FieldError(f"{{max_items}} {options.max_items}: no whole item fits (an item and its variants "
                             f"are drawn together; the smallest has {smallest}); give {{max_items}} {smallest} "
                             f"or more")
    cases, inputs, unread = _encode(opened, cases)
    skipped += unread
    if not inputs:
        raise AgreeError(f"{testset}: the model reads none of the items ({_reasons(skipped)})")
    found = Inspection(opened.name, opened.kind, testset, len(ts.items), known, len(cases), sampled, skipped,
                       sites={k: sites[k] for k in ANALYSES if k in sites})
    if skipped:
        log.info(f"left out {sum(skipped.values())} of {len(ts.items)} items: {_reasons(skipped)}")
    if "probes" in analyses and min(len(cases), options.probe_items) < 2 * options.folds:
        _drop(found, analyses, options, "probes", f"probes: {min(len(cases), options.probe_items)} item(s), fewer "
              f"than the {2 * options.folds} that {options.folds} cross-validation folds need (2 per fold)")
    twin_keep, twins = [], []
    if "patching" in analyses:
        twin_keep, twins, found.twin_skipped = _twins(opened, cases, inputs, table)
        if not twins:
            _drop(found, analyses, options, "patching",
                  f"patching: no item has a twin with the cue in the other number ({_reasons(found.twin_skipped)})")
        elif found.twin_skipped:
            log.info(f"patching {len(twins)} items; without a twin: {_reasons(found.twin_skipped)}")
    inputs_files = [*testset_inputs(run.path(testset), options.fmt), run.path(spec_path(model))]
    if options.paradigms:
        inputs_files.append(run.path(options.paradigms))
    described = run.describe_inputs(inputs_files)   # what was read, before the hours of work
    # the test set as given too: a directory's items.tsv alone would let --out lie inside it
    with run.output_dir([testset, *inputs_files]) as tmp:
        _run_analyses(found, opened, cases, inputs, twin_keep, twins, analyses, sites, options, seed, tmp)
        write_report(found, tmp, options)
        run.write_manifest(tmp, inputs_files, _parameters(options, seed, sites), described=described,
                           counts=_counts(found))
    return found


def _drop(found: Inspection, analyses: set, options: InspectOptions, name: str, msg: str) -> None:
    """An analysis without the items it needs: an error when asked for by name, else
    left out with a warning and a note in inspect.md."""
    if options.named:
        raise AgreeError(msg)
    analyses.discard(name)
    found.notes.append(msg)
    log.warning(f"Warning: {msg}")


def _run_analyses(found, opened, cases, inputs, twin_keep, twins, analyses, sites, options, seed, tmp: Path) -> None:
    """Each analysis with its own generator (seed, k), so that one never shifts another's draws."""
    title = f"{found.model} on {Path(found.testset).name}"
    found.clean_accuracy = float(np.mean(opened.preference(inputs) > 0))
    log.info(f"inspecting {found.model}: {len(inputs)} items ({found.clean_accuracy:.1%} right)")
    if "ablation" in analyses:
        ab = ablate_units(opened, cases, inputs, site=sites["ablation"], layers=sites["layers"],
                          fill=options.fill, k=options.top, draws=options.draws,
                          rng=np.random.default_rng([seed, 1]))
        found.ablation = ab
        write_rows(tmp / UNITS_FILE, ab.rows, UnitRow)
        write_rows(tmp / TOPK_FILE, ab.sets, SetRow)
        plot_ablation(ab, tmp / "ablation.png", title)
    if "trajectories" in analyses and found.ablation is not None:
        units = [(l, u) for l, u, _ in found.ablation.ranked[:TRAJECTORY_UNITS]]
        found.trajectories = trajectories(opened, cases, inputs, units, sites["trajectories"])
        write_rows(tmp / TRAJECTORIES_FILE, found.trajectories, TrajectoryRow)
        plot_trajectories(found.trajectories, tmp / "trajectories.png", title, units)
    if "probes" in analyses:
        rng = np.random.default_rng([seed, 2])
        pick = sample_cases(cases, options.probe_items, rng)
        found.probed = len(pick)
        found.probes = probe_states(opened, [cases[i] for i in pick], [inputs[i] for i in pick],
                                    sites["probes"], folds=options.folds, rng=rng)
        write_rows(tmp / PROBES_FILE, found.probes, ProbeRow)
        if found.probes:
            plot_probes(found.probes, tmp / "probes.png", title)
        else:   # every position has fewer items than the folds need
            msg = f"probes: no position has the {2 * options.folds} items that {options.folds} folds need"
            found.notes.append(msg)
            log.warning(f"Warning: {msg}")
    if "patching" in analyses:
        found.patched = len(twin_keep)
        found.patching = patch_cases(opened, [cases[i] for i in twin_keep], [inputs[i] for i in twin_keep],
                                     twins, sites["patching"], np.random.default_rng([seed, 3]))
        write_rows(tmp / PATCHING_FILE, found.patching.rows, PatchRow)
        plot_patching(found.patching.rows, tmp / "patching.png", title)


def _reasons(counts: Counter) -> str:
    return "; ".join(f"{n} {why}" for why, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"


def _parameters(options: InspectOptions, seed: int, sites: dict) -> dict:
    out = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(options).items()}
    out.update(seed=seed, sites={k: list(v) if isinstance(v, tuple) else v for k, v in sites.items()})
    return out


def _counts(found: Inspection) -> dict:
    return {"items": found.items, "cases": found.cases, "sampled": found.sampled, "inspected": found.inspected,
            "skipped": dict(sorted(found.skipped.items())), "probed": found.probed,
            "patched": found.patched, "twin_skipped": dict(sorted(found.twin_skipped.items())),
            "clean_accuracy": round(found.clean_accuracy, 6)}
