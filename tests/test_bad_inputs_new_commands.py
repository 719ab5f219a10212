"""Issue 43: the commands that came after the bad-input matrix (tests/test_bad_inputs.py),
under what a real UD folder, release, score directory or model directory can hold.

Every case ends as a user expects: one ``Error:`` line and exit code 1 (2 for a value
out of its range), or extract-all's documented way (the language that cannot be read
fails, the others are written, the run ends non-zero naming it), or a ``Warning:`` for
what was left out. Never a traceback, a hang, a repeated item or a silent gap, and
never an ``OUT.partial`` or a temporary directory left behind.
"""
from __future__ import annotations

import csv
import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import nonce.budget
from agreement.extraction import batch
from conftest import run_agree
from formats.items import write_items
from formats.release import read_release
from formats.release_card import read_index
from inspect_fixtures import number_items, number_lstm, write_items_dir, write_model_dir
from lm.corpus.prepare import load_corpus
from lm.unigram import train_unigram
from test_bad_inputs import scored_dir
from test_nonce_cli import make_extract_dir
from test_relations import BASIC, MORE, write
from test_released import released  # noqa: F401 (a fixture)
from test_train import make_corpus

SA = "This work is licensed under the Creative Commons Attribution-ShareAlike 4.0 International License.\n"


def small_ud(root: Path) -> Path:
    """Italian (one treebank, items) and Maltese (no features: no items), as a UD
    release lays them out."""
    it = root / "UD_Italian-Toy"
    it.mkdir(parents=True)
    write(it / "it_toy-ud-test.conllu", BASIC + MORE)
    (it / "LICENSE.txt").write_text(SA, encoding="utf-8")
    mt = root / "UD_Maltese-Bare"
    mt.mkdir()
    write(mt / "mt_bare-ud-test.conllu", [[(f, lem, u, "_", h, d) for f, lem, u, _, h, d in s] for s in BASIC])
    return root


def errors_of(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("Error:")]


def one_error(result, code: int = 1) -> str:
    """The one ``Error:`` line of a run that failed with ``code``, without a traceback."""
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    errors = errors_of(result)
    assert len(errors) == 1, result.output
    return errors[0]


def nothing_left_beside(out: Path) -> None:
    leftovers = [p.name for p in out.parent.iterdir()
                 if p.name.startswith(f".{out.name}") or p.name == f"{out.name}.partial"]
    assert leftovers == [], leftovers


def extract_all(ud: Path, out: Path, *args):
    return run_agree("extract-all", ud, "--n", 2, "--no-cache", "--out", out, "-q", *args)


def pair_keys(out: Path) -> list[tuple[str, int]]:
    return [(it.item_id, it.variant) for it in read_release(out)]


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """The small folder and its release, as a run without any fault writes it."""
    root = tmp_path_factory.mktemp("plain")
    ud = small_ud(root / "ud")
    r = extract_all(ud, root / "out")
    assert r.exit_code == 0, r.output
    return ud, root / "out"


@pytest.fixture
def ud(tmp_path):
    return small_ud(tmp_path / "ud")


def index_rows(out: Path) -> dict[str, dict]:
    return {r["language"]: r for r in read_index(out / "index.tsv")}


# --------------------------------------------------------------------------- extract-all: the walk

def test_a_link_back_into_the_folder_is_not_followed(plain, ud, tmp_path):
    """ud/loop -> . made every treebank count 41 times (8,282 English items for 202)."""
    (ud / "loop").symlink_to(".")
    r = extract_all(ud, tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert f"Warning: skipped {ud / 'loop'}: a symbolic link to a folder" in r.stderr
    assert "it leads back into the folder" in r.stderr
    assert index_rows(tmp_path / "out")["it"]["treebanks"] == "it_toy"
    keys = pair_keys(tmp_path / "out")
    assert len(keys) == len(set(keys)) == len(pair_keys(plain[1]))


def test_a_link_out_of_the_folder_is_not_followed(ud, tmp_path):
    elsewhere = small_ud(tmp_path / "elsewhere")
    far = elsewhere / "UD_Italian-Toy"
    (far / "it_toy-ud-test.conllu").rename(far / "it_far-ud-test.conllu")
    (ud / "far").symlink_to(far)
    maltese = elsewhere / "UD_Maltese-Bare" / "mt_bare-ud-test.conllu"
    (ud / "UD_Italian-Toy" / "it_file-ud-dev.conllu").symlink_to(maltese)
    r = extract_all(ud, tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert "it leads out of the folder" in r.stderr
    assert f"{ud / 'UD_Italian-Toy' / 'it_file-ud-dev.conllu'}: a symbolic link out of the folder" in r.stderr
    assert index_rows(tmp_path / "out")["it"]["treebanks"] == "it_toy"


def test_a_link_to_a_file_of_the_folder_reads_it_once(plain, ud, tmp_path):
    (ud / "UD_Italian-Toy" / "it_toy-ud-dev.conllu").symlink_to("it_toy-ud-test.conllu")
    r = extract_all(ud, tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert "which is read once" in r.stderr
    assert len(pair_keys(tmp_path / "out")) == len(pair_keys(plain[1]))


def test_a_copy_of_a_treebank_is_read_once_with_a_word(plain, ud, tmp_path):
    """A copy in a subfolder pooled both: (item_id, variant) rows repeated."""
    shutil.copytree(ud / "UD_Italian-Toy", ud / "backup" / "UD_Italian-Toy")
    r = extract_all(ud, tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert "a copy of" in r.stderr and "(the same bytes), read once" in r.stderr
    keys = pair_keys(tmp_path / "out")
    assert len(keys) == len(set(keys)) == len(pair_keys(plain[1]))


def test_two_different_files_of_one_name_are_one_error(ud, tmp_path):
    other = ud / "v2" / "UD_Italian-Toy"
    other.mkdir(parents=True)
    write(other / "it_toy-ud-test.conllu", BASIC)
    r = extract_all(ud, tmp_path / "out")
    error = one_error(r)
    assert "two different treebank files named it_toy-ud-test" in error and "--exclude it" in error
    assert not (tmp_path / "out").exists()
    nothing_left_beside(tmp_path / "out")
    r = extract_all(ud, tmp_path / "out", "--exclude", "it")        # the way out it names
    assert r.exit_code == 0, r.output


def test_folders_without_treebanks_and_other_files_are_said_or_ignored(ud, tmp_path):
    (ud / "UD_Empty-Lang").mkdir()
    (ud / "UD_Docs-Only").mkdir()
    (ud / "UD_Docs-Only" / "README.md").write_text("# no text here\n")
    (ud / "UD_Italian-Toy" / "notes.txt").write_text("my notes\n")
    (ud / "UD_Italian-Toy" / "stats.xml").write_text("<x/>\n")
    (ud / "README.md").write_text("a UD release\n")
    r = extract_all(ud, tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert f"Warning: skipped {ud / 'UD_Empty-Lang'}: no .conllu file in this folder" in r.stderr
    assert f"Warning: skipped {ud / 'UD_Docs-Only'}: no .conllu file in this folder" in r.stderr
    assert "notes.txt" not in r.stderr and set(index_rows(tmp_path / "out")) == {"it", "mt"}


def test_a_pipe_named_as_a_treebank_is_skipped_not_waited_on(ud, tmp_path):
    os.mkfifo(ud / "UD_Maltese-Bare" / "mt_pipe-ud-dev.conllu")
    r = extract_all(ud, tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert "mt_pipe-ud-dev.conllu: not a regular file (a pipe, socket or device), not read" in r.stderr


def test_a_release_without_any_item_says_so_even_quiet(ud, tmp_path):
    r = extract_all(ud, tmp_path / "out", "--min-distance", "99999999999")
    assert r.exit_code == 0, r.output
    assert "Warning: no agreement items in any language: it: " in r.stderr


# --------------------------------------------------------------------------- extract-all: one language fails

def dangling(ud: Path) -> str:
    (ud / "UD_Maltese-Bare" / "mt_gone-ud-dev.conllu").symlink_to(ud / "nowhere.conllu")
    return "mt_gone-ud-dev.conllu: cannot be read: a symbolic link to a missing file"


def link_loop(ud: Path) -> str:
    (ud / "UD_Maltese-Bare" / "mt_loop-ud-dev.conllu").symlink_to("mt_loop-ud-dev.conllu")
    return "mt_loop-ud-dev.conllu: cannot be read: a symbolic-link loop"


def empty_file(ud: Path) -> str:
    (ud / "UD_Maltese-Bare" / "mt_empty-ud-dev.conllu").write_text("")
    return "mt_empty-ud-dev.conllu: empty treebank (no sentences)"


@pytest.mark.parametrize("fault", [dangling, link_loop, empty_file])
def test_a_treebank_that_cannot_be_read_fails_its_language_only(ud, tmp_path, fault):
    """As --help promises: the others are written, the run ends with an error naming it
    (these stopped the whole run and left OUT.partial behind)."""
    said = fault(ud)
    out = tmp_path / "out"
    r = extract_all(ud, out)
    error = one_error(r)
    assert "1 of 2 languages failed and were skipped (mt: " in error and said in error
    rows = index_rows(out)
    assert rows["mt"]["reason"].startswith("failed: ") and said in rows["mt"]["reason"]
    assert int(rows["it"]["items"]) > 0 and (out / "it" / "pairs.jsonl").is_file()
    nothing_left_beside(out)


def ordinary_user(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``agree ARGS`` as a user whom file permissions bind. The suite may run as root,
    whom they do not: root is then run without the capabilities that override them
    (setpriv), or the test is skipped saying why."""
    agree = str(Path(sys.executable).parent / "agree")
    env = {**os.environ, "XDG_CACHE_HOME": str(cwd / "cache")}
    prefix = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("the suite runs as root and setpriv (util-linux) is missing: no ordinary user to run as")
        prefix = [setpriv, "--inh-caps=-dac_override,-dac_read_search",
                  "--bounding-set=-dac_override,-dac_read_search", "--"]
        probe = cwd / "probe"
        probe.mkdir(mode=0)
        try:
            seen = subprocess.run(prefix + [sys.executable, "-c", f"import os; os.listdir({str(probe)!r})"],
                                  capture_output=True, text=True)
        finally:
            probe.chmod(0o755)
        if seen.returncode == 0:
            pytest.skip("the suite runs as root and cannot drop the capabilities that override file permissions")
    return subprocess.run(prefix + [agree, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_an_unreadable_folder_or_file_is_said_as_an_ordinary_user(ud, tmp_path):
    """Mode 000 on a language folder: exit 0 and the language silently missing from the
    release and index.tsv. Now the languages read are written and the run ends with an
    error naming the folder; an unreadable .conllu fails its language."""
    de = ud / "UD_German-Locked"
    de.mkdir()
    write(de / "de_locked-ud-test.conllu", BASIC)
    write(ud / "UD_Maltese-Bare" / "mt_locked-ud-dev.conllu", BASIC).chmod(0)
    de.chmod(0)
    try:
        done = ordinary_user(["extract-all", str(ud), "--n", "2", "--no-cache", "--out", "out", "-q"], tmp_path)
    finally:
        de.chmod(0o755)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, done.stderr
    assert "mt: " in errors[0] and "mt_locked-ud-dev.conllu: cannot be read (permission denied)" in errors[0]
    assert f"1 folder(s) of {ud} could not be read" in errors[0] and f"{de}: permission denied" in errors[0]
    rows = index_rows(tmp_path / "out")
    assert set(rows) == {"it", "mt"} and rows["mt"]["reason"].startswith("failed: ")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["unreadable"] == [f"{de}: permission denied"]
    nothing_left_beside(tmp_path / "out")


# --------------------------------------------------------------------------- extract-all: counts

@pytest.mark.parametrize("option, value", [("--n", "1000000000"), ("--n", "1001"), ("--n", "0")])
def test_absurd_variant_counts_are_refused_before_any_work(ud, tmp_path, option, value):
    """--n 1000000000 grew memory at 45 MB/s until killed."""
    r = run_agree("extract-all", ud, option, value, "--out", tmp_path / "out")
    error = one_error(r, 2)
    assert f"Invalid value for '{option}': {value} is not in the range 1 <= x <= 1000" in error
    assert list(tmp_path.iterdir()) == [ud]


def test_variants_beyond_memory_fail_the_language_before_they_are_made(ud, tmp_path, monkeypatch):
    """The bound above is per item; a language with many items is checked against the
    memory and disk before its variants are made (here: memory made to look tiny)."""
    monkeypatch.setattr(nonce.budget, "memory_shortfall", lambda need: "more memory than this machine has")
    r = extract_all(ud, tmp_path / "out")
    error = one_error(r)
    assert "it: 2 variants per item are too many" in error
    nothing_left_beside(tmp_path / "out")


# --------------------------------------------------------------------------- a release, scored

@pytest.fixture(scope="module")
def unigram(tmp_path_factory):
    root = tmp_path_factory.mktemp("unigram")
    make_corpus(root / "corpus", n_sentences=60)
    train_unigram(load_corpus(root / "corpus"), root / "uni")
    return root / "uni"


@pytest.fixture
def release(plain, tmp_path):
    out = tmp_path / "release"
    shutil.copytree(plain[1], out)
    return out


def cut_short(release: Path) -> str:
    pairs = release / "it" / "pairs.jsonl"
    lines = pairs.read_text(encoding="utf-8").splitlines(True)
    pairs.write_text("".join(lines[:5]), encoding="utf-8")
    row = next(r for r in csv.DictReader((release / "index.tsv").open(encoding="utf-8"), delimiter="\t")
               if r["language"] == "it")
    return (f"{pairs}: 2 items and 0 nonce variants, but index.tsv lists "
            f"{row['items']} and {row['nonce_variants']}")


def pairs_missing(release: Path) -> str:
    (release / "it" / "pairs.jsonl").unlink()
    return f"{release / 'it' / 'pairs.jsonl'}: missing, but index.tsv lists 'it' with"


def stranger(release: Path) -> str:
    shutil.copytree(release / "it", release / "xx")
    return f"{release / 'xx' / 'pairs.jsonl'}: language 'xx' is not in {release / 'index.tsv'}"


def repeated(release: Path) -> str:
    pairs = release / "it" / "pairs.jsonl"
    first = pairs.read_text(encoding="utf-8").splitlines(True)[0]
    with open(pairs, "a", encoding="utf-8") as fh:
        fh.write(first)
    return "variant 0 again (first at"


def index_garbage(release: Path) -> str:
    (release / "index.tsv").write_bytes(b"\xff\xfe\x00\x80garbage\n")
    return f"{release / 'index.tsv'}: not valid UTF-8"


def index_empty(release: Path) -> str:
    (release / "index.tsv").write_text("")
    return f"{release / 'index.tsv'}: not an agree extract-all index.tsv"


def index_header_only(release: Path) -> str:
    index = release / "index.tsv"
    index.write_text(index.read_text().splitlines(True)[0])
    return "language 'it' is not in"


def index_not_a_number(release: Path) -> str:
    index = release / "index.tsv"
    lines = index.read_text().splitlines(True)
    cells = lines[1].split("\t")
    cells[4] = "many"
    index.write_text(lines[0] + "\t".join(cells) + "".join(lines[2:]))
    return f"{index}:2: not an index.tsv row (items and nonce_variants must be whole numbers)"


@pytest.mark.parametrize("fault", [pairs_missing, cut_short, stranger, repeated, index_garbage, index_empty,
                                   index_header_only, index_not_a_number])
def test_a_release_is_checked_against_its_index(release, unigram, tmp_path, fault):
    """One language's pairs.jsonl missing: 763 of 818 items scored without a word."""
    said = fault(release)
    r = run_agree("score", release, "--model", unigram, "--out", tmp_path / "scores", "-q")
    assert said in one_error(r)
    nothing_left_beside(tmp_path / "scores")


def test_a_whole_release_scores_as_its_index_says(release, tmp_path):
    """The check passes a release as written (variants whose prefix is the original's
    are rows of pairs.jsonl that index.tsv does not count)."""
    text = tmp_path / "it.txt"
    text.write_text("".join(it.tokens and " ".join(it.tokens) + "\n" for it in read_release(release)))
    for args in (("corpus", text, "--lang", "it", "--out", tmp_path / "c"),
                 ("train-lm", tmp_path / "c", "--arch", "unigram", "--out", tmp_path / "uni")):
        assert run_agree(*args, "-q").exit_code == 0
    r = run_agree("score", release, "--model", tmp_path / "uni", "--out", tmp_path / "scores", "-q")
    assert r.exit_code == 0, r.output
    rows = index_rows(release)
    scored = (tmp_path / "scores" / "items.tsv").read_text().count("\n") - 1
    assert scored >= sum(int(r["items"]) + int(r["nonce_variants"]) for r in rows.values())
    assert scored == len(pair_keys(release))


def test_a_language_without_items_is_one_clear_line(release, unigram, tmp_path):
    r = run_agree("score", release / "mt", "--model", unigram, "--out", tmp_path / "s", "-q")
    assert "has no items" in one_error(r)
    r = run_agree("export", release / "mt", "--format", "blimp", "--out", tmp_path / "e", "-q")
    assert r.exit_code == 0 and "Warning: " in r.stderr and "the test set has no items, so there is nothing " \
        "to export" in r.stderr


# --------------------------------------------------------------------------- inspect

@pytest.fixture(scope="module")
def lstm(tmp_path_factory):
    return write_model_dir(tmp_path_factory.mktemp("inspect") / "model", number_lstm())


def test_inspect_on_one_readable_item_leaves_the_probes_out_with_a_word(lstm, tmp_path):
    """The probes had no rows and the probe plot raised matplotlib's ValueError."""
    (tmp_path / "one").mkdir()
    write_items(tmp_path / "one" / "items.tsv", number_items()[:1])
    r = run_agree("inspect", tmp_path / "one", "--model", lstm, "--draws", 2, "--out", tmp_path / "out", "-q")
    assert r.exit_code == 0, r.output
    assert "Warning: probes: 1 item(s), fewer than the 10 that 5 cross-validation folds need" in r.stderr
    assert not (tmp_path / "out" / "probes.png").exists() and (tmp_path / "out" / "ablation.png").is_file()
    assert "probes: 1 item(s), fewer than" in (tmp_path / "out" / "inspect.md").read_text()
    r = run_agree("inspect", tmp_path / "one", "--model", lstm, "--analysis", "probes", "--out", tmp_path / "o2")
    assert "probes: 1 item(s), fewer than the 10" in one_error(r)
    nothing_left_beside(tmp_path / "o2")


def test_inspect_max_items_below_one_whole_item_says_so(lstm, tmp_path):
    """It said "the model reads none of the items (none)"."""
    items = [it for it in number_items() for it in (it, it.replace(variant=1, perturbation="nonce"))]
    (tmp_path / "nonce").mkdir()
    write_items(tmp_path / "nonce" / "items.tsv", items)
    r = run_agree("inspect", tmp_path / "nonce", "--model", lstm, "--max-items", 1, "--out", tmp_path / "out")
    error = one_error(r)
    assert "--max-items 1: no whole item fits (an item and its variants are drawn together; the smallest " \
           "has 2); give --max-items 2 or more" in error


@pytest.mark.parametrize("content", [b"\xff\xfe\x00garbage\x80\n",
                                     "form\tlemma\tupos\tfeats\tcount\nd\xf6g\n".encode("latin-1")])
def test_inspect_paradigms_garbage_names_the_file(lstm, tmp_path, content):
    items = write_items_dir(tmp_path / "items")
    (tmp_path / "garbage.tsv").write_bytes(content)
    r = run_agree("inspect", items, "--model", lstm, "--paradigms", tmp_path / "garbage.tsv", "--out", tmp_path / "o")
    assert f"Error: {tmp_path / 'garbage.tsv'}" in one_error(r) and "not valid UTF-8" in one_error(r)


@pytest.mark.parametrize("args, fragment, code", [
    (("--top", "4"), "--top 4: hidden of model has 4 units in the layers swept", 1),
    (("--top", "1000000000"), "--top 1000000000: hidden of model has 4 units", 1),
    (("--draws", "1000000000"), "Invalid value for '--draws': 1000000000 is not in the range 0 <= x <= 10000", 2),
    (("--folds", "1000000000"), "Invalid value for '--folds'", 2),
    (("--probe-items", "0"), "Invalid value for '--probe-items'", 2),
    (("--layers", "0,0"), "Invalid value for '--layers': layer 0 is given twice", 2),
    (("--lang", ""), "Invalid value for '--lang': an empty language code", 2),
])
def test_inspect_counts_out_of_reach_are_refused_before_any_work(lstm, tmp_path, args, fragment, code):
    """--top beyond the units was silently all of them; --draws 1e9 ran until killed."""
    items = write_items_dir(tmp_path / "items")
    r = run_agree("inspect", items, "--model", lstm, *args, "--out", tmp_path / "o")
    assert fragment in one_error(r, code)
    assert not (tmp_path / "o").exists()
    nothing_left_beside(tmp_path / "o")


@pytest.mark.parametrize("command", ["inspect", "score"])
def test_a_model_file_still_being_written_is_one_error_naming_it(lstm, tmp_path, command):
    model = tmp_path / "model"
    shutil.copytree(lstm, model)
    whole = (lstm / "model.pt").read_bytes()
    (model / "model.pt").write_bytes(whole[: len(whole) // 3])      # another process is half-way through it
    items = write_items_dir(tmp_path / "items")
    r = run_agree(command, items, "--model", model, "--out", tmp_path / "o", "-q")
    assert f"{model / 'model.pt'}: unreadable checkpoint" in one_error(r)
    nothing_left_beside(tmp_path / "o")


# --------------------------------------------------------------------------- the older silent cases

@pytest.mark.parametrize("edit", [lambda f: f[:4], lambda f: f[:2] + f[3:], lambda f: [*f[:4], ""]])
def test_nonce_refuses_a_short_paradigms_row_even_the_last(tmp_path, edit):
    """A paradigms.tsv row with a column missing (here the last line, without its
    newline) wrote its output without a word."""
    make_extract_dir(tmp_path / "ext")
    table = tmp_path / "ext" / "paradigms.tsv"
    lines = table.read_text().splitlines()
    lines[-1] = "\t".join(edit(lines[-1].split("\t")))
    table.write_text("\n".join(lines))
    r = run_agree("nonce", tmp_path / "ext", "--out", tmp_path / "out", "-q")
    assert f"paradigms.tsv:{len(lines)}: expected form, lemma, upos, feats, count" in one_error(r)
    nothing_left_beside(tmp_path / "out")


@pytest.mark.parametrize("bad", ["the dog runs .", "the dog runs.", "  the  dog runs . "])
def test_a_blimp_pair_of_one_sentence_twice_is_skipped_with_a_warning(unigram, tmp_path, bad):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"sentence_good": "the dog runs .", "sentence_bad": "the dog run ."}) + "\n"
                     + json.dumps({"sentence_good": "the dog runs .", "sentence_bad": bad}) + "\n")
    r = run_agree("score", pairs, "--model", unigram, "--out", tmp_path / "out", "-q")
    assert r.exit_code == 0, r.output
    assert "1 pair(s) skipped: the two sentences are identical" in r.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["counts"]["items"] == {str(pairs): 1}


# --------------------------------------------------------------------------- the sweep: import-model

@pytest.mark.parametrize("name", ["zip.pt", "old.pt"])
@pytest.mark.parametrize("keep", [0, 1 / 3, 0.9])
def test_import_model_of_a_checkpoint_still_being_written_is_one_error(released, tmp_path, name, keep):
    """A checkpoint another process is still writing (copying, downloading) is cut short."""
    whole = (released / name).read_bytes()
    part = tmp_path / name
    part.write_bytes(whole[: int(len(whole) * keep)])
    r = run_agree("import-model", "colorlessgreen", part, "--vocab", released / "vocab.txt", "--out", tmp_path / "m")
    assert str(part) in one_error(r)
    assert not (tmp_path / "m").exists()
    nothing_left_beside(tmp_path / "m")


# --------------------------------------------------------------------------- the sweep: analyze, nonce, swap-targets

def test_analyze_rows_all_right_skips_the_mixed_model_with_a_note(tmp_path):
    """A score directory whose decidable rows are all right (one row here, a tie left
    out) raised statsmodels' ValueError from the mixed model."""
    scored_dir(tmp_path / "scored")
    items = tmp_path / "scored" / "items.tsv"
    items.write_text("".join(items.read_text().splitlines(True)[:3]))
    r = run_agree("analyze", tmp_path / "scored", "--n-boot", 20, "--out", tmp_path / "out", "-q")
    assert r.exit_code == 0, r.output
    report = "".join(p.read_text() for p in (tmp_path / "out").glob("*.md"))
    assert "mixed model skipped: all 1 original/nonce rows are right, and a logistic fit needs both" in report


def header_only_items(d: Path) -> None:
    (d / "items.tsv").write_text((d / "items.tsv").read_text().splitlines(True)[0])


def header_only_paradigms(d: Path) -> None:
    (d / "paradigms.tsv").write_text((d / "paradigms.tsv").read_text().splitlines(True)[0])


@pytest.mark.parametrize("command, edit, warning", [
    ("swap-targets", header_only_items, "the test set has no items, so there is nothing to swap"),
    ("swap-targets", header_only_paradigms, "none of the 3 items got a swap: no target has another lemma"),
    ("nonce", header_only_paradigms, "none of the 3 items got nonce variants: no target has a replacement pair"),
])
def test_an_extract_directory_that_gives_nothing_says_so(tmp_path, command, edit, warning):
    """Both wrote their output and exited 0 without a word under --quiet."""
    make_extract_dir(tmp_path / "ext")
    edit(tmp_path / "ext")
    r = run_agree(command, tmp_path / "ext", "--out", tmp_path / "out", "-q")
    assert r.exit_code == 0, r.output
    assert f"Warning: " in r.stderr and warning in r.stderr


def training_in_progress(model: Path) -> str:       # what train-lm's OUT.partial holds
    (model / "checkpoint.pt").write_bytes((model / "model.pt").read_bytes())
    for name in ("config.json", "model.pt"):
        (model / name).unlink()
    return "not a model directory (no config.json)"


def no_weights(model: Path) -> str:
    (model / "model.pt").unlink()
    return "no model.pt in the model directory"


def empty_weights(model: Path) -> str:
    (model / "model.pt").write_bytes(b"")
    return "model.pt: unreadable checkpoint"


def short_vocab(model: Path) -> str:
    (model / "vocab.txt").write_text("<eos>\n<unk>\n")
    return "vocab.txt: 2 entries but the model predicts"


@pytest.mark.parametrize("command", ["inspect", "score"])
@pytest.mark.parametrize("state", [training_in_progress, no_weights, empty_weights, short_vocab])
def test_a_model_directory_not_yet_whole_is_one_error(lstm, tmp_path, command, state):
    model = tmp_path / "model"
    shutil.copytree(lstm, model)
    said = state(model)
    items = write_items_dir(tmp_path / "items")
    r = run_agree(command, items, "--model", model, "--out", tmp_path / "o", "-q")
    assert said in one_error(r)
    nothing_left_beside(tmp_path / "o")


def test_a_treebank_that_stops_reading_half_way_fails_its_language_only(ud, tmp_path, monkeypatch):
    """An OS error while a file is read (a disk or network fault: EIO) is its language's
    failure; it stopped the whole run. The fault is injected where the files are read."""
    real = batch.extract_items

    def failing(files, config):
        if config.lang == "mt":
            raise OSError(errno.EIO, "Input/output error", str(files[0]))
        return real(files, config)

    monkeypatch.setattr(batch, "extract_items", failing)
    r = extract_all(ud, tmp_path / "out")
    assert "mt_bare-ud-test.conllu: cannot be read (input/output error)" in one_error(r)
    assert index_rows(tmp_path / "out")["it"]["items"] != "0"
    nothing_left_beside(tmp_path / "out")
