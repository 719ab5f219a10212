"""lm/neural/cell.py: nn.LSTM stepped with its own weights, against nn.LSTM itself."""
from __future__ import annotations

import pytest
import torch

from lm.neural.cell import SteppedLSTM, gather_state


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
