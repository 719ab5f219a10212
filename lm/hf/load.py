"""Loading pretrained Hugging Face models (local files only) as :class:`lm.base.Scorer`.

Three ways in, all offline (``local_files_only=True``; nothing is fetched):

* ``load_hf_dir(DIR)``: a ``save_pretrained`` directory (``config.json`` with
  ``model_type``, weights, tokenizer files). Causal or masked by the config's
  ``architectures`` (``...ForMaskedLM`` -> :class:`lm.hf.masked.HFMaskedScorer`,
  anything else -> :class:`lm.hf.causal.HFCausalScorer`). A plain model directory
  whose config.json has ``model_type`` and no ``kind`` is such a directory
  (the backend record :data:`HF` recognises it by ``model_type``).
* ``load_gguf_transformers(FILE.gguf)``: transformers' own GGUF reader
  (``from_pretrained(dir, gguf_file=name)``, which dequantises to the chosen
  dtype); the file's sha256 goes into the scorer's conventions.

Options: ``device`` (see :mod:`lm.device`), ``dtype`` float32|bfloat16|float16 (the
weights; the output layer and log-softmax are always fp32), ``batch_size`` = sequences
per forward pass, ``convention`` (what the model reads, :mod:`lm.pieces`), ``threads``
(torch's CPU threads while scoring; default: torch's own setting).
transformers (and gguf/accelerate for GGUF files) are imported only here and
only when such a model is loaded: the rest of the tool never needs them.
"""
from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

from lm.backends import Backend
from lm.errors import FieldError, LMError, literal
from lm.hf.files import check_hf_dir, hf_architecture
from formats.digests import sha256_of

INSTALL_HINT = "pip install 'agree-bench[hf]'"
DTYPES = ("float32", "bfloat16", "float16")


def _transformers(what: str):
    """transformers, imported on first use (heavy; only Hugging Face models need it)."""
    try:
        import transformers
    except ImportError:
        raise LMError(f"{what}: Hugging Face models need transformers ({INSTALL_HINT})") from None
    transformers.logging.set_verbosity_error()  # its warnings would break "one Error: line"
    transformers.logging.disable_progress_bar()  # loading bars ignore --quiet; ours suffice
    return transformers


def _torch_dtype(dtype: str):
    import torch

    if dtype not in DTYPES:
        raise LMError(f"unknown dtype {dtype!r} (use {', '.join(DTYPES)})")
    return getattr(torch, dtype)


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def load_hf_dir(path, *, device: str = "auto", dtype: str = "float32",
                batch_size: int | None = None, convention: str = "agree", threads: int | None = None):
    """A local ``save_pretrained`` directory as a causal or masked scorer."""
    path = Path(path)
    config = check_hf_dir(path)
    tf = _transformers(str(path))
    masked = hf_architecture(config) == "masked"
    auto = tf.AutoModelForMaskedLM if masked else tf.AutoModelForCausalLM
    try:
        tokenizer = tf.AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = auto.from_pretrained(path, local_files_only=True, dtype=_torch_dtype(dtype))
    except LMError:
        raise
    except Exception as e:  # noqa: BLE001 - transformers raises many kinds on bad files
        raise LMError(f"{path}: cannot load the Hugging Face model ({_first_line(e)})") from None
    return _scorer(model, tokenizer, masked=masked, name=path.name, source=str(path),
                   device=device, dtype=dtype, batch_size=batch_size, kind="hf",
                   convention=convention, threads=threads)


def load_gguf_transformers(path, *, device: str = "auto", dtype: str = "float32",
                           batch_size: int | None = None, convention: str = "agree",
                           threads: int | None = None):
    """A GGUF file through transformers' GGUF loader (dequantised to ``dtype``)."""
    path = Path(path)
    if not path.is_file():
        raise LMError(f"{path}: no such GGUF file")
    with open(path, "rb") as fh:
        if fh.read(4) != b"GGUF":
            raise LMError(f"{path}: not a GGUF file (no GGUF magic number)")
    tf = _transformers(str(path))
    try:
        import gguf  # noqa: F401  (transformers needs it to read the file)
    except ImportError:
        raise LMError(f"{path}: GGUF files need the gguf package ({INSTALL_HINT})") from None
    try:
        kw = {"gguf_file": path.name, "local_files_only": True}
        # the GGUF reader draws a plain tqdm bar that ignores --quiet and transformers'
        # own progress-bar switch: its stderr goes nowhere while the file is read
        with contextlib.redirect_stderr(io.StringIO()):
            tokenizer = tf.AutoTokenizer.from_pretrained(path.parent, **kw)
            model = tf.AutoModelForCausalLM.from_pretrained(path.parent, dtype=_torch_dtype(dtype),
                                                            **kw)
    except LMError:
        raise
    except Exception as e:  # noqa: BLE001 - a truncated file fails anywhere in the reader
        raise LMError(f"{path}: unreadable or truncated GGUF file ({_first_line(e)})") from None
    return _scorer(model, tokenizer, masked=False, name=path.name, source=str(path),
                   device=device, dtype=dtype, batch_size=batch_size, kind="gguf",
                   sha256=sha256_of(path), convention=convention, threads=threads)


def gguf_to_hf_dir(path, out) -> Path:
    """De-quantize a GGUF file to fp32 and save it as a Hugging Face ``save_pretrained``
    directory ``out`` (weights, config, fast tokenizer): one local model directory that
    agree, minicons and lm-evaluation-harness can all load (benchmarks/bench_peers.py)."""
    import torch  # lazy: heavy

    path, out = Path(path), Path(out)
    tf = _transformers(str(path))
    kw = {"gguf_file": path.name, "local_files_only": True}
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # the GGUF reader's own tqdm bar
            tokenizer = tf.AutoTokenizer.from_pretrained(path.parent, **kw)
            model = tf.AutoModelForCausalLM.from_pretrained(path.parent, dtype=torch.float32, **kw)
    except Exception as e:  # noqa: BLE001 - a truncated file fails anywhere in the reader
        raise LMError(f"{path}: unreadable or truncated GGUF file ({_first_line(e)})") from None
    # de-quantized weights are plain fp32 tensors: the GGUF quantizer marker only stops saving
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tokenizer.save_pretrained(out)
    model.save_pretrained(out)
    return out


def _scorer(model, tokenizer, *, masked: bool, batch_size, **kw):
    # lazy: heavy (the scorers import torch; lm.load imports this module for its record HF)
    if masked:
        from lm.hf.masked import HFMaskedScorer
        return HFMaskedScorer(model, tokenizer, batch_size=batch_size or 64, **kw)
    from lm.hf.causal import HFCausalScorer
    return HFCausalScorer(model, tokenizer, batch_size=batch_size or 32, **kw)


def hf_word_vectors(path) -> tuple[list[str], "object"]:
    """(words, float32 matrix): the input embeddings of the single-piece words of a
    Hugging Face model directory (``agree perturb --vectors DIR``). A word is a
    token that starts a word (``Ġword``/``▁word``; WordPiece: a token without
    ``##``) and is not special; its vector is that token's input embedding. Words
    of several pieces have none."""
    path = Path(path)
    check_hf_dir(path)
    tf = _transformers(str(path))
    try:
        tokenizer = tf.AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = tf.AutoModel.from_pretrained(path, local_files_only=True)
    except Exception as e:  # noqa: BLE001 - transformers raises many kinds on bad files
        raise LMError(f"{path}: cannot load the Hugging Face model ({_first_line(e)})") from None
    matrix = model.get_input_embeddings().weight.detach().float().cpu().numpy()
    tokens = tokenizer.convert_ids_to_tokens(list(range(min(len(tokenizer), matrix.shape[0]))))
    marked = any(str(t).startswith(("Ġ", "▁")) for t in tokens)
    special = set(tokenizer.all_special_ids)
    words, rows, seen = [], [], set()
    for i, t in enumerate(tokens):
        t = str(t)
        if i in special:
            continue
        if marked and t.startswith(("Ġ", "▁")) and len(t) > 1:
            word = t[1:]
        elif not marked and not t.startswith("##"):
            word = t
        else:
            continue
        if word not in seen:  # a token may recur (e.g. added tokens): keep the first
            seen.add(word)
            words.append(word)
            rows.append(i)
    return words, matrix[rows]


@dataclass(frozen=True)
class HFOptions:
    """How a Hugging Face directory is loaded (kind ``hf``; the module docstring).

    engine       transformers (None) or ``vllm`` (its threads are vLLM's own)
    device, dtype, batch_size, convention, threads: as the module docstring says
    """
    engine: str | None = None
    device: str = "auto"
    dtype: str = "float32"
    batch_size: int | None = None
    convention: str = "agree"
    threads: int | None = None


def _load_registered(model_dir: Path, config: dict, options: HFOptions):
    """The loader of kind ``hf`` (a directory whose config.json has ``model_type``): on
    transformers, or on vLLM with ``engine="vllm"``."""
    o = options
    if o.engine == "vllm":
        return load_vllm_dir(model_dir, dtype=o.dtype, device=o.device, batch_size=o.batch_size,
                             convention=o.convention)
    return load_hf_dir(model_dir, device=o.device, dtype=o.dtype, batch_size=o.batch_size,
                       convention=o.convention, threads=o.threads)


def load_vllm_dir(path, *, dtype: str = "float32", device: str = "auto", batch_size: int | None = None,
                  convention: str = "agree"):
    """A local causal ``save_pretrained`` directory on vLLM (:mod:`lm.hf.vllm_engine`); its
    tokenizer, read here, gives the pieces and the word-start tokens."""
    path = Path(path)
    if hf_architecture(check_hf_dir(path)) == "masked":
        raise FieldError(f"{literal(path)}: a masked model; vLLM scores causal models "
                         "(use {engine} transformers)")
    from lm.hf.vllm_engine import load_vllm  # lazy: vLLM is an optional extra

    tf = _transformers(str(path))
    try:
        tokenizer = tf.AutoTokenizer.from_pretrained(path, local_files_only=True)
    except Exception as e:  # noqa: BLE001 - transformers raises many kinds on bad files
        raise LMError(f"{path}: cannot load the tokenizer ({_first_line(e)})") from None
    return load_vllm(path, tokenizer, dtype=dtype, device=device, batch_size=batch_size,
                     convention=convention)


def _open(scorer):
    from lm.hf.open import open_scorer  # torch: already in, with the scorer
    return open_scorer(scorer)


def _opening(name: str, options: dict) -> dict:
    # states are read on transformers, whatever engine scores the model: an engine
    # named for opening is a GGUF file's (lm.gguf.load)
    return {k: v for k, v in options.items() if k != "engine"}


#: the backend: ``hf:DIR``, or a directory whose config.json has ``model_type`` (no ``kind``)
HF = Backend("hf", HFOptions, _load_registered, scheme="hf", check=check_hf_dir,
             recognise=lambda config: "model_type" in config, opener=_open, opening=_opening)
