"""Opening agree's LSTM (lm/neural/open_lstm.py) and the analyses of agree inspect on it.

The batched paths are checked against the obvious ones: the stepped network against
``nn.LSTM``, K unit sets in one pass against zeroing each unit's outgoing weights
and scoring with the ordinary scorer. The hand-built number unit
(tests/inspect_fixtures.py) must be found by the ablation and read by the probe, and
patching the whole state at the cue must flip every choice.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from agreement.inspection.ablation import ablate_units
from agreement.inspection.cases import make_cases, twin_queries
from agreement.inspection.patching import patch_cases
from agreement.inspection.probes import probe_states
from agreement.inspection.trajectories import trajectories
from lm.base import TargetQuery
from lm.errors import LMError
from lm.neural.models import LMConfig, build_model
from lm.neural.scorer import NeuralScorer
from lm.load import open_model
from tests.inspect_fixtures import VOCAB, number_items, number_lstm

WORDS = [f"w{i}" for i in range(30)]


def random_lstm(seed=0, layers=2):
    torch.manual_seed(seed)
    cfg = LMConfig(kind="lstm", vocab_size=len(WORDS) + 2, emb_size=8, hidden_size=6, layers=layers, dropout=0.0)
    net = build_model(cfg).eval()
    with torch.no_grad():
        net.decoder.bias.normal_()
    return net


def random_queries(n=25, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        words = [str(w) for w in rng.choice(WORDS, int(rng.integers(2, 9)))]
        out.append(TargetQuery(tuple(words), len(words) - 1, (words[-1], str(rng.choice(WORDS)))))
    return [q for q in out if q.candidates[0] != q.candidates[1]]


def opened(net, vocab):
    scorer = NeuralScorer(net, vocab, kind="lstm", device="cpu", name="t")
    return scorer, open_model(scorer)


def test_stepped_lstm_gives_the_scorers_preferences_and_nn_lstms_states():
    net = random_lstm()
    scorer, model = opened(net, ["<eos>", "<unk>"] + WORDS)
    qs = random_queries()
    inputs = [model.encode(q) for q in qs]
    lp = scorer.logprob([q.prefix for q in qs], [list(q.candidates) for q in qs])
    assert np.allclose(model.preference(inputs), lp[:, 0] - lp[:, 1], atol=1e-5)
    for batch, got in model.states(inputs, ("hidden",)):
        for b, i in enumerate(batch):
            with torch.no_grad():
                top, _ = net.features(torch.tensor([inputs[i].ids]))
            assert np.allclose(got[("hidden", 1)][b, :len(inputs[i])], top[0].numpy(), atol=1e-5)


def test_a_bias_less_lstm_is_opened_with_the_scorers_own_stepper():
    """One stepper (lm/neural/cell.py) for scoring and inspection: a bias-less LSTM gets
    zero biases in both (the opened model's own stepper used to raise on it)."""
    net = random_lstm(seed=2)
    rnn = torch.nn.LSTM(8, 6, 2, bias=False, batch_first=True)
    with torch.no_grad():
        for name, w in rnn.named_parameters():
            w.copy_(getattr(net.rnn, name))
    net.rnn = rnn.eval()
    scorer, model = opened(net, ["<eos>", "<unk>"] + WORDS)
    qs = random_queries(seed=2)
    lp = scorer.logprob([q.prefix for q in qs], [list(q.candidates) for q in qs])
    assert np.allclose(model.preference([model.encode(q) for q in qs]), lp[:, 0] - lp[:, 1], atol=1e-5)


@pytest.mark.parametrize("layer", [0, 1])
def test_units_ablated_side_by_side_equal_zeroed_outgoing_weights(layer):
    """One pass of K unit sets = K runs of the ordinary scorer on a copy whose unit has
    no outgoing weights (its recurrence, the next layer's input or the decoder)."""
    net = random_lstm(seed=1)
    vocab = ["<eos>", "<unk>"] + WORDS
    _, model = opened(net, vocab)
    qs = random_queries(seed=1)
    inputs = [model.encode(q) for q in qs]
    sets = [[(layer, u)] for u in range(6)] + [[(0, 1), (1, 4)]]
    got = model.ablate(inputs, "hidden", sets)
    for k, units in enumerate(sets):
        copy = build_model(net.config)
        copy.load_state_dict(net.state_dict())
        with torch.no_grad():
            for l, u in units:
                getattr(copy.rnn, f"weight_hh_l{l}")[:, u] = 0
                (getattr(copy.rnn, f"weight_ih_l{l + 1}") if l + 1 < 2 else copy.decoder.weight)[:, u] = 0
        lp = NeuralScorer(copy.eval(), vocab, kind="lstm", device="cpu").logprob(
            [q.prefix for q in qs], [list(q.candidates) for q in qs])
        assert np.allclose(got[k], lp[:, 0] - lp[:, 1], atol=1e-4), units


def test_unit_and_layer_out_of_range_are_refused():
    _, model = opened(random_lstm(), ["<eos>", "<unk>"] + WORDS)
    inputs = [model.encode(q) for q in random_queries(3)]
    with pytest.raises(LMError, match=r"unit 6 is out of range for hidden layer 0 \(units 0 to 5\)"):
        model.ablate(inputs, "hidden", [[(0, 6)]])
    with pytest.raises(LMError, match=r"layer 2 is out of range for hidden \(layers 0 to 1\)"):
        model.ablate(inputs, "hidden", [[(2, 0)]])
    with pytest.raises(LMError, match="units of cell cannot be ablated"):
        model.ablate(inputs, "cell", [[(0, 0)]])


def hand():
    scorer, model = opened(number_lstm(), VOCAB)
    cases, skipped = make_cases(number_items(), None)
    assert not skipped
    return model, cases, [model.encode(c.query) for c in cases]


def test_the_number_unit_is_ranked_first_and_its_ablation_breaks_agreement():
    model, cases, inputs = hand()
    assert (model.preference(inputs) > 0).all()
    ab = ablate_units(model, cases, inputs, site="hidden", layers=[0], fill="zero", k=1, draws=5,
                      rng=np.random.default_rng(0))
    assert ab.top == ((0, 0),)
    assert ab.ranked[0][2] < 2 * ab.ranked[1][2] < 0          # far ahead of the flag unit
    top = [r for r in ab.sets if r.kind == "top" and r.condition == "all"][0]
    rand = [r for r in ab.sets if r.kind == "random" and r.condition == "all"]
    assert top.accuracy <= 0.75 and top.effect < -5
    assert all(r.accuracy == 1.0 for r in rand if r.units in ("0:2", "0:3"))   # the bystanders
    unit0 = [r for r in ab.rows if r.unit == 0 and r.condition == "all"][0]
    assert unit0.clean_accuracy == 1.0 and unit0.effect < -7


def test_the_probe_reads_the_subjects_number_perfectly_where_it_is_stored():
    model, cases, inputs = hand()
    rows = probe_states(model, cases, inputs, ("hidden", "cell"), folds=4, rng=np.random.default_rng(0))
    by = {(r.site, r.position): r for r in rows}
    for pos in ("cue", "before target", "target"):
        assert by[("hidden", pos)].accuracy == 1.0
    assert by[("hidden", "cue")].shuffled < 0.9


def test_trajectories_of_the_number_unit_split_by_subject_number():
    model, cases, inputs = hand()
    rows = trajectories(model, cases, inputs, [(0, 0)], ("hidden",))
    at_target = {r.number: r.mean for r in rows if r.anchor == "target" and r.offset == -1}
    assert at_target["Sing"] > 0.7 and at_target["Plur"] < -0.7


def test_patching_the_whole_state_at_the_cue_flips_every_choice():
    model, cases, inputs = hand()
    twins, why = twin_queries(cases, None)
    assert not why and all(t is not None for t in twins)
    found = patch_cases(model, cases, inputs, [model.encode(t) for t in twins], ("state",),
                        np.random.default_rng(0))
    whole = [r for r in found.rows if r.layer == -1 and r.condition == "all"][0]
    assert whole.both_right == len(cases) and whole.flipped == len(cases)
    assert whole.restored == pytest.approx(1.0, abs=1e-4)


def test_mean_replacing_the_number_unit_also_breaks_agreement():
    """With --fill mean the unit keeps its average state: the subject's number is gone all the same."""
    model, cases, inputs = hand()
    ab = ablate_units(model, cases, inputs, site="hidden", layers=[0], fill="mean", k=1, draws=2,
                      rng=np.random.default_rng(0))
    assert ab.top == ((0, 0),) and ab.fill == "mean"
    unit0 = [r for r in ab.rows if r.unit == 0 and r.condition == "all"][0]
    assert 0.3 <= unit0.accuracy <= 0.7
