"""Import the paper's released LSTMs (``hidden650_batch128_dropout0.2_lr20.0.pt`` ...)
into our LSTM model-directory format, without running pickled code.

The released files are whole pickled PyTorch modules of class ``RNNModel`` from a
module named ``model`` (the word_language_model recipe of 2017-2018), saved by
torch 0.3-1.0 with ``torch.save(model)``: a pickle that names classes, and an
ordinary ``torch.load`` would import and call whatever the pickle names. Here the
pickle goes through :class:`RestrictedUnpickler`, whose ``find_class`` knows
exactly the names this format needs and maps each to something inert:

* ``model.RNNModel`` and the torch modules it holds (Embedding, LSTM, Linear,
  Dropout) -> :class:`_Held`, a plain attribute holder (pickle fills its
  ``__dict__``; no module code runs);
* the tensor and parameter rebuilders of ``torch._utils``, ``torch.Size``,
  ``torch.nn.parameter.Parameter``, ``collections.OrderedDict`` and ``set`` ->
  themselves (they only build tensors and containers);
* torch 0.3's ``torch.nn.backends.thnn._get_thnn_function_backend`` (a module's
  ``_backend`` attribute) -> a function returning None.

Anything else is refused with ``FILE: refuses to load class X.Y``. Storages
(``torch.FloatStorage`` ...) are resolved by ``torch.load`` itself before
``find_class`` is asked. Both serialisations are read this way: the zip format
(torch >= 1.6) and the legacy one (``_use_new_zipfile_serialization=False``,
what torch 0.3-1.5 wrote), through ``torch.load(pickle_module=...)``.

The weights then become our LSTM format (:mod:`lm.neural.models` ``LSTMLM``): the
state_dict keys ``embedding.weight``, ``rnn.weight_ih_l{k}`` ...,
``decoder.weight``/``bias``, in ``model.pt`` ({"state_dict", "config"}) beside
``config.json`` (kind ``lstm``) and the released ``vocab.txt`` (one word a
line, line i = id i; its size must equal the embedding's rows).
"""
from __future__ import annotations

import collections
import json
import pickle
import types
import warnings
from pathlib import Path

import torch

from lm.neural.checkpoint import save_weights
from lm.errors import LMError
from formats.digests import sha256_of
from formats.vocab import VOCAB_CHECKSUM, read_vocab
from lm.neural.models import LMConfig, build_model

FORMAT = "colorlessgreen"


class _Held:
    """Stands in for a pickled module: pickle's BUILD step fills ``__dict__``."""

    #: the legacy format records each module's source and torch.load compares it
    #: with the class it got (warning only, and never patching, with this False)
    dump_patches = False

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 2:  # (dict, slots) form
            state = {**(state[0] or {}), **(state[1] or {})}
        if not isinstance(state, dict):
            raise pickle.UnpicklingError("unexpected module state")
        self.__dict__.update(state)


def _no_backend(*_args):
    """torch 0.3 pickled a module's ``_backend`` as this call; the value is unused."""
    return None


def _legacy_parameter(data=None, requires_grad=True, *_rest):
    return torch.nn.Parameter(data, requires_grad=requires_grad)


#: (module, name) -> the object the unpickler returns; nothing else is loadable.
ALLOWED = {
    ("model", "RNNModel"): _Held,
    ("torch.nn.modules.sparse", "Embedding"): _Held,
    ("torch.nn.modules.rnn", "LSTM"): _Held,
    ("torch.nn.modules.linear", "Linear"): _Held,
    ("torch.nn.modules.dropout", "Dropout"): _Held,
    ("torch.nn.backends.thnn", "_get_thnn_function_backend"): _no_backend,
    ("torch._utils", "_rebuild_tensor"): torch._utils._rebuild_tensor,
    ("torch._utils", "_rebuild_tensor_v2"): torch._utils._rebuild_tensor_v2,
    ("torch._utils", "_rebuild_parameter"): torch._utils._rebuild_parameter,
    ("torch.nn.parameter", "Parameter"): _legacy_parameter,
    ("torch", "Size"): torch.Size,
    ("collections", "OrderedDict"): collections.OrderedDict,
    # newer torch modules keep sets (e.g. _non_persistent_buffers_set); protocol 2
    # names the builtins module by its Python 2 name
    ("builtins", "set"): set,
    ("__builtin__", "set"): set,
}


class RefusedClass(pickle.UnpicklingError):
    """The pickle names a class outside :data:`ALLOWED`."""


class RestrictedUnpickler(pickle.Unpickler):
    """A pickle reader that resolves only the names in :data:`ALLOWED`."""

    def find_class(self, module, name):
        try:
            return ALLOWED[(module, name)]
        except KeyError:
            raise RefusedClass(f"{module}.{name}") from None


def _restricted_module() -> types.ModuleType:
    """What ``torch.load(pickle_module=...)`` needs: ``Unpickler`` and ``load``
    (the legacy format reads its header records with ``load``)."""
    mod = types.ModuleType("agree_restricted_pickle")
    mod.Unpickler = RestrictedUnpickler
    mod.load = lambda f, **kw: RestrictedUnpickler(f, **kw).load()
    mod.__dict__["UnpicklingError"] = pickle.UnpicklingError
    return mod


def load_released(path: str | Path) -> _Held:
    """Unpickle a released checkpoint with :class:`RestrictedUnpickler` (never
    executing code it names); returns the ``RNNModel`` as a :class:`_Held`."""
    path = Path(path)
    if not path.is_file():
        raise LMError(f"{path}: no such checkpoint file")
    try:
        # weights_only=False only because the restricted module above does the
        # unpickling; torch's own weights_only reader refuses RNNModel outright.
        with warnings.catch_warnings():  # "source code of class ... has changed"
            warnings.simplefilter("ignore")
            obj = torch.load(path, map_location="cpu", pickle_module=_restricted_module(),
                             weights_only=False)
    except RefusedClass as e:
        raise LMError(f"{path}: refuses to load class {e} "
                      "(not part of the released LSTM format)") from None
    except Exception as e:  # noqa: BLE001 - a damaged pickle can fail anywhere
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise LMError(f"{path}: unreadable checkpoint ({first})") from None
    if not isinstance(obj, _Held):
        raise LMError(f"{path}: not a released RNNModel checkpoint "
                      f"(holds {type(obj).__name__})")
    return obj


def _module(obj: _Held, name: str, path: Path) -> _Held:
    sub = (obj.__dict__.get("_modules") or {}).get(name) or obj.__dict__.get(name)
    if not isinstance(sub, _Held):
        raise LMError(f"{path}: RNNModel has no {name!r} module")
    return sub


def _param(mod: _Held, name: str, path: Path, owner: str) -> torch.Tensor:
    p = (mod.__dict__.get("_parameters") or {}).get(name)
    if not isinstance(p, torch.Tensor):
        raise LMError(f"{path}: {owner} has no parameter {name!r}")
    return p.detach().to(torch.float32).contiguous()


def convert_released(path: str | Path, vocab: list[str]) -> tuple[dict, dict]:
    """Released checkpoint -> (our LMConfig dict, our LSTMLM state_dict)."""
    path = Path(path)
    obj = load_released(path)
    rnn_type = obj.__dict__.get("rnn_type", "LSTM")
    if rnn_type != "LSTM":
        raise LMError(f"{path}: rnn_type {rnn_type!r}; only LSTM checkpoints are supported")
    enc, rnn, dec = (_module(obj, n, path) for n in ("encoder", "rnn", "decoder"))
    emb = _param(enc, "weight", path, "encoder")
    layers = int(obj.__dict__.get("nlayers", rnn.__dict__.get("num_layers", 1)))
    hidden = int(obj.__dict__.get("nhid", rnn.__dict__.get("hidden_size", 0)))
    if len(vocab) != emb.shape[0]:
        raise LMError(f"vocabulary has {len(vocab)} words but the checkpoint's embedding "
                      f"has {emb.shape[0]} rows ({path})")
    state = {"embedding.weight": emb,
             "decoder.weight": _param(dec, "weight", path, "decoder"),
             "decoder.bias": _param(dec, "bias", path, "decoder")}
    for k in range(layers):
        for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            state[f"rnn.{kind}_l{k}"] = _param(rnn, f"{kind}_l{k}", path, "rnn")
    if state["decoder.weight"].shape != (len(vocab), hidden):
        raise LMError(f"{path}: decoder is {tuple(state['decoder.weight'].shape)}, expected "
                      f"({len(vocab)}, {hidden})")
    config = {"kind": "lstm", "vocab_size": len(vocab), "emb_size": int(emb.shape[1]),
              "hidden_size": hidden, "layers": layers,
              "dropout": float(rnn.__dict__.get("dropout", 0.0) or 0.0),
              "tied": False, "tokenizer": "word"}
    return config, state


def read_released_vocab(path: str | Path) -> list[str]:
    """The released vocab.txt (any lines), which must hold <eos> and <unk>."""
    words = read_vocab(path, strict=False)
    for needed in ("<eos>", "<unk>"):
        if needed not in words:
            raise LMError(f"{path}: the vocabulary lacks {needed}")
    return words


def import_released(checkpoint: str | Path, vocab_path: str | Path, out_dir: Path) -> dict:
    """Write our model directory (config.json, model.pt, vocab.txt) into ``out_dir``
    (an empty directory the caller renames into place); returns config.json's dict."""
    vocab = read_released_vocab(vocab_path)
    arch, state = convert_released(checkpoint, vocab)
    try:  # loading into our model checks every shape before anything is written
        build_model(LMConfig.from_dict(arch)).load_state_dict(state, strict=True)
    except (RuntimeError, ValueError) as e:
        detail = "; ".join(str(e).strip().splitlines()[:3])
        raise LMError(f"{checkpoint}: weights do not fit an LSTM ({detail})") from None
    save_weights(state, arch, out_dir)
    (out_dir / "vocab.txt").write_text("".join(w + "\n" for w in vocab), encoding="utf-8")
    config = {**arch, "imported_from": FORMAT, "source": Path(checkpoint).name,
              VOCAB_CHECKSUM: sha256_of(out_dir / "vocab.txt")}
    (out_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return config
