"""lm/neural/cell.py: nn.LSTM stepped with its own weights, against nn.LSTM itself."""
from __future__ import annotations

import pytest
import torch

from lm.neural.cell import SteppedLSTM, gather_state


def _seeded(seed: int, size: int, hidden: int, layers: int, batch: int, steps: int):
    """A batch-first nn.LSTM drawn with ``seed``, its stepped copy, and a random input."""
    torch.manual_seed(seed)
    rnn = torch.nn.LSTM(size, hidden, layers, batch_first=True).eval()
    return rnn, SteppedLSTM.of(rnn), torch.randn(batch, steps, size)


@pytest.mark.parametrize("layers,bias", [(1, True), (2, True), (3, True), (2, False)])
def test_stepping_gives_nn_lstm_outputs_and_states(layers, bias):
    torch.manual_seed(layers)
    rnn = torch.nn.LSTM(5, 7, layers, batch_first=True, bias=bias).eval()
    x = torch.randn(4, 6, 5)
    with torch.no_grad():
        want, (h_n, c_n) = rnn(x)
        lstm = SteppedLSTM.of(rnn)
        state = None
        for t in range(x.shape[1]):
            top, state = lstm.step(lstm.input_gates(x[:, t]), state)
            assert torch.allclose(top, want[:, t], atol=1e-6)
    assert torch.allclose(torch.stack([h for h, _ in state]), h_n, atol=1e-6)
    assert torch.allclose(torch.stack([c for _, c in state]), c_n, atol=1e-6)


def test_a_row_steps_from_its_parents_state():
    """Rows taken from other rows' states (a prefix shared, then split) step as the sequence read alone."""
    torch.manual_seed(0)
    rnn = torch.nn.LSTM(3, 4, 2).eval()
    lstm = SteppedLSTM.of(rnn)
    a, b = torch.randn(3), torch.randn(3)
    with torch.no_grad():
        _, state = lstm.step(lstm.input_gates(a[None]), None)                   # one row: "a"
        top, _ = lstm.step(lstm.input_gates(torch.stack([a, b])), gather_state(state, [0, 0]))
        want = rnn(torch.stack([torch.stack([a, a]), torch.stack([a, b])], 1))[0][1]   # after "a a" and "a b"
    assert torch.allclose(top, want, atol=1e-6)


def test_rows_that_keep_their_own_state_are_not_copied():
    state = [(torch.randn(5, 4), torch.randn(5, 4))]
    kept = gather_state(state, [0, 1, 2])
    assert kept[0][0].data_ptr() == state[0][0].data_ptr() and kept[0][0].shape == (3, 4)
    moved = gather_state(state, [2, 2, 0])
    assert torch.equal(moved[0][1], state[0][1][[2, 2, 0]])


def test_bidirectional_or_projected_lstms_are_refused():
    with pytest.raises(ValueError):
        SteppedLSTM.of(torch.nn.LSTM(3, 4, bidirectional=True))
    with pytest.raises(ValueError):
        SteppedLSTM.of(torch.nn.LSTM(3, 4, proj_size=2))


def _run(lstm, x, hooks=None, layers=None):
    """Step (rows, T, in) inputs through ``layers``; the last layer's h at every step (rows, T, H)."""
    state, tops = None, []
    start = 0 if layers is None else layers.start
    for t in range(x.shape[1]):
        top, state = lstm.step(lstm.input_gates(x[:, t], start), state, hooks, t, layers)
        tops.append(top)
    return torch.stack(tops, 1), state


def test_hook_points_are_named_per_layer_and_reading_hooks_change_nothing():
    rnn, lstm, x = _seeded(1, 5, 7, 2, batch=3, steps=5)
    assert lstm.hook_points() == ["layers.0.hook_c", "layers.0.hook_h", "layers.1.hook_c", "layers.1.hook_h"]
    seen: dict = {}
    hooks = {name: (lambda v, t, name=name: seen.setdefault(name, []).append(v.clone()))
             for name in lstm.hook_points()}
    with torch.no_grad():
        plain, _ = _run(lstm, x)
        hooked, _ = _run(lstm, x, hooks)
        want, _ = rnn(x)
    assert torch.equal(plain, hooked)
    assert torch.allclose(torch.stack(seen["layers.1.hook_h"], 1), want, atol=1e-6)
    assert len(seen["layers.0.hook_c"]) == x.shape[1]


def test_a_hook_that_zeroes_a_unit_equals_zeroing_its_outgoing_weights():
    torch.manual_seed(2)
    rnn = torch.nn.LSTM(4, 6, 2, batch_first=True).eval()
    x = torch.randn(3, 5, 4)
    cut = torch.nn.LSTM(4, 6, 2, batch_first=True).eval()
    cut.load_state_dict(rnn.state_dict())
    with torch.no_grad():
        cut.weight_hh_l0[:, 2] = 0.0            # unit 2 of layer 0 read by nobody
        cut.weight_ih_l1[:, 2] = 0.0
        lstm = SteppedLSTM.of(rnn)
        zero = lambda h, t: h * torch.tensor([1., 1, 0, 1, 1, 1])   # noqa: E731
        got, _ = _run(lstm, x, {"layers.0.hook_h": zero})
        want, _ = cut(x)
    assert torch.allclose(got, want, atol=1e-6)


def test_replacing_the_whole_state_at_a_step_continues_the_donors_run():
    _, lstm, x = _seeded(3, 3, 5, 2, batch=2, steps=6)
    with torch.no_grad():
        donor, _ = _run(lstm, x[1:])
        kept: dict = {}
        keep = {f"layers.{k}.hook_{w}": (lambda v, t, n=f"{k}{w}": kept.__setitem__((n, t), v.clone()))
                for k in range(2) for w in "hc"}
        _run(lstm, x[1:], keep)
        put = {f"layers.{k}.hook_{w}": (lambda v, t, n=f"{k}{w}": kept[(n, t)] if t == 2 else None)
               for k in range(2) for w in "hc"}
        same_after = torch.cat([x[:1, :3], x[1:, 3:]], 1)     # row 0's words, the donor's after step 2
        got, _ = _run(lstm, same_after, put)
    assert torch.allclose(got[:, 2:], donor[:, 2:], atol=1e-6)


def test_stepping_from_a_layer_above_takes_the_layer_belows_h():
    rnn, lstm, x = _seeded(4, 3, 5, 3, batch=2, steps=4)
    with torch.no_grad():
        below, _ = _run(lstm, x, layers=range(0, 1))
        top, state = _run(lstm, below, layers=range(1, 3))
        want, _ = rnn(x)
    assert len(state) == 2
    assert torch.allclose(top, want, atol=1e-6)
