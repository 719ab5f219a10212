"""docs/api.md's Python example runs as written (it is the documentation of the
library API, so a renamed function or field fails here)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_doc_has_a_python_example():
    assert python_blocks(DOC.read_text(encoding="utf-8"))


def test_the_api_example_runs(capsys, monkeypatch, tmp_path):
    pytest.importorskip("torch")   # the example trains a tiny LSTM
    monkeypatch.setenv("TMPDIR", str(tmp_path))   # its tempfile.mkdtemp() lands here
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    for block in python_blocks(DOC.read_text(encoding="utf-8")):
        exec(compile(block, str(DOC), "exec"), {"__name__": "api_doc"})
    out = capsys.readouterr().out
    assert re.search(r"\d+ originals, \d+ nonce variants", out)
    assert re.search(r"^lstm validation perplexity [\d.]+$", out, flags=re.M)
    assert re.search(r"^unigram: \d+% of \d+ items$", out, flags=re.M)
    assert re.search(r"^lstm: \d+% of \d+ items$", out, flags=re.M)
