"""GGUF header checks and the engine chooser (lm/gguf/header.py): no llama.cpp needed."""
from __future__ import annotations

import importlib.util
import logging

import pytest

from conftest import run_agree
from formats.run import configure_logging
from lm.errors import LMError
from lm.gguf.header import choose_engine, mem_available, read_gguf_info
from tests.gguf_fixtures import smol_path, tiny_gguf


def test_header_fields(tmp_path):
    info = read_gguf_info(tiny_gguf(tmp_path / "t.gguf"))
    assert (info.architecture, info.name, info.parameters, info.quantization) == ("nonsense", "tiny", 10, "F32")
    assert info.tensor_types == {"F32": 10}
    assert info.version == 3 and info.size == (tmp_path / "t.gguf").stat().st_size


@pytest.mark.parametrize("cut", ["header", "data"])
def test_truncated_file_is_named(tmp_path, cut):
    path = tiny_gguf(tmp_path / "t.gguf")
    data = path.read_bytes()
    # the last tensor's 16 bytes are followed by 16 bytes of alignment padding
    path.write_bytes(data[: len(data) // 2] if cut == "header" else data[:-24])
    with pytest.raises(LMError, match=r"t\.gguf: truncated GGUF file"):
        read_gguf_info(path)


def test_not_gguf(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_text("<html>404</html>")
    with pytest.raises(LMError, match=r"model\.gguf: not a GGUF file \(starts with b'<htm'"):
        read_gguf_info(path)
    with pytest.raises(LMError, match="no such GGUF file"):
        read_gguf_info(tmp_path / "absent.gguf")


def test_auto_rule(tmp_path, caplog):
    path = tiny_gguf(tmp_path / "t.gguf")  # 10 weights: 40 bytes in fp32
    both = all(importlib.util.find_spec(m) for m in ("llama_cpp", "transformers"))
    if not both:
        pytest.skip("the auto rule falls back to the installed engine; needs both installed")
    caplog.set_level(logging.INFO)
    # transformers (the faster per pair) when the fp32 weights take under half the memory
    assert choose_engine(path, available=81) == "transformers"
    assert "engine transformers" in caplog.text
    caplog.clear()
    assert choose_engine(path, available=80) == "llama.cpp"  # 40 is not under half of 80
    assert "t.gguf: engine llama.cpp" in caplog.text and ">= half of" in caplog.text
    caplog.clear()
    # float16 on a CPU: llama.cpp's float16 kernels (a float16 copy: 20 bytes here)
    assert choose_engine(path, available=81, dtype="float16", device="cpu") == "llama.cpp"
    assert "float16 on a CPU" in caplog.text
    assert choose_engine(path, available=40, dtype="float16", device="cpu") == "llama.cpp"   # stored
    assert choose_engine(path, available=81, dtype="float16", device="cuda") == "transformers"
    assert choose_engine(path, available=81, dtype="bfloat16", device="cpu") == "transformers"
    assert choose_engine(path, available=81, dtype="float32", device="cpu") == "transformers"


def test_explicit_engine_and_bad_name(tmp_path):
    path = tiny_gguf(tmp_path / "t.gguf")
    assert choose_engine(path, "transformers", available=1) == "transformers"
    assert choose_engine(path, "llama.cpp", available=10**12) == "llama.cpp"
    with pytest.raises(LMError, match="unknown engine"):
        choose_engine(path, "vllm")
    assert mem_available() > 0


def test_real_file_header():
    info = read_gguf_info(smol_path())
    assert info.architecture == "llama" and info.quantization == "Q4_1"
    assert 130e6 < info.parameters < 140e6


@pytest.mark.parametrize("case,message", [
    ("truncated", "truncated GGUF file"), ("not-gguf", "not a GGUF file"),
    ("nonsense", "cannot load this file (architecture 'nonsense')")])
def test_cli_bad_files(tmp_path, case, message):

    from tests.test_score_cli import paper_tab

    path = tiny_gguf(tmp_path / "m.gguf")
    if case == "truncated":
        path.write_bytes(path.read_bytes()[:-24])
    elif case == "not-gguf":
        path.write_text("not a model\n")
    elif importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed")
    tab = paper_tab(tmp_path / "t.tab")
    r = run_agree("score", str(tab), "--model", f"gguf:{path}", "--engine", "llama.cpp",
                                 "--out", str(tmp_path / "o"), "-q")
    assert r.exit_code == 1 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {path}: ") and message in lines[0]
    assert not (tmp_path / "o").exists()
