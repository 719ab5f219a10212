"""``agree browse``: the page's data against the score runs' items.tsv, its files
(the assets packaged), and the bad inputs (one Error: line, nothing written)."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from agreement.reporting.browse.columns import RIGHT, UNDECIDABLE, WRONG, attractor_positions
from agreement.reporting.browse.site import ASSET_FILES, ASSETS
from conftest import run_agree
from browse_fixtures import make_items, page_columns, page_text, score_runs, scored_rows  # noqa: F401 (fixture)


def browse(*args):
    return run_agree("browse", *args)


@pytest.fixture(scope="module")
def page(score_runs, tmp_path_factory):
    """The page of every fixture run together."""
    out = tmp_path_factory.mktemp("page") / "page"
    dirs = [score_runs[k] for k in ("uni", "kn") if k in score_runs]
    r = browse(*dirs, "--out", out, "-q")
    assert r.exit_code == 0, r.stderr
    return out


def test_columns_hold_every_scored_row(page, score_runs):
    """One page row per scored pair; per model the outcome and both log-probabilities of
    its items.tsv row (as float32), the rows of one item adjacent."""
    meta, cols = page_columns(page)
    text = page_text(page)
    items = make_items()
    assert meta["rows"] == len(items) == len(text) == len(cols["group"])
    ids = [t[0] for t in text]
    assert ids == [it.item_id for it in items]
    assert list(cols["variant"]) == [it.variant for it in items]
    assert [meta["dicts"]["condition"][c] for c in cols["condition"]] == \
        ["original" if it.variant == 0 else "nonce" for it in items]
    assert list(cols["attractors"]) == [it.attractors for it in items]
    assert list(cols["distance"]) == [it.distance for it in items]
    assert np.all(np.diff(cols["group"].astype(int)) >= 0)
    for k, model in enumerate(meta["models"]):
        run = score_runs["uni" if model["run"] == 0 else "kn"]
        rows = {(r["item_id"], int(r["variant"])): r for r in scored_rows(run) if r["model"] == model["name"]}
        for n, it in enumerate(items):
            r = rows[(it.item_id, it.variant)]
            want = UNDECIDABLE if r["undecidable"] == "1" else RIGHT if r["correct"] == "1" else WRONG
            assert cols[f"o{k}"][n] == want
            assert cols[f"lc{k}"][n] == np.float32(float(r["logp_correct"]))
            assert cols[f"lw{k}"][n] == np.float32(float(r["logp_wrong"]))


def test_words_marks_and_surprisal(page, score_runs):
    """A row's words: the sentence, cue, target, the wrong form, attractors from the
    words' own POS and Number; the unigram run's surprisal per word for both sentences."""
    meta, _ = page_columns(page)
    text = page_text(page)
    first = text[0]
    assert first[1] == ["the", "key", "to", "the", "cabinets", "is", "."]
    assert (first[3], first[4], first[5], first[6]) == (1, 5, "are", [4])
    assert first[2] == "1111100"   # "is." as written
    uni = next(k for k, m in enumerate(meta["models"]) if m["run"] == 0)
    good, bad = first[8][str(uni)]
    assert len(good) == len(bad) == 7 and all(x > 0 for x in good)
    assert meta["surprisal"] is True
    assert [attractor_positions(it) for it in make_items()[:3]] == [[4], [4], [4]]


def test_page_files_and_package_data(page):
    """index.html loads only relative scripts and styles (no URL with a scheme); the
    plots are copied; setup.cfg ships the assets in the wheel."""
    html = (page / "index.html").read_text(encoding="utf-8")
    assert "http" not in html.replace("http-equiv", "")
    for name in ASSET_FILES:
        assert (page / name).read_bytes() == (ASSETS / name).read_bytes()
    assert "http://" not in (page / "browse.js").read_text() and "https://" not in (page / "browse.js").read_text()
    assert list((page / "plots").glob("*.png"))
    manifest = json.loads((page / "manifest.json").read_text())
    assert manifest["command"] == "browse" and manifest["counts"]["rows"] == 18
    cfg = (ASSETS.parents[3] / "setup.cfg").read_text()
    assert "agreement.reporting.browse = assets/*" in cfg


def test_same_inputs_give_identical_pages(score_runs, tmp_path):
    for name in ("a", "b"):
        r = browse(score_runs["uni"], "--out", tmp_path / name, "-q")
        assert r.exit_code == 0, r.stderr
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    for f in files:
        a, b = (tmp_path / "a" / f).read_bytes(), (tmp_path / "b" / f).read_bytes()
        if f.name == "manifest.json":   # its argv names each --out
            a, b = (json.loads(x) for x in (a, b))
            assert a["argv"][-2:] == [str(tmp_path / "a"), "-q"]
            a["argv"] = b["argv"] = None
        assert a == b, f


def _copy_labelled(run, to, label):
    """A copy of the score run ``run`` at ``to`` whose test set is labelled ``label``
    (as a score run from another directory records it)."""
    shutil.copytree(run, to)
    manifest = json.loads((to / "manifest.json").read_text())
    old = manifest["parameters"]["testsets"][0]
    manifest["parameters"]["testsets"] = [label]
    manifest["inputs"] = [dict(e, path=e["path"].replace(old, label)) for e in manifest["inputs"]]
    (to / "manifest.json").write_text(json.dumps(manifest))
    (to / "items.tsv").write_text((to / "items.tsv").read_text().replace(f"\t{old}\t", f"\t{label}\t"))
    return to


def test_moved_testset_is_named_with_testset(score_runs, tmp_path):
    """A run whose test set is elsewhere now: found with --testset LABEL=PATH, checked
    against the run's sha256; a changed file is refused."""
    run = _copy_labelled(score_runs["uni"], tmp_path / "run", "gone/ext")
    r = browse(run, "--out", tmp_path / "p1")
    assert r.exit_code == 1 and "its test set gone/ext is not here" in r.stderr and "--testset gone/ext=PATH" in r.stderr
    r = browse(run, "--testset", f"gone/ext={score_runs['testset']}", "--out", tmp_path / "p2", "-q")
    assert r.exit_code == 0, r.stderr
    changed = tmp_path / "changed"
    shutil.copytree(score_runs["testset"], changed)
    _drop_last_line(changed / "items.tsv")
    r = browse(run, "--testset", f"gone/ext={changed}", "--out", tmp_path / "p3")
    assert r.exit_code == 1 and "changed since" in r.stderr
    assert not (tmp_path / "p1").exists() and not (tmp_path / "p3").exists()


def _drop_last_line(path):
    path.write_text("".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")


def _only_error(r, out, *parts):
    assert r.exit_code == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    for p in parts:
        assert p in lines[0], lines[0]
    assert not out.exists() and not list(out.parent.glob(f".{out.name}*"))


def test_bad_inputs(score_runs, tmp_path):
    """No items.tsv, a manifest of another command, an items.tsv of another version, two
    runs over different test sets: one Error: line, nothing written."""
    out = tmp_path / "out" / "page"
    empty = tmp_path / "empty"
    empty.mkdir()
    _only_error(browse(empty, "--out", out), out, "no items.tsv")
    other = tmp_path / "other"
    shutil.copytree(score_runs["uni"], other)
    manifest = json.loads((other / "manifest.json").read_text())
    (other / "manifest.json").write_text(json.dumps(dict(manifest, command="analyze")))
    _only_error(browse(other, "--out", out), out, "not an agree score output", "'analyze'")
    old = tmp_path / "old"
    shutil.copytree(score_runs["uni"], old)
    lines = (old / "items.tsv").read_text().splitlines()
    cut = [line.split("\t") for line in lines]
    keep = [i for i, c in enumerate(cut[0]) if c not in ("logp_wrong",)]
    (old / "items.tsv").write_text("\n".join("\t".join(r[i] for i in keep) for r in cut) + "\n")
    _only_error(browse(old, "--out", out), out, "another version", "logp_wrong")
    shifted = tmp_path / "shifted"
    shutil.copytree(score_runs["testset"], shifted)
    _drop_last_line(shifted / "items.tsv")
    r = run_agree("score", shifted, "--model", score_runs["uni"].parent / "m-uni",
                  "--out", tmp_path / "shifted-score", "-q")
    assert r.exit_code == 0, r.stderr
    _only_error(browse(score_runs["uni"], tmp_path / "shifted-score", "--out", out), out, "scored other test sets")


def test_humans_column_and_filter_values(score_runs, tmp_path):
    """--humans: each judged row's share of raters choosing the correct form; NaN for the
    others (the page's humans filter and column read it)."""
    judged = tmp_path / "humans.tsv"
    judged.write_text("item_id\tvariant\tvotes_correct\tvotes_wrong\ns0\t0\t3\t1\ns2\t0\t0\t2\n", encoding="utf-8")
    r = browse(score_runs["uni"], "--humans", judged, "--out", tmp_path / "page", "-q")
    assert r.exit_code == 0, r.stderr
    meta, cols = page_columns(tmp_path / "page")
    assert meta["humans"] is True
    shares = {(it.item_id, it.variant): h for it, h in zip(make_items(), cols["human"])}
    assert shares[("s0", 0)] == np.float32(0.75) and shares[("s2", 0)] == 0.0
    assert np.isnan([h for k, h in shares.items() if k not in {("s0", 0), ("s2", 0)}]).all()


def test_a_folder_named_like_the_testset_that_is_something_else_is_passed_over(score_runs, tmp_path,
                                                                               monkeypatch):
    """Run from a checkout, the label `nonce` of a demo's score run is also the `nonce/`
    package there: browse takes the test set beside the score directory, whose files match."""
    demo = tmp_path / "demo"
    shutil.copytree(score_runs["testset"], demo / "nonce")
    run = _copy_labelled(score_runs["uni"], demo / "score", "nonce")
    here = tmp_path / "checkout"
    (here / "nonce").mkdir(parents=True)
    (here / "nonce" / "__init__.py").write_text('"""a Python package, not a test set"""\n')
    monkeypatch.chdir(here)
    r = browse(run, "--out", tmp_path / "page", "-q")
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "page" / "index.html").is_file()


def test_an_out_holding_my_file_is_refused_before_any_run_is_read(score_runs, tmp_path):
    """--out holding a file of the user's: refused before the score runs and their test
    sets are read (a score directory without items.tsv would otherwise be the error)."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("my thesis")
    (tmp_path / "not-a-run").mkdir()
    r = browse(tmp_path / "not-a-run", "--out", mine)
    assert r.exit_code == 1 and "holds thesis.tex" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert (mine / "thesis.tex").read_text() == "my thesis"
