"""agree import-model colorlessgreen: the paper's released LSTM format, read by a
restricted unpickler, converted to our LSTM directory, scored like the original."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from conftest import run_agree
from lm.load import load_model
from lm.errors import LMError
from lm.neural.released import load_released

# The released recipe's model.py, reduced to what the pickle records.
MODEL_PY = textwrap.dedent("""
    import torch.nn as nn

    class RNNModel(nn.Module):
        def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5):
            super().__init__()
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

    class Evil:
        def __reduce__(self):
            import os
            return (os.system, ("touch " + EVIL_MARK,))
""")
VOCAB = ["<unk>", "<eos>", "the", "dog", "dogs", "runs", "run", "near", "cars", "car"]

# Built in a separate interpreter, so that the test process never imports `model`
# (a real user's process would not have it either).
BUILD = textwrap.dedent("""
    import sys, torch
    sys.path.insert(0, sys.argv[1])
    import model
    model.EVIL_MARK = sys.argv[3]
    torch.manual_seed(0)
    m = model.RNNModel("LSTM", int(sys.argv[4]), 7, 6, 2, dropout=0.2)
    out = sys.argv[2]
    torch.save(m, out + "/zip.pt")
    torch.save(m, out + "/legacy.pt", _use_new_zipfile_serialization=False)
    torch.save({"w": m.state_dict(), "x": model.Evil()}, out + "/evil.pt")
    torch.save(m.state_dict(), out + "/weights.pt")
    # torch 0.3 modules carried `_backend`, pickled as a call of
    # torch.nn.backends.thnn._get_thnn_function_backend (gone from torch 2)
    import types
    thnn = types.ModuleType("torch.nn.backends.thnn")
    def _get_thnn_function_backend():
        return Backend()
    _get_thnn_function_backend.__module__ = thnn.__name__
    thnn._get_thnn_function_backend = _get_thnn_function_backend
    sys.modules[thnn.__name__] = thnn
    class Backend:
        def __reduce__(self):
            return (_get_thnn_function_backend, ())
    for mod in m.modules():
        mod._backend = Backend()
    torch.save(m, out + "/old.pt", _use_new_zipfile_serialization=False)
""")


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    d = tmp_path_factory.mktemp("released")
    (d / "model.py").write_text(MODEL_PY)
    (d / "build.py").write_text(BUILD)
    (d / "vocab.txt").write_text("".join(w + "\n" for w in VOCAB))
    subprocess.run([sys.executable, str(d / "build.py"), str(d), str(d), str(d / "EVIL"),
                    str(len(VOCAB))], check=True, env={**os.environ, "PYTHONPATH": ""})
    return d


def _by_hand(sd: dict, words: list[str]) -> np.ndarray:
    """log P(w_i | <eos> w_<i) with torch.nn.LSTM (seq-first, as the released code)."""
    emb = sd["encoder.weight"]
    lstm = torch.nn.LSTM(emb.shape[1], 6, 2)
    lstm.load_state_dict({k[4:]: v for k, v in sd.items() if k.startswith("rnn.")})
    ids = [VOCAB.index("<eos>")] + [VOCAB.index(w) for w in words]
    with torch.no_grad():
        h, _ = lstm(emb[torch.tensor(ids)][:, None, :])
        logp = torch.log_softmax(h[:, 0] @ sd["decoder.weight"].T + sd["decoder.bias"], -1)
    return np.array([logp[i, ids[i + 1]].item() for i in range(len(words))])


@pytest.mark.parametrize("name", ["zip.pt", "legacy.pt", "old.pt"])
def test_import_scores_like_torch_lstm(released, tmp_path, name):
    out = tmp_path / "m"
    r = run_agree("import-model", "colorlessgreen", str(released / name),
                                 "--vocab", str(released / "vocab.txt"), "--out", str(out), "-q")
    assert r.exit_code == 0, r.output
    assert json.loads((out / "config.json").read_text())["kind"] == "lstm"
    assert (out / "manifest.json").is_file()
    sd = torch.load(released / "weights.pt", weights_only=True)
    words = ["the", "dogs", "near", "the", "car", "run"]
    scorer = load_model(out, device="cpu")
    got = scorer.word_logprobs([words])[0]
    np.testing.assert_allclose(got, _by_hand(sd, words), atol=1e-5)
    target = scorer.logprob([words[:5]], [["run", "runs"]])[0]
    np.testing.assert_allclose(target[0], _by_hand(sd, words)[5], atol=1e-5)


def test_forbidden_class_refused_and_not_run(released, tmp_path):
    out = tmp_path / "m"
    r = run_agree("import-model", "colorlessgreen", str(released / "evil.pt"),
                                 "--vocab", str(released / "vocab.txt"), "--out", str(out))
    assert r.exit_code == 1
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ")
    assert "refuses to load class" in lines[0] and "not part of the released LSTM format" in lines[0]
    assert not (released / "EVIL").exists()          # os.system never ran
    assert not out.exists()


def test_vocab_size_mismatch(released, tmp_path):
    short = tmp_path / "vocab.txt"
    short.write_text("".join(w + "\n" for w in VOCAB[:-1]))
    out = tmp_path / "m"
    r = run_agree("import-model", "colorlessgreen", str(released / "zip.pt"),
                                 "--vocab", str(short), "--out", str(out))
    assert r.exit_code == 1
    assert r.output.startswith("Error: ") and "9 words" in r.output and "10 rows" in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert not out.exists()


def test_load_released_refuses_a_state_dict_of_other_kind(released):
    # a plain tensor dict is loadable but is not an RNNModel
    with pytest.raises(LMError, match="not a released RNNModel"):
        load_released(released / "weights.pt")
