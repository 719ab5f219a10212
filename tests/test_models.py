"""lm.neural.models (LMConfig, LSTM, transformer) and lm.neural.softmax_loss (fused output layer + loss)."""
from __future__ import annotations

import gc

import pytest
import torch
import torch.nn.functional as F

from lm import heavy_import
from lm.heavy_import import import_heavy
from lm.neural.checkpoint import MODEL_FILE, save_model
from lm.neural.models import LMConfig, build_model, n_parameters
from lm.neural.softmax_loss import linear_cross_entropy, token_nll

SMALL = dict(vocab_size=37, emb_size=12, hidden_size=12, layers=2, dropout=0.1, heads=3, max_len=16)


def model(kind, **kw):
    torch.manual_seed(0)
    return build_model(LMConfig(kind=kind, **{**SMALL, **kw}))


class TestLMConfig:
    def test_round_trip(self):
        c = LMConfig(kind="transformer", tokenizer="sentencepiece", **SMALL)
        assert LMConfig.from_dict(c.to_dict()) == c
        assert set(c.to_dict()) == {"kind", "vocab_size", "emb_size", "hidden_size", "layers",
                                    "dropout", "tied", "heads", "max_len", "tokenizer"}

    def test_unknown_key_fails_loudly(self):
        with pytest.raises(ValueError, match="unknown LMConfig keys: colour"):
            LMConfig.from_dict({**LMConfig().to_dict(), "colour": "red"})

    @pytest.mark.parametrize("kw, message", [
        (dict(kind="gru"), "unknown model kind 'gru'"),
        (dict(tokenizer="bpe"), "unknown tokenizer 'bpe'"),
        (dict(tied=True, emb_size=10, hidden_size=12), "tied weights need emb_size == hidden_size"),
        (dict(kind="transformer", hidden_size=10, emb_size=10, heads=3), "not divisible by heads"),
        (dict(layers=0), "layers must be at least 1"),
    ])
    def test_invalid(self, kw, message):
        with pytest.raises(ValueError, match=message):
            LMConfig(**{**SMALL, **kw})


@pytest.mark.parametrize("kind", ["lstm", "transformer"])
class TestModels:
    def test_shapes_and_decoder(self, kind):
        m = model(kind).eval()
        x = torch.randint(37, (3, 7))                                   # (B, T)
        h, state = m.features(x)
        assert h.shape == (3, 7, 12)
        assert m.decoder.in_features == 12 and m.decoder.out_features == 37
        logits, _ = m(x)
        assert logits.shape == (3, 7, 37)
        assert torch.allclose(logits, m.decoder(h), atol=1e-6)
        if kind == "lstm":
            assert [s.shape for s in state] == [(2, 3, 12), (2, 3, 12)]
        else:
            assert state is None

    def test_causal(self, kind):
        """Outputs at positions < t do not depend on the token at t."""
        m = model(kind).eval()
        x = torch.randint(37, (2, 9))
        y = x.clone()
        y[:, 5] = (y[:, 5] + 1) % 37
        with torch.no_grad():
            hx, _ = m.features(x)
            hy, _ = m.features(y)
        assert torch.allclose(hx[:, :5], hy[:, :5], atol=1e-6)
        assert not torch.allclose(hx[:, 5], hy[:, 5])

    def test_tied(self, kind):
        m = model(kind, tied=True)
        assert m.decoder.weight is m.embedding.weight
        assert n_parameters(m) < n_parameters(model(kind))

    def test_state_dict_round_trip(self, kind, tmp_path):
        """model.pt holds a state_dict and the config dict, loadable with weights_only=True."""
        m = model(kind, tied=True)
        save_model(m, m.config.to_dict(), tmp_path)
        ckpt = torch.load(tmp_path / MODEL_FILE, weights_only=True)
        assert set(ckpt) == {"state_dict", "config"}
        again = build_model(LMConfig.from_dict(ckpt["config"]))
        again.load_state_dict(ckpt["state_dict"])
        x = torch.randint(37, (2, 5))
        with torch.no_grad():
            assert torch.equal(again.eval()(x)[0], m.eval()(x)[0])


@pytest.mark.parametrize("kind", ["lstm", "transformer"])
def test_a_network_for_loaded_weights_skips_initialisation(kind, tmp_path):
    """build_model(init=False) leaves torch.nn.init as it found it (and, for an LSTM, draws
    no random numbers at all: the global RNG is where it was), and the weights loaded by
    assignment (as the scorer loads a memory-mapped model.pt) give the saved network's outputs."""
    m = model(kind, tied=True)
    save_model(m, m.config.to_dict(), tmp_path)
    ckpt = torch.load(tmp_path / MODEL_FILE, weights_only=True, mmap=True)
    init = torch.nn.init.uniform_
    state = torch.get_rng_state()
    empty = build_model(LMConfig.from_dict(ckpt["config"]), init=False)
    assert torch.nn.init.uniform_ is init
    assert torch.equal(torch.get_rng_state(), state) or kind == "transformer"   # its attention inits itself
    empty.load_state_dict(ckpt["state_dict"], assign=True)
    assert empty.decoder.weight.data_ptr() == ckpt["state_dict"]["decoder.weight"].data_ptr()   # not copied
    x = torch.randint(37, (2, 5))
    with torch.no_grad():
        assert torch.equal(empty.eval()(x)[0], m.eval()(x)[0])


def test_lstm_state_carries_across_windows():
    """Reading a sequence in two windows with the state carried = reading it at once."""
    m = model("lstm").eval()
    x = torch.randint(37, (2, 10))
    with torch.no_grad():
        whole, _ = m.features(x)
        a, state = m.features(x[:, :4])
        b, _ = m.features(x[:, 4:], state)
    assert torch.allclose(torch.cat([a, b], 1), whole, atol=1e-6)


def test_transformer_rejects_longer_input_than_max_len():
    with pytest.raises(ValueError, match="longer than the transformer's max_len 16"):
        model("transformer").features(torch.zeros(1, 17, dtype=torch.long))


class TestFusedLoss:
    @pytest.mark.parametrize("rows", [1, 7, 64, 1000])
    @pytest.mark.parametrize("bias", [True, False])
    def test_equals_cross_entropy_and_its_gradients(self, rows, bias):
        g = torch.Generator().manual_seed(3)
        h = torch.randn(150, 8, generator=g, requires_grad=True)
        w = torch.randn(40, 8, generator=g, requires_grad=True)
        b = torch.randn(40, generator=g, requires_grad=True) if bias else None
        y = torch.randint(40, (150,), generator=g)
        leaves = [t for t in (h, w, b) if t is not None]
        loss = linear_cross_entropy(h, w, b, y, rows=rows)
        (3 * loss).backward()                      # a non-unit upstream gradient
        ours = [t.grad.clone() for t in leaves]
        for t in leaves:
            t.grad = None
        ref = F.cross_entropy(F.linear(h, w, b), y)
        (3 * ref).backward()
        assert loss.item() == pytest.approx(ref.item(), rel=1e-5)
        for mine, t in zip(ours, leaves):
            assert torch.allclose(mine, t.grad, atol=1e-5)

    def test_extreme_logits_stay_finite(self):
        h = torch.tensor([[100.0], [-100.0]], requires_grad=True)
        w = torch.tensor([[5.0], [-5.0], [0.0]], requires_grad=True)
        y = torch.tensor([1, 0])
        loss = linear_cross_entropy(h, w, None, y)
        loss.backward()
        assert loss.item() == pytest.approx(1000.0, rel=1e-4)
        assert torch.isfinite(h.grad).all() and torch.isfinite(w.grad).all()

    def test_token_nll(self):
        g = torch.Generator().manual_seed(4)
        h, w = torch.randn(30, 6, generator=g), torch.randn(11, 6, generator=g)
        b = torch.randn(11, generator=g)
        y = torch.randint(11, (30,), generator=g)
        expected = F.cross_entropy(F.linear(h, w, b), y, reduction="none")
        assert torch.allclose(token_nll(h, w, b, y, rows=4), expected, atol=1e-5)
        with torch.no_grad():   # without gradients the loss takes the same no-grad path
            loss = linear_cross_entropy(h, w, b, y).item()
        assert loss == pytest.approx(expected.mean().item(), rel=1e-5)


def test_a_heavy_import_pauses_the_collector_and_gives_it_back():
    """lm.heavy_import.import_heavy: the module imported, the collector as it was before (on or off)."""
    assert gc.isenabled()
    assert import_heavy("json").dumps([1]) == "[1]"
    assert gc.isenabled()
    gc.disable()
    try:
        import_heavy("json")
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ModuleNotFoundError):
        import_heavy("no_such_module_here")
    assert gc.isenabled()


def test_the_command_freezes_what_a_heavy_import_leaves(monkeypatch):
    """With the command's policy on, the objects alive after the import leave the collector's reach."""
    monkeypatch.setattr(heavy_import, "FREEZE_AFTER_HEAVY_IMPORT", True)
    before = gc.get_freeze_count()
    try:
        heavy_import.import_heavy("json")
        assert gc.get_freeze_count() > before and gc.isenabled()
    finally:
        gc.unfreeze()     # this test process goes on: its collector whole again
