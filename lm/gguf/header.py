"""GGUF files: checks before loading, the header facts a manifest records, and
which engine runs a file.

A GGUF file is ``GGUF`` + version + tensor count + key/value count, the
key/value pairs (architecture, tokenizer, ...), one info record per tensor
(name, shape, type, offset) and then the aligned tensor data. We read that header
ourselves (a few milliseconds, no dependency) so that a truncated download or a
file that is not GGUF at all becomes one clear error naming the file instead of
a crash inside llama.cpp or transformers, and so that the engine can be chosen
from the parameter count before anything heavy is loaded.

Engine rule (:func:`choose_engine`): float16 on a CPU goes to llama.cpp (a float16
copy), whose float16 kernels run several times torch's there; otherwise transformers,
which de-quantizes every weight to fp32 (exact), when parameters x 4 bytes is under
half the memory available now (``MemAvailable`` in /proc/meminfo), else llama.cpp,
which runs the quantized weights as they are.
"""
from __future__ import annotations

import importlib.util
import logging
import os
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from lm.errors import FieldError, LMError, literal

log = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"
ENGINES = ("llama.cpp", "transformers")

#: ggml tensor type -> (name, elements per block, bytes per block); from ggml.h.
GGML_TYPES = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292), 16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74),
    18: ("IQ3_XXS", 256, 98), 19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1), 25: ("I16", 1, 2),
    26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54), 35: ("TQ2_0", 256, 66), 39: ("MXFP4", 32, 17),
}
#: ``general.file_type`` (llama_ftype) -> name, for the manifest's quantization field.
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
    11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
    17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS",
    23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M",
    30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE",
}
# key/value types: struct format of the scalar ones (8 = string, 9 = array)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


@dataclass
class GGUFInfo:
    """What a GGUF header says about a model.

    path          the file
    version       GGUF format version
    architecture  ``general.architecture`` (e.g. ``llama``)
    name          ``general.name`` when present
    parameters    number of weights (sum over tensors of their element counts)
    quantization  ``general.file_type`` by name, else the type holding most weights
    tensor_types  ggml type name -> number of weights stored in it
    size          file size in bytes
    metadata      the scalar and string key/values (arrays left out: the vocabulary)
    """
    path: Path
    version: int
    architecture: str
    name: str
    parameters: int
    quantization: str
    tensor_types: dict[str, int] = field(default_factory=dict)
    size: int = 0
    metadata: dict = field(default_factory=dict)


class _Reader:
    """Sequential reads from the header; running out of bytes is a truncated file."""

    def __init__(self, fh, path: Path):
        self.fh, self.path = fh, path

    def take(self, n: int) -> bytes:
        data = self.fh.read(n)
        if len(data) < n:
            raise LMError(f"{self.path}: truncated GGUF file (header ends early at byte "
                          f"{self.fh.tell()}); download it again")
        return data

    def scalar(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        n = self.scalar("<Q")
        if n > 1 << 30:
            raise LMError(f"{self.path}: corrupt GGUF header (string of {n} bytes)")
        return self.take(n).decode("utf-8", errors="replace")

    def value(self, vtype: int):
        if vtype in _SCALARS:
            return self.scalar(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            itype, n = self.scalar("<I"), self.scalar("<Q")
            if itype in _SCALARS:  # read in one go: vocabularies hold ~50k scores
                size = struct.calcsize(_SCALARS[itype])
                self.take(size * n)
                return None
            for _ in range(n):
                self.value(itype)
            return None
        raise LMError(f"{self.path}: corrupt GGUF header (unknown value type {vtype})")


def read_gguf_info(path: str | os.PathLike) -> GGUFInfo:
    """Read and check a GGUF file's header; :class:`LMError` naming the file when it
    is missing, not GGUF, or truncated (the tensor data must reach the declared end)."""
    path = Path(path)
    if not path.is_file():
        raise LMError(f"{path}: no such GGUF file")
    size = path.stat().st_size
    with open(path, "rb") as fh:
        magic = fh.read(4)
        if magic != GGUF_MAGIC:
            raise LMError(f"{path}: not a GGUF file (starts with {magic!r}, expected b'GGUF')")
        r = _Reader(fh, path)
        version = r.scalar("<I")
        if version not in (2, 3):
            raise LMError(f"{path}: unsupported GGUF version {version} (known: 2, 3)")
        n_tensors, n_kv = r.scalar("<Q"), r.scalar("<Q")
        metadata = {}
        for _ in range(n_kv):
            key = r.string()
            value = r.value(r.scalar("<I"))
            if value is not None:
                metadata[key] = value
        tensors = [_tensor_info(r) for _ in range(n_tensors)]
        header_end = fh.tell()
    align = int(metadata.get("general.alignment", 32))
    data_start = -(-header_end // align) * align
    return _summarise(path, version, size, metadata, tensors, data_start)


def _tensor_info(r: _Reader) -> tuple[str, int, int, int]:
    """(name, elements, ggml type, offset) of one tensor info record."""
    name = r.string()
    n_dims = r.scalar("<I")
    if n_dims > 8:
        raise LMError(f"{r.path}: corrupt GGUF header (tensor {name!r} with {n_dims} dimensions)")
    elements = 1
    for _ in range(n_dims):
        elements *= r.scalar("<Q")
    return name, elements, r.scalar("<I"), r.scalar("<Q")


def _summarise(path, version, size, metadata, tensors, data_start) -> GGUFInfo:
    types: Counter = Counter()
    end = data_start
    for name, elements, ttype, offset in tensors:
        tname, block, nbytes = GGML_TYPES.get(ttype, (f"type{ttype}", 0, 0))
        types[tname] += elements
        # an unknown (newer) type: its size is unknown, so only its start is checked
        length = elements // block * nbytes if block else 0
        end = max(end, data_start + offset + length)
    if end > size:
        raise LMError(f"{path}: truncated GGUF file ({size} bytes, its tensors need {end}); "
                      "download it again")
    arch = str(metadata.get("general.architecture", ""))
    if not arch:
        raise LMError(f"{path}: GGUF header has no general.architecture")
    ftype = metadata.get("general.file_type")
    quant = FILE_TYPES.get(ftype) if isinstance(ftype, int) else None
    if quant is None:
        quant = types.most_common(1)[0][0] if types else "unknown"
    return GGUFInfo(path=path, version=version, architecture=arch,
                    name=str(metadata.get("general.name", path.stem)),
                    parameters=sum(types.values()), quantization=quant,
                    tensor_types=dict(types), size=size, metadata=metadata)


def mem_available() -> int | None:
    """Bytes of memory available now (``MemAvailable`` in /proc/meminfo), or None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def engine_installed(engine: str) -> bool:
    module = {"llama.cpp": "llama_cpp", "transformers": "transformers"}[engine]
    return importlib.util.find_spec(module) is not None


def choose_engine(path: str | os.PathLike, engine: str = "auto", *, available: int | None = None,
                  dtype: str | None = None, device: str | None = None) -> str:
    """``"llama.cpp"`` or ``"transformers"`` for a GGUF file; ``engine`` other than
    ``"auto"`` is checked and returned. ``auto`` picks the faster engine that fits
    ``available`` memory (default: MemAvailable now). Measured on SmolLM2-135M (Q4_1),
    800 BLiMP pairs, 1 / 2 threads, alternated (``benchmarks/bench_engines.py``):

    * ``dtype`` float16 on a CPU (``device`` cpu, or auto without CUDA): llama.cpp on
      a float16 copy, 23.7 / 44.1 pairs/s, where torch's float16 on this CPU ran 4.3
      (1 thread); when the copy takes under half of ``available``;
    * else transformers (fp32, exact) when the fp32 weights take under half of
      ``available``: 17.5 / 27.1 pairs/s after a 38 s load; llama.cpp as stored ran
      11.3 / 22.1 (Q8-rounded activations: 0.26 nats per sentence away), and computes
      transformers' numbers only on a float32 copy (``dtype`` float32 with ``engine``
      llama.cpp: 16.5 / 30.4 pairs/s, a 2 s load);
    * else llama.cpp, which runs the quantized weights as stored.

    The engine that is installed wins over one that is not; the choice and why go to
    stderr."""
    if engine not in ("auto", *ENGINES):
        raise FieldError(f"{{engine}} {literal(engine)}: unknown engine (known: auto, {', '.join(ENGINES)})")
    info = read_gguf_info(path)
    if engine != "auto":
        return engine
    available = mem_available() if available is None else available
    if dtype == "float16" and _on_cpu(device) and available is not None and info.parameters * 2 < available / 2:
        choice, why = "llama.cpp", "float16 on a CPU: llama.cpp's float16 kernels (a copy of the weights)"
    else:
        choice, why = _auto_choice(info.parameters * 4, available)
    other = ENGINES[1 - ENGINES.index(choice)]
    if not engine_installed(choice) and engine_installed(other):
        why += f"; {choice} is not installed"
        choice = other
    log.info(f"{info.path.name}: engine {choice} ({info.parameters / 1e6:.0f}M parameters, "
             f"{info.quantization}; {why})")
    return choice


def _on_cpu(device: str | None) -> bool:
    """Whether ``device`` (a name of :mod:`lm.device`) computes on the CPU."""
    if device in (None, "auto"):
        # imported here: torch is heavy, and only this question needs it
        import torch
        return not torch.cuda.is_available()
    return device == "cpu"


def _auto_choice(need: int, available: int | None) -> tuple[str, str]:
    """(engine, why) for ``need`` bytes of fp32 weights."""
    if available is not None and need < available / 2:
        return "transformers", f"{_gb(need)} of fp32 weights < half of {_gb(available)} available"
    return "llama.cpp", (f"{_gb(need)} of fp32 weights >= half of {_gb(available)} available"
                         if available is not None else "available memory unknown")


def _gb(n: float) -> str:
    return f"{n / 1e9:.2f} GB"
