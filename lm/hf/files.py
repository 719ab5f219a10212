"""What a Hugging Face ``save_pretrained`` directory must hold, checked without importing
transformers (the model-spec parser, :mod:`lm.load`, checks ``hf:DIR`` before loading)."""
from __future__ import annotations

import json
from pathlib import Path

from lm.errors import LMError

#: files of which a save_pretrained directory needs at least one (tokenizer, weights)
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt",
                   "spiece.model", "sentencepiece.bpe.model")
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")


def hf_architecture(config: dict) -> str:
    """``"masked"`` or ``"causal"`` from a Hugging Face config.json dict."""
    archs = config.get("architectures") or []
    return "masked" if any(str(a).endswith("ForMaskedLM") for a in archs) else "causal"


def check_hf_dir(path: Path) -> dict:
    """The config.json of Hugging Face ``save_pretrained`` directory ``path``, after checking
    that it has one, a tokenizer and weights (transformers is not imported)."""
    if not path.is_dir():
        raise LMError(f"{path}: no such model directory")
    cfg = path / "config.json"
    if not cfg.is_file():
        raise LMError(f"{path}: not a Hugging Face model directory (no config.json)")
    try:
        config = json.loads(cfg.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise LMError(f"{cfg}: unreadable model config ({e})") from None
    if not isinstance(config, dict) or "model_type" not in config:
        raise LMError(f"{cfg}: not a Hugging Face model config (no 'model_type')")
    if not any((path / f).is_file() for f in TOKENIZER_FILES):
        raise LMError(f"{path}: tokenizer missing (no tokenizer.json or other tokenizer file "
                      "in the directory; save it with tokenizer.save_pretrained)")
    if not any((path / f).is_file() for f in WEIGHT_FILES):
        raise LMError(f"{path}: weights missing (no model.safetensors or pytorch_model.bin)")
    return config
