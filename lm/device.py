"""The one device resolver of every torch backend: scoring (our models, Hugging Face,
GGUF through transformers) and training.

Device names: ``auto`` (CUDA when available, else the CPU), ``cpu``, ``cuda``, ``cuda:N``.
A bare ``cuda`` is this process's GPU: under torchrun the one of its local rank (each
process its own), otherwise torch's current device. Asking for CUDA where there is
none is an error, never a silent fall-back to the CPU.

torch is imported only when a device is resolved, so that the ``--device`` option of
the CLI can check a name without loading it.
"""
from __future__ import annotations

import re

from lm.errors import FieldError, literal

#: the names :func:`resolve_device` takes, for messages and help
DEVICE_NAMES = ("auto", "cpu", "cuda", "cuda:N")
_NAME = re.compile(r"auto|cpu|cuda(:[0-9]+)?")


def check_device_name(name: str) -> str:
    """``name`` when it is a device name :func:`resolve_device` takes, else a FieldError."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise FieldError(f"unknown {{device}} {literal(repr(name))} "
                         f"(use {', '.join(DEVICE_NAMES[:-1])} or {DEVICE_NAMES[-1]})")
    return name


def resolve_device(name="auto", *, local_rank: int | None = None):
    """The torch.device for ``name`` (a torch.device is returned as it is).

    local_rank: the process's index on this machine under torchrun (None: alone);
    it picks the GPU of a bare ``cuda``.
    """
    import torch  # lazy: heavy; check_device_name (the CLI's --device) needs no torch

    if isinstance(name, torch.device):
        return name
    name = check_device_name(name)
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise FieldError(f"{{device}} {name} requested but CUDA is not available")
    if name == "cuda":
        return torch.device("cuda", torch.cuda.current_device() if local_rank is None
                            else local_rank)
    return torch.device(name)


#: CPU flags of native bfloat16 arithmetic (x86: AVX-512 BF16 or AMX; Arm: BF16)
BF16_FLAGS = ("avx512_bf16", "amx_bf16", "bf16")


def cpu_has_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool | None:
    """Whether this CPU computes bfloat16 natively (None: unknown). Without it torch
    emulates bfloat16 matrix products, which then run slower than float32."""
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return any(f in line.split() for f in BF16_FLAGS)
    except OSError:
        return None
    return None
