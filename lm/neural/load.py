"""Loading a neural model directory (kinds "lstm" and "transformer"): ``model.pt``,
``vocab.txt`` and ``config.json`` checked against one another, the weights mapped
into memory, and the :class:`lm.neural.scorer.NeuralScorer` over them."""
from __future__ import annotations

from pathlib import Path

import torch

from formats.vocab import read_vocab
from lm.base import CONFIG_FILE
from lm.corpus.subword import SPM_FILE, SubwordVocab
from lm.errors import LMError
from lm.model_checks import check_config_matches, check_config_types, check_finite_weights
from lm.neural.checkpoint import load_failure
from lm.neural.models import LMConfig, build_model
from lm.neural.scorer import NeuralScorer

WEIGHTS_FILE = "model.pt"
VOCAB_FILE = "vocab.txt"


def load_network(model_dir: Path, config: dict) -> torch.nn.Module:
    """Rebuild the network from ``model.pt`` ({"state_dict", "config"}) and config.json.
    The weights are the file's, mapped into memory, not copied: the network is built
    without initialising weights that the file's would replace (a 2 x 650 LSTM over
    50,000 words: 290 MB neither read twice nor drawn at random first)."""
    path = Path(model_dir) / WEIGHTS_FILE
    if not path.is_file():
        raise LMError(f"{model_dir}: no {WEIGHTS_FILE} in the model directory")
    ckpt = _read_checkpoint(path)
    if not isinstance(ckpt, dict) or "state_dict" not in ckpt:
        raise LMError(f"{path}: not a model checkpoint (expected a dict with "
                      f"'state_dict' and 'config')")
    check_config_types(config, Path(model_dir) / CONFIG_FILE)
    raw = ckpt.get("config")
    if raw is None:  # older checkpoints: the architecture fields of config.json
        raw = {k: v for k, v in config.items() if k in LMConfig.__dataclass_fields__}
    if not isinstance(raw, dict):
        raise LMError(f"{path}: not a model checkpoint (its 'config' is not a dict)")
    try:
        lm_config = LMConfig.from_dict(raw)
        check_config_types(raw, path)
        model = build_model(lm_config, init=False)   # the file's weights replace them (assign=True)
    except (TypeError, ValueError, KeyError, AttributeError) as e:
        raise LMError(f"{path}: invalid model configuration ({e})") from None
    if lm_config.kind != config["kind"]:
        raise LMError(f"{model_dir}: config.json says kind {config['kind']!r} but "
                      f"{WEIGHTS_FILE} holds a {lm_config.kind!r} model")
    try:
        model.load_state_dict(ckpt["state_dict"], strict=True, assign=True)
    except (RuntimeError, TypeError, AttributeError) as e:
        detail = "; ".join(str(e).strip().splitlines()[:4])
        raise LMError(f"{path}: weights do not match the configuration in "
                      f"{model_dir / 'config.json'} ({detail})") from None
    # model.pt holds its own architecture: config.json (what people read and edit) must say the same
    check_config_matches(config, raw, Path(model_dir) / CONFIG_FILE, path)
    check_finite_weights(model.state_dict().items(), path)
    return model


def _read_checkpoint(path: Path) -> dict:
    """``model.pt`` mapped into memory (a file in torch's older format: read whole)."""
    try:
        try:
            return torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        except RuntimeError as e:
            if "mmap" not in str(e):
                raise
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - a damaged file can fail anywhere in unpickling
        raise LMError(f"{path}: unreadable checkpoint, corrupt or not written by "
                      f"`agree train-lm` ({load_failure(e)})") from None


def load_neural(model_dir: Path, config: dict, *, device: str, batch_size: int, carry_state: bool,
                word_end: bool) -> NeuralScorer:
    """The loader of kinds "lstm" and "transformer" (:mod:`lm.neural.backend`: the options'
    defaults and meaning; :func:`lm.load.load_model`)."""
    model_dir = Path(model_dir)
    model = load_network(model_dir, config)
    vocab = read_vocab(model_dir / VOCAB_FILE, strict=False)
    n_out = model.decoder.weight.shape[0]
    if len(vocab) != n_out:
        raise LMError(f"{model_dir / VOCAB_FILE}: {len(vocab)} entries but the model "
                      f"predicts {n_out} tokens")
    tokenizer = config.get("tokenizer", getattr(model.config, "tokenizer", "word"))
    if tokenizer == "sentencepiece":
        subword = SubwordVocab(model_dir / SPM_FILE, vocab)
    elif tokenizer == "word":
        subword = None
    else:
        raise LMError(f"{model_dir / 'config.json'}: unknown tokenizer {tokenizer!r} "
                      f"(known: word, sentencepiece)")
    return NeuralScorer(model, vocab, kind=config["kind"], subword=subword, device=device,
                        batch_size=batch_size, carry_state=carry_state, word_end=word_end,
                        name=model_dir.name)
