"""Benchmark: scoring the paper's 1,190 Italian agreement items, efficient vs naive.

Efficient: ``lm.load.load_model(dir).logprob(prefixes, targets)`` (lm/neural/scorer.py):
each prefix read once from a fresh ``<eos>`` state, batches sorted by length,
the output layer applied only to the last position (candidate logits plus one
normaliser per prefix).

Naive baseline, in this script (what the released code does, minus writing its
output): every sentence read whole, one sentence at a time, the decoder and a
full log-softmax at every position, the two candidates read off at the target
position.

Models have random weights (speed does not depend on them): a 2-layer 650-unit
LSTM over a 50,000-word vocabulary (the paper's size), a transformer, and, when
their backends are available, a 5-gram KenLM model and the unigram baseline
trained on the test sentences themselves. FLOP counts are of the work done (one step
per distinct prefix, no padding): per step 2 x (weights of the network body), per
prediction 2 x (decoder weights); the transformer's attention is not counted.

The sentence method (``--method sentence``: the whole correct and wrong sentences,
``word_logprobs`` summed) is timed too, for every backend, against its own naive
baseline for the LSTM: each sentence alone, full log-softmax at every position.

Usage: ``.venv/bin/python benchmarks/bench_score.py [--quick] [--threads N]``.
On 2 CPU cores the full run takes about 5 minutes, nearly all of it the naive
baseline over all 1,190 items (``--naive-items N`` times it on the first N);
``--quick`` takes about half a minute (300 items, naive on 60).
Without ``../shared/data`` the items are synthetic, with the real set's length
distribution (the script says so).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "colorlessgreen" / "Italian"

from lm.load import load_model  # noqa: E402
from lm.corpus.prepare import Corpus  # noqa: E402
from lm.neural.models import LMConfig, build_model  # noqa: E402
from lm.neural.prefixes import prefix_steps  # noqa: E402

V = 50_000
# Length distribution of the real Italian set, for the synthetic fallback:
# {length: number of original items} (each item has 10 variants of equal length)
# for the prefix (words before the target) and the rest of the sentence (target
# to <eos> included).
PREFIX_HIST = {5: 8, 6: 12, 7: 13, 8: 7, 9: 9, 10: 6, 11: 10, 12: 5, 13: 5, 14: 5, 15: 2,
               16: 4, 17: 5, 18: 4, 19: 4, 20: 3, 21: 3, 22: 3, 23: 3, 24: 1, 25: 1, 27: 1,
               29: 1, 31: 1, 32: 1, 33: 1, 34: 1}
REST_HIST = {3: 11, 5: 3, 6: 7, 7: 9, 8: 4, 9: 5, 10: 8, 11: 9, 12: 4, 13: 2, 14: 7, 15: 2,
             16: 2, 17: 2, 18: 3, 19: 4, 20: 4, 21: 1, 22: 5, 23: 2, 26: 3, 27: 2, 28: 1,
             29: 2, 31: 1, 32: 4, 34: 2, 36: 1, 38: 1, 42: 1, 43: 2, 47: 1, 48: 1, 51: 1,
             55: 1, 57: 1}


def read_items(directory: Path):
    """(prefix words, [correct, wrong], full sentence words) from generated.text/.gold."""
    text = (directory / "generated.text").read_text(encoding="utf-8").splitlines()
    gold = (directory / "generated.gold").read_text(encoding="utf-8").splitlines()
    items = []
    for sent, row in zip(text, gold):
        f = row.split("\t")
        words = sent.split()
        items.append((words[:int(f[3])], [f[6], f[7]], words))
    return items


def synthetic_items(rng: random.Random):
    """1,190 items of random words: 119 length pairs drawn from the histograms, 10 variants each."""
    prefix_lengths = [n for n, c in PREFIX_HIST.items() for _ in range(c)]
    rest_lengths = [n for n, c in REST_HIST.items() for _ in range(c)]
    rng.shuffle(rest_lengths)
    words = [f"parola{i}" for i in range(20_000)]
    items = []
    for n, rest in zip(prefix_lengths, rest_lengths):
        for _ in range(10):
            sent = [rng.choice(words) for _ in range(n + rest - 1)] + ["<eos>"]
            items.append((sent[:n], [rng.choice(words), rng.choice(words)], sent))
    return items


def matmul_flops(device: torch.device, seconds: float = 1.0) -> float:
    """Best fp32 GEMM rate (FLOP/s) of this machine now: square products of 2048 and 4096
    (MKL on this CPU runs the larger one markedly faster), the best of ~``seconds`` each."""
    best = 0.0
    for n in (2048, 4096):
        a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
        a @ b                                                  # warm-up
        spent = 0.0
        while spent < seconds:
            _sync(device)
            t = time.perf_counter()
            a @ b
            _sync(device)
            dt = time.perf_counter() - t
            spent += dt
            best = max(best, 2 * n ** 3 / dt)
    return best


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def make_vocab(items) -> list[str]:
    words = Counter(w for p, t, s in items for w in s + t if w != "<eos>")
    vocab = ["<eos>", "<unk>"] + sorted(words)
    return vocab + [f"riempitivo{i}" for i in range(V - len(vocab))]


def save_neural(out: Path, kind: str, vocab: list[str], **fields) -> Path:
    """A model directory with random weights, laid out as ``agree train-lm`` writes it."""
    out.mkdir(parents=True)
    cfg = LMConfig(kind=kind, vocab_size=len(vocab), dropout=0.0, **fields)
    torch.manual_seed(0)
    model = build_model(cfg)
    (out / "config.json").write_text(json.dumps(cfg.to_dict()), encoding="utf-8")
    torch.save({"state_dict": model.state_dict(), "config": cfg.to_dict()}, out / "model.pt")
    (out / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return out


def body_flops_per_token(model) -> int:
    """2 FLOPs per weight of the network body (matrices outside embedding and decoder)."""
    skip = {id(model.decoder.weight)} | {id(m.weight) for m in model.modules()
                                         if isinstance(m, torch.nn.Embedding)}
    return 2 * sum(p.numel() for p in model.parameters() if p.dim() == 2 and id(p) not in skip)


def time_scorer(scorer, items) -> float:
    prefixes, targets = [p for p, t, s in items], [t for p, t, s in items]
    scorer.logprob(prefixes[:32], targets[:32])  # warm-up (allocations, kernels)
    _sync(getattr(scorer, "device", torch.device("cpu")))
    t = time.perf_counter()
    out = scorer.logprob(prefixes, targets)
    _sync(getattr(scorer, "device", torch.device("cpu")))
    return time.perf_counter() - t, out


def sentence_pairs(items):
    """(correct sentence, wrong sentence) words of each item, <eos> dropped."""
    pairs = []
    for prefix, (good, bad), sent in items:
        words = [w for w in sent if w != "<eos>"]
        g, b = list(words), list(words)
        if len(prefix) < len(g):
            g[len(prefix)], b[len(prefix)] = good, bad
        pairs.append((g, b))
    return pairs


def time_sentence(scorer, items) -> tuple[float, list]:
    """Seconds for the sentence method over ``items`` (both sentences of each), and the
    (n, 2) sums."""
    pairs = sentence_pairs(items)
    flat = [g for g, b in pairs] + [b for g, b in pairs]
    scorer.word_logprobs(flat[:32])  # warm-up
    _sync(getattr(scorer, "device", torch.device("cpu")))
    t = time.perf_counter()
    words = scorer.word_logprobs(flat)
    _sync(getattr(scorer, "device", torch.device("cpu")))
    dt = time.perf_counter() - t
    n = len(pairs)
    return dt, [[float(words[i].sum()), float(words[n + i].sum())] for i in range(n)]


def naive_sentence(model, index, items, device) -> tuple[float, list]:
    """Each sentence alone, full log-softmax at every position, summed."""
    unk, out = index["<unk>"], []
    t = time.perf_counter()
    with torch.inference_mode():
        for pair in sentence_pairs(items):
            row = []
            for words in pair:
                ids = [index["<eos>"]] + [index.get(w, unk) for w in words]
                h, _ = model.features(torch.tensor([ids], device=device))
                logp = torch.log_softmax(model.decoder(h[0, :-1]), dim=-1)
                row.append(logp.gather(1, torch.tensor(ids[1:], device=device)[:, None]).sum().item())
            out.append(row)
    return time.perf_counter() - t, out


def naive(model, index, items, device) -> tuple[float, list]:
    """The released code's way: whole sentence, batch of one, full log-softmax everywhere."""
    unk, out = index["<unk>"], []
    t = time.perf_counter()
    with torch.inference_mode():
        for prefix, targets, sent in items:
            ids = [index["<eos>"]] + [index.get(w, unk) for w in sent]
            h, _ = model.features(torch.tensor([ids], device=device))
            logp = torch.log_softmax(model.decoder(h), dim=-1)          # (1, T, V)
            row = logp[0, len(prefix)]
            out.append([row[index.get(w, unk)].item() for w in targets])
    return time.perf_counter() - t, out


def other_backends(tmp: Path, items, vocab) -> list[tuple[str, float | None, str]]:
    """(kind, items/s or None, note) for kn5 and unigram, trained on the test sentences."""
    results = []
    cdir = tmp / "corpus"
    cdir.mkdir()
    lines = [" ".join(w for w in s if w != "<eos>") for p, t, s in items]
    for split in ("train", "valid", "test"):
        (cdir / f"{split}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    small = [w for w in vocab if not w.startswith("riempitivo")]
    (cdir / "vocab.txt").write_text("\n".join(small) + "\n", encoding="utf-8")
    counts = Counter(w for line in lines for w in line.split())
    (cdir / "counts.tsv").write_text("".join(f"{w}\t{c}\n" for w, c in counts.items()),
                                     encoding="utf-8")
    corpus = Corpus(cdir, "it", cdir / "train.txt", cdir / "valid.txt", cdir / "test.txt",
                    cdir / "vocab.txt", cdir / "counts.tsv", "0" * 64,
                    {"train": sum(counts.values())})
    for kind, module, fn in (("kn5", "lm.kenlm.scorer", "train_kn5"),
                             ("unigram", "lm.unigram", "train_unigram")):
        try:
            train = getattr(__import__(module, fromlist=[fn]), fn)
            out = tmp / kind
            train(corpus, out)   # no logging configured here: no progress lines
            dt, _ = time_scorer(load_model(out), items)
            results.append((kind, len(items) / dt, "target method, trained on the test sentences"))
            sdt, _ = time_sentence(load_model(out), items)
            results.append((f"{kind} sentence", len(items) / sdt, "sentence method, two sentences an item"))
        except Exception as e:  # noqa: BLE001 - a missing backend must not stop the benchmark
            results.append((kind, None, f"skipped: {type(e).__name__}: {e}"))
    return results


def _arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="300 items, naive baseline on 60 of them, smaller transformer")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                    help="torch CPU threads (default: the cores available)")
    ap.add_argument("--device", default="auto", help="auto, cpu or cuda")
    ap.add_argument("--data", type=Path, default=DATA,
                    help="directory with generated.text/.gold (synthetic items if absent)")
    ap.add_argument("--batch-size", type=int, default=512, help="scorer batch (sequences)")
    ap.add_argument("--naive-items", type=int, default=0,
                    help="items for the naive baseline (default: all; 60 with --quick)")
    return ap.parse_args()


def _items(args: argparse.Namespace, rng: random.Random) -> tuple[list, list, list[str]]:
    """(items, the naive baseline's evenly spaced subset, vocabulary), said on stdout."""
    if (args.data / "generated.gold").exists():
        items, source = read_items(args.data), f"real items from {args.data}"
    else:
        items = synthetic_items(rng)
        source = (f"SYNTHETIC items ({args.data} is absent): random words, "
                  "the real set's prefix-length distribution")
    if args.quick:
        items = rng.sample(items, 300)
    n_naive = min(args.naive_items or (60 if args.quick else len(items)), len(items))
    # evenly spaced, so that a subset keeps the set's length distribution
    naive_items = [items[i * len(items) // n_naive] for i in range(n_naive)]
    vocab = make_vocab(items)
    mean_prefix = sum(len(p) for p, t, s in items) / len(items)
    print(f"items: {len(items)} ({source}); mean prefix {mean_prefix:.1f} words; "
          f"vocabulary {len(vocab)}; torch {torch.__version__}, {args.threads} threads",
          flush=True)
    return items, naive_items, vocab


def _picked(fast: list, n_items: int, n_naive: int) -> list:
    return [fast[i * n_items // n_naive] for i in range(n_naive)]


def rows_read(scorer, prefixes) -> tuple[int, int]:
    """(steps of the LSTM's body, distinct words) the scorer computes: one step per distinct
    prefix within each of its batches (:mod:`lm.neural.prefixes`), fewer than the prefixes'
    tokens, and the first layer's input projection once per distinct word of each batch
    (:mod:`lm.neural.cell`)."""
    seqs = [scorer._sentence_ids(p) for p in prefixes]
    order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))
    rows = words = 0
    for batch in scorer._batches(order, seqs):
        steps = prefix_steps([seqs[i] for i in batch])
        rows += sum(len(step.tokens) for step in steps)
        words += len({w for step in steps for w in step.tokens})
    return rows, words


def _bench_target(scorer, items, naive_items, index) -> tuple[float, float]:
    """The LSTM's target method against the naive loop: (items/s, naive items/s)."""
    device, model = scorer.device, scorer.model
    peak = matmul_flops(device)
    dt, fast = time_scorer(scorer, items)
    peak = max(peak, matmul_flops(device))
    body, head = body_flops_per_token(model), 2 * model.decoder.weight.numel()
    tokens = sum(len(p) + 1 for p, t, s in items)
    rows, words = rows_read(scorer, [p for p, t, s in items])
    per_word = 2 * model.rnn.weight_ih_l0.numel()    # the first layer's input projection
    # the work done: shared beginnings read once, the input projection once per word
    useful = rows * (body - per_word) + words * per_word + len(items) * head
    rate = len(items) / dt
    print(f"machine fp32 matmul: {peak / 1e9:.1f} GFLOP/s ({device})")
    print(f"prefixes: {tokens:,} tokens, {rows:,} read (one per distinct prefix), "
          f"{words:,} distinct words (per batch)")
    print(f"lstm 2x650, V={len(index)}: {rate:.1f} items/s, {useful / dt / 1e9:.1f} GFLOP/s "
          f"= {100 * useful / dt / peak:.0f}% of matmul (target >= 40%)")
    n_naive = len(naive_items)
    ndt, slow = naive(model, index, naive_items, device)
    nflops = sum(len(s) + 1 for p, t, s in naive_items) * (body + head)
    diff = max(abs(a - b) for r, q in zip(_picked(fast, len(items), n_naive), slow) for a, b in zip(r, q))
    print(f"naive (released code's way): {n_naive / ndt:.2f} items/s over {n_naive} items, "
          f"{nflops / ndt / 1e9:.1f} GFLOP/s; work ratio naive/efficient "
          f"{nflops / n_naive / (useful / len(items)):.1f}; max |difference| {diff:.1e}")
    return rate, n_naive / ndt


def _bench_sentence(scorer, items, naive_items, index) -> None:
    """The LSTM's sentence method against one sentence at a time."""
    n_naive = len(naive_items)
    sdt, sfast = time_sentence(scorer, items)
    srate = len(items) / sdt
    nsdt, sslow = naive_sentence(scorer.model, index, naive_items, scorer.device)
    sdiff = max(abs(a - b) for r, q in zip(_picked(sfast, len(items), n_naive), sslow) for a, b in zip(r, q))
    print(f"lstm sentence method: {srate:.1f} items/s (two whole sentences an item), "
          f"naive one sentence at a time {n_naive / nsdt:.2f} items/s: "
          f"{srate / (n_naive / nsdt):.1f}x; max |difference| {sdiff:.1e}")


def main() -> None:
    args = _arguments()
    torch.set_num_threads(args.threads)
    items, naive_items, vocab = _items(args, random.Random(1111))
    index = {w: i for i, w in enumerate(vocab)}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        lstm_dir = save_neural(tmp / "lstm", "lstm", vocab, emb_size=650, hidden_size=650,
                               layers=2)
        scorer = load_model(lstm_dir, device=args.device, batch_size=args.batch_size)
        rate, naive_rate = _bench_target(scorer, items, naive_items, index)
        _bench_sentence(scorer, items, naive_items, index)
        tf_fields = ({"emb_size": 256, "hidden_size": 256, "layers": 2, "heads": 4}
                     if args.quick else
                     {"emb_size": 512, "hidden_size": 512, "layers": 6, "heads": 8})
        tf = load_model(save_neural(tmp / "transformer", "transformer", vocab, **tf_fields),
                        device=args.device, batch_size=args.batch_size)
        tdt, _ = time_scorer(tf, items)
        print(f"ratio: {rate / naive_rate:.1f}x naive (target >= 20x)")
        print(f"transformer {tf_fields}: {len(items) / tdt:.1f} items/s")
        tsdt, _ = time_sentence(tf, items)
        print(f"transformer sentence method: {len(items) / tsdt:.1f} items/s")
        for kind, r, note in other_backends(tmp, items, vocab):
            print(f"{kind}: {r:.1f} items/s ({note})" if r else f"{kind}: {note}")
    print(f"score: {rate:.0f} items/s, {rate / naive_rate:.1f}x naive")


if __name__ == "__main__":
    main()
