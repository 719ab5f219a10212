"""Hugging Face causal models and agree's transformer opened (lm/hf/open.py,
lm/neural/open_transformer.py, lm/open_hooks.py).

Tiny random models: a Llama (whose passes may start inside the model) and a GPT-2
(whose passes always run whole) on the same byte-level tokenizer. A pass started
inside the model must give what the whole model with the same hooks gives, and the
clean preference what the model's own logits say."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from lm.base import TargetQuery
from lm.hf.load import load_hf_dir
from lm.neural.models import LMConfig, build_model
from lm.neural.scorer import NeuralScorer
from lm.load import open_model
from tests.hf_fixtures import SENTENCES, _train, build_tiny


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    import transformers as tf

    out = tmp_path_factory.mktemp("llama")
    tok = _train("gpt2")
    torch.manual_seed(0)
    model = tf.LlamaForCausalLM(tf.LlamaConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=128, bos_token_id=0, eos_token_id=0)).eval()
    tok.save_pretrained(out)
    model.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    return build_tiny("gpt2", tmp_path_factory.mktemp("gpt2"))


def queries():
    out = []
    for s in SENTENCES:
        w = s.split()
        for t in range(1, len(w)):
            for alt in ("the", "dog", "cars", "is", "are", "run"):
                if alt != w[t]:
                    out.append(TargetQuery(tuple(w), t, (w[t], alt)))
    return out


def read(model):
    inputs = [x for x in (model.encode(q) for q in queries()) if not isinstance(x, str)]
    assert len(inputs) > 50
    return inputs


@pytest.mark.parametrize("which", ["tiny_llama", "tiny_gpt2"])
def test_the_clean_preference_is_the_models_logit_difference(which, request):
    scorer = load_hf_dir(request.getfixturevalue(which), device="cpu")
    model = open_model(scorer)
    assert model.skips == (which == "tiny_llama")
    assert set(model.sites) == {"resid", "mlp", "heads"}
    inputs = read(model)
    d = model.preference(inputs)
    with torch.no_grad():
        for k in range(0, len(inputs), 17):
            i = inputs[k]
            logits = scorer.model(torch.tensor([i.ids])).logits[0, i.predict]
            assert float(logits[i.correct] - logits[i.wrong]) == pytest.approx(d[k], abs=1e-4)


def test_passes_started_inside_the_model_equal_whole_passes(tiny_llama):
    model = open_model(load_hf_dir(tiny_llama, device="cpu"))
    inputs = read(model)
    donors = inputs[::-1]
    pos = [min(i.predict, 2) for i in inputs]
    donor_pos = [min(i.predict, 2) for i in donors]
    sets = {"resid": [[(1, 3)], [(0, 5), (2, 7)]], "mlp": [[(1, 10)], [(0, 1), (1, 2)]], "heads": [[(1, 0)], [(2, 3)]]}
    fast = {n: model.ablate(inputs, n, s) for n, s in sets.items()}
    fast.update({f"patch {n}": model.patch(inputs, donors, n, pos, donor_pos) for n in ("resid", "heads")})
    model.skips = False
    for n, s in sets.items():
        assert np.allclose(fast[n], model.ablate(inputs, n, s), atol=1e-4), n
    for n in ("resid", "heads"):
        whole = model.patch(inputs, donors, n, pos, donor_pos)
        assert whole.shape == (3 if n == "resid" else 12, len(inputs))
        assert np.allclose(fast[f"patch {n}"], whole, atol=1e-4), n
    assert np.abs(fast["heads"] - model.preference(inputs)).max() > 1e-3     # the heads do something


def test_patching_every_position_with_the_donors_own_state_gives_the_donor(tiny_gpt2):
    """A residual patch at the last block of the scored position is the donor's output there."""
    model = open_model(load_hf_dir(tiny_gpt2, device="cpu"))
    inputs = read(model)
    donors = inputs[::-1]
    patched = model.patch(inputs, donors, "resid", [i.predict for i in inputs], [d.predict for d in donors])
    # the donor's final state, read with the original's forms
    flipped = [d.__class__(d.ids, d.word_last, d.predict, i.correct, i.wrong) for i, d in zip(inputs, donors)]
    assert np.allclose(patched[-1], model.preference(flipped), atol=1e-4)


def test_agrees_transformer_is_opened_through_the_same_hooks():
    words = [f"w{i}" for i in range(20)]
    torch.manual_seed(0)
    net = build_model(LMConfig(kind="transformer", vocab_size=22, emb_size=16, hidden_size=16, layers=2,
                               heads=2, dropout=0.0, max_len=32)).eval()
    scorer = NeuralScorer(net, ["<eos>", "<unk>"] + words, kind="transformer", device="cpu")
    model = open_model(scorer)
    assert set(model.sites) == {"resid", "mlp"}
    rng = np.random.default_rng(0)
    qs = [TargetQuery(tuple(str(w) for w in rng.choice(words, 6)), 5, ("w1", "w2")) for _ in range(20)]
    inputs = [model.encode(q) for q in qs]
    lp = scorer.logprob([q.prefix for q in qs], [list(q.candidates) for q in qs])
    assert np.allclose(model.preference(inputs), lp[:, 0] - lp[:, 1], atol=1e-4)
    fast = model.ablate(inputs, "mlp", [[(1, 3)], [(0, 2)]])
    model.skips = False
    assert np.allclose(fast, model.ablate(inputs, "mlp", [[(1, 3)], [(0, 2)]]), atol=1e-4)


def hf_items():
    """Agreement items in the tiny tokenizer's words (each subject with its twin)."""
    from formats.items import Item

    out = []
    for subject, plural in (("dog", False), ("dogs", True), ("key", False), ("keys", True)):
        for attractor in (None, "car", "cars"):
            words = ["the", subject] + (["near", "the", attractor] if attractor else []) + ["are" if plural else "is"]
            n = len(words)
            number = "Plur" if plural else "Sing"
            pos = ["DET", "NOUN"] + (["ADP", "DET", "NOUN"] if attractor else []) + ["VERB"]
            out.append(Item(f"t:{len(out)}", 0, "NOUN VERB", "L", tuple(words), tuple(pos), ("_",) * n,
                            words[-1], "is" if plural else "are", "be", number, 1, n - 1,
                            int(attractor is not None and attractor.endswith("s") != plural), False))
    return out


def test_inspect_on_a_hugging_face_model_patches_layers_and_heads(tiny_llama, tmp_path):
    from formats.items import write_items
    from tests.conftest import run_agree

    (tmp_path / "items").mkdir()
    write_items(tmp_path / "items" / "items.tsv", hf_items())
    result = run_agree("inspect", tmp_path / "items", "--model", f"hf:{tiny_llama}", "--analysis", "patching",
                       "--analysis", "probes", "--folds", "2", "--out", tmp_path / "out", "-q")
    assert result.exit_code == 0, result.output + result.stderr
    rows = (tmp_path / "out" / "patching.tsv").read_text().splitlines()
    sites = {(r.split("\t")[0], r.split("\t")[2] != "") for r in rows[1:]}
    assert sites == {("resid", False), ("heads", True)}
    assert len([r for r in rows[1:] if r.split("\t")[3] == "all"]) == 3 + 3 * 4
    assert (tmp_path / "out" / "probes.png").is_file()
