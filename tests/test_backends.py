"""The backend registry (lm/backends.py, lm.load.BACKENDS) is the one source of what a
model spec names, which options a backend takes and whether it can be opened."""
import dataclasses
import inspect
import json

import pytest

from lm.backends import SHARED_OPTIONS, NoOptions
from lm.errors import LMError
from lm.gguf.load import ENGINE_OPTIONS, GGUFOptions
from lm.load import BACKENDS, backend, load_model, model_spec, open_model, spec_path
from lm.neural.backend import NeuralOptions
from lm.unigram import UnigramScorer


def _config_dir(path, config: dict):
    path.mkdir()
    (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return path


def _hf_dir(path):
    _config_dir(path, {"model_type": "gpt2"})
    (path / "tokenizer.json").write_text("{}", encoding="utf-8")
    (path / "model.safetensors").write_bytes(b"")
    return path


def _gguf_file(path):
    path.write_bytes(b"GGUF")
    return path


#: per kind, a spec that names such a model, written the ways a user writes one (a new
#: backend needs its line here: the test below fails until it has one)
SPECS = {
    "lstm": lambda tmp: [str(_config_dir(tmp / "m", {"kind": "lstm"}))],
    "transformer": lambda tmp: [str(_config_dir(tmp / "m", {"kind": "transformer"}))],
    "kn5": lambda tmp: [str(_config_dir(tmp / "m", {"kind": "kn5"}))],
    "unigram": lambda tmp: [str(_config_dir(tmp / "m", {"kind": "unigram"}))],
    "hf": lambda tmp: [f"hf:{_hf_dir(tmp / 'm')}", str(tmp / "m")],
    "gguf": lambda tmp: [f"gguf:{_gguf_file(tmp / 'm.gguf')}"],
}


def test_the_registry_names_each_kind_once():
    """Kinds and schemes are unique; every kind has a spec in this test."""
    kinds = [b.kind for b in BACKENDS]
    schemes = [b.scheme for b in BACKENDS if b.scheme]
    assert len(set(kinds)) == len(kinds) and len(set(schemes)) == len(schemes)
    assert sorted(SPECS) == sorted(kinds)


@pytest.mark.parametrize("kind", [b.kind for b in BACKENDS])
def test_every_kind_resolves_a_spec(tmp_path, kind):
    """Each way of writing a kind's spec resolves to that kind's record."""
    for text in SPECS[kind](tmp_path):
        spec = model_spec(text)
        assert spec.kind == kind
        assert backend(spec.kind) is next(b for b in BACKENDS if b.kind == kind)


def test_spec_path_leaves_out_each_scheme_as_written():
    """The path a run records for a spec: its scheme left out, nothing else changed."""
    for b in BACKENDS:
        if b.scheme:
            assert spec_path(f"{b.scheme}:models/x") == "models/x"
    assert spec_path("runs/lstm") == "runs/lstm" and spec_path("other:x") == "other:x"


def test_an_unknown_kind_is_one_clear_error(tmp_path):
    """A config.json naming no backend: one LMError listing the kinds a config may name
    (those without a scheme), from the registry."""
    model = _config_dir(tmp_path / "m", {"kind": "nonsuch"})
    with pytest.raises(LMError) as e:
        load_model(model)
    known = ", ".join(sorted(b.kind for b in BACKENDS if b.scheme is None))
    assert str(e.value) == f"{model}: unknown model kind 'nonsuch' (known: {known})"
    assert known == "kn5, lstm, transformer, unigram"
    with pytest.raises(LMError, match="no such model directory"):
        model_spec(f"nonsuch:{tmp_path / 'x'}")    # not a scheme: a path, and none is there


def test_options_are_the_records_fields():
    """A backend gets its options record: the shared options it does not name are left
    out, any other option is refused with the fields it takes."""
    lstm, kn5 = backend("lstm"), backend("kn5")
    assert lstm.take({"device": "cpu", "dtype": "float16", "word_end": False}) == \
        NeuralOptions(device="cpu", word_end=False)
    assert kn5.take({name: None for name in SHARED_OPTIONS}) == NoOptions()
    with pytest.raises(LMError, match=r"^lstm models take no option 'n_ctx' \(they take: "
                                      r"batch_size, carry_state, device, word_end\)$"):
        lstm.take({"n_ctx": 8})
    for b in BACKENDS:
        assert dataclasses.is_dataclass(b.options) and b.options.__dataclass_params__.frozen


def test_gguf_engine_options_are_the_engines_parameters():
    """ENGINE_OPTIONS lists what each engine's loader takes (its keyword parameters), and
    every one of them is a field of the GGUF options record."""
    from lm.gguf.llamacpp import load_llamacpp
    from lm.hf.load import load_gguf_transformers

    for engine, loader in (("llama.cpp", load_llamacpp), ("transformers", load_gguf_transformers)):
        params = set(inspect.signature(loader).parameters) - {"path"}
        assert set(ENGINE_OPTIONS[engine]) == params
        assert params <= {f.name for f in dataclasses.fields(GGUFOptions)}


def test_a_backend_without_states_says_what_it_is():
    """The records without an opener name the model in the refusal."""
    assert {b.kind for b in BACKENDS if b.opener is None} == {"kn5", "unigram"}
    unigram = UnigramScorer(["<unk>", "<eos>", "a"], [1, 1, 1], name="u")
    with pytest.raises(LMError, match=r"^u: a unigram model cannot be opened \(inspect reads states of "):
        open_model(unigram)
