"""A tiny LSTM built by hand whose unit 0 carries the subject's number, and the agreement
items it is tested on (tests/test_inspect_lstm.py, tests/test_inspect_cli.py).

The model (one layer, 4 units, one-hot embeddings, no dropout):

* unit 0, the number unit: its input gate opens on a noun while unit 1 is still off,
  its cell input is +tanh(3) for a singular noun and -tanh(3) for a plural one, its
  forget and output gates stay open: after the subject, h0 = +-0.76 to the end;
* unit 1, a "noun seen" flag: on from the first noun, it closes unit 0's input gate,
  so that an attractor does not overwrite the subject's number;
* units 2 and 3: small seeded random weights (bystanders);
* decoder: logit(runs) = 5 h0, logit(run) = -5 h0 (every other logit 0), so the
  model prefers *runs* exactly when h0 > 0: after a singular subject.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch

from formats.items import Item, write_items
from lm.neural.models import LMConfig, build_model

SING = ("dog", "cat", "bird", "fox")
PLUR = ("dogs", "cats", "birds", "foxes")
ATTRACTORS = (("car", "cars"), ("box", "boxes"))
VOCAB = ["<eos>", "<unk>", "the", "near", ".", "runs", "run", *SING, *PLUR,
         *[w for pair in ATTRACTORS for w in pair]]
NOUNS = set(SING) | set(PLUR) | {w for pair in ATTRACTORS for w in pair}
PLURALS = set(PLUR) | {pair[1] for pair in ATTRACTORS}


def number_lstm() -> torch.nn.Module:
    """The hand-built LSTM of the module docstring (eval mode)."""
    V, H = len(VOCAB), 4
    net = build_model(LMConfig(kind="lstm", vocab_size=V, emb_size=V, hidden_size=H, layers=1, dropout=0.0))
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        net.embedding.weight.copy_(torch.eye(V))
        w_ih, w_hh = torch.zeros(4 * H, V), torch.zeros(4 * H, H)
        b = torch.zeros(4 * H)
        i, f, g, o = (slice(k * H, (k + 1) * H) for k in range(4))
        noun = torch.tensor([1.0 if w in NOUNS else 0.0 for w in VOCAB])
        sign = torch.tensor([(-1.0 if w in PLURALS else 1.0) if w in NOUNS else 0.0 for w in VOCAB])
        for unit in (0, 1):
            w_ih[i.start + unit] = 20 * noun - 10       # open on nouns only
            b[f.start + unit] = 10.0                    # keep the cell
            b[o.start + unit] = 10.0                    # show it
        w_hh[i.start + 0, 1] = -40.0                    # the flag closes unit 0's input gate
        w_ih[g.start + 0] = 3 * sign
        w_ih[g.start + 1] = 3 * noun
        for unit in (2, 3):
            for gate in (i, f, g, o):
                w_ih[gate.start + unit] = 0.5 * torch.randn(V, generator=gen)
        net.rnn.weight_ih_l0.copy_(w_ih)
        net.rnn.weight_hh_l0.copy_(w_hh)
        net.rnn.bias_ih_l0.copy_(b)
        net.rnn.bias_hh_l0.zero_()
        net.decoder.weight.zero_()
        net.decoder.bias.zero_()
        net.decoder.weight[VOCAB.index("runs"), 0] = 5.0
        net.decoder.weight[VOCAB.index("run"), 0] = -5.0
        net.decoder.weight[VOCAB.index("runs"), 2] = 0.05
    return net.eval()


def write_model_dir(path: Path, net: torch.nn.Module) -> Path:
    """A model directory as ``agree train-lm`` lays it out."""
    path.mkdir(parents=True)
    cfg = net.config
    (path / "config.json").write_text(json.dumps(cfg.to_dict()))
    torch.save({"state_dict": net.state_dict(), "config": cfg.to_dict()}, path / "model.pt")
    (path / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return path


def _item(subject: str, attractor: str | None, k: int) -> Item:
    plural = subject in PLURALS
    words = ["the", subject] + (["near", "the", attractor] if attractor else []) + \
            ["run" if plural else "runs", "."]
    t = len(words) - 2
    pos = ["DET", "NOUN"] + (["ADP", "DET", "NOUN"] if attractor else []) + ["VERB", "PUNCT"]
    number = "Plur" if plural else "Sing"
    feats = ["_", f"Number={number}"] + (["_", "_", f"Number={'Plur' if attractor in PLURALS else 'Sing'}"]
                                         if attractor else []) + [f"Number={number}", "_"]
    other = bool(attractor) and (attractor in PLURALS) != plural
    return Item(item_id=f"hand:{k}", variant=0, construction="NOUN VERB" if not attractor else "NOUN NOUN VERB",
                direction="L", tokens=tuple(words), pos=tuple(pos), feats=tuple(feats),
                correct=words[t], wrong="runs" if plural else "run", lemma="run", number=number,
                cue_index=1, target_index=t, attractors=int(other), punct=False)


def number_items() -> list[Item]:
    """Every subject alone and with every attractor (either number): 40 items, each with
    its twin (the subject in the other number) among them."""
    out = []
    for subject in SING + PLUR:
        for attractor in (None, *[w for pair in ATTRACTORS for w in pair]):
            out.append(_item(subject, attractor, len(out)))
    return out


def write_items_dir(path: Path) -> Path:
    path.mkdir(parents=True)
    write_items(path / "items.tsv", number_items())
    return path
