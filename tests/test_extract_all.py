"""agree extract-all on a fake UD release written here: Italian in two treebanks (a
paradigm cell spelled two ways), Maltese without any feature, Wolof whose .gz is
truncated. The run, the index, resuming, byte identity, the bad inputs, Ray."""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from agreement.extraction import batch
from agreement.extraction.batch import COMMAND, extract_languages, language_seed
from agreement.extraction.config import ExtractConfig
from conftest import run_agree
from formats.items import read_items
from formats.release import read_release
from formats.release_card import read_index
from formats.run import RunContext
from test_relations import BASIC, MORE, write

NC = "Attribution-NonCommercial-ShareAlike 4.0 International\n\nhttps://creativecommons.org/licenses/by-nc-sa/4.0/\n"
SA = "This work is licensed under the Creative Commons Attribution-ShareAlike 4.0 International License.\n"
#: ``dormono`` spelled ``dormeno``: two treebanks of one language disagree on a paradigm cell
ODD = [[(f if f != "dormono" else "dormeno", *rest) for f, *rest in BASIC[1]]]


def ud_folder(root: Path) -> Path:
    """The fake release (module docstring), laid out as a UD release is."""
    it = root / "UD_Italian-Toy"
    it.mkdir(parents=True)
    write(it / "it_toy-ud-test.conllu", BASIC + MORE + BASIC + MORE)
    (it / "LICENSE.txt").write_text(NC, encoding="utf-8")
    (it / "README.md").write_text("# Summary\n\nA toy.\n\n# Metadata\n\nLicense: CC BY-NC-SA 4.0\n", encoding="utf-8")
    other = root / "UD_Italian-Other"
    other.mkdir()
    write(other / "it_other-ud-dev.conllu", ODD * 3, start=50)
    (other / "LICENSE.txt").write_text(SA, encoding="utf-8")
    mt = root / "UD_Maltese-Bare"
    mt.mkdir()
    write(mt / "mt_bare-ud-test.conllu", [[(f, lem, u, "_", h, d) for f, lem, u, _, h, d in s] for s in BASIC])
    wo = root / "UD_Wolof-Broken"
    wo.mkdir()
    whole = write(wo / "whole.conllu.gz", BASIC * 20, gz=True).read_bytes()
    (wo / "whole.conllu.gz").unlink()
    (wo / "wo_broken-ud-test.conllu.gz").write_bytes(whole[: len(whole) // 2])
    return root


@pytest.fixture
def ud(tmp_path):
    return ud_folder(tmp_path / "ud")


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative path -> bytes); manifests without the command
    line (the one field that says how a run was started, not what it made)."""
    out = {}
    for f in sorted(root.rglob("*")):
        if f.is_file():
            data = f.read_bytes()
            if f.name == "manifest.json":
                m = json.loads(data)
                m.pop("argv")
                data = json.dumps(m, sort_keys=True).encode()
            out[str(f.relative_to(root))] = data
    return out


def rows(out: Path) -> dict[str, dict]:
    return {r["language"]: r for r in read_index(out / "index.tsv")}


class TestRun:
    def test_three_languages_one_failed_one_without_items(self, ud, tmp_path):
        r = run_agree(COMMAND, ud, "--out", tmp_path / "out", "--n", 3)
        assert r.exit_code == 1 and "Traceback" not in r.output
        errors = [line for line in r.stderr.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and "1 of 3 languages failed" in errors[0]
        assert "wo_broken-ud-test.conllu.gz: cannot decompress" in errors[0]
        assert "Warning: wo failed, skipped" in r.stderr
        index = rows(tmp_path / "out")
        assert list(index) == ["it", "mt", "wo"]
        it = index["it"]
        assert it["treebanks"] == "it_other,it_toy" and int(it["items"]) > 20 and int(it["nonce_variants"]) > 0
        assert int(it["subj_verb_number"]) > 0 and int(it["det_noun_gender"]) > 0
        assert it["noncommercial"] == "yes" and "it_toy: CC BY-NC-SA 4.0" in it["license"]
        assert "spelled differently" in it["notes"] and "dormeno" in it["notes"]
        assert "Note: it: " in r.stderr
        assert index["mt"]["items"] == "0" and index["mt"]["reason"].startswith("no token carries Gender or Number")
        assert index["wo"]["reason"].startswith("failed: ") and "cannot decompress" in index["wo"]["reason"]
        assert not (tmp_path / "out.partial").exists() and not list(tmp_path.glob(".out*"))
        card = (tmp_path / "out" / "README.md").read_text()
        assert "**NonCommercial**: 1 source treebanks" in card and "| it_toy | Italian (it) |" in card
        assert "- `mt` (Maltese): no token carries" in card

    def test_library_record_and_language_directory(self, ud, tmp_path):
        result = extract_languages(RunContext(COMMAND, out=tmp_path / "out"), ud, n=2, only=("it", "mt"))
        assert [o.row.language for o in result.outcomes] == ["it", "mt"] and not result.failed
        assert result.excluded == ("wo",)
        lang = tmp_path / "out" / "it"
        assert sorted(p.name for p in lang.iterdir()) == ["items.tsv", "manifest.json", "pairs.jsonl",
                                                         "pairs.parquet", "paradigms.tsv", "relations.tsv"]
        originals = list(read_items(lang))
        pairs = list(read_release(lang / "pairs.jsonl"))
        assert len(originals) == result.outcomes[0].row.items == sum(p.variant == 0 for p in pairs)
        assert len(pairs) - len(originals) == result.variants
        manifest = json.loads((lang / "manifest.json").read_text())
        assert manifest["command"] == COMMAND and manifest["complete"] is True
        assert manifest["parameters"]["nonce_seed"] == language_seed(1111, "it")

    def test_one_language_is_agree_extract_then_agree_nonce(self, ud, tmp_path):
        """The release's rows of a language are what a user gets with the two commands
        and the language's seed."""
        extract_languages(RunContext(COMMAND, out=tmp_path / "out", seed=7), ud, n=3, only=("it",))
        files = [ud / "UD_Italian-Other", ud / "UD_Italian-Toy"]
        assert run_agree("extract", *files, "--lang", "it", "--mode", "relations", "--out", tmp_path / "ext",
                         "-q").exit_code == 0
        assert run_agree("nonce", tmp_path / "ext", "--n", 3, "--seed", language_seed(7, "it"), "--out",
                         tmp_path / "non", "-q").exit_code == 0
        key = lambda it: (it.item_id, it.variant, it.text, it.correct, it.wrong, it.lemma, it.scoring)  # noqa: E731
        assert [key(i) for i in read_items(tmp_path / "non")] == \
            [key(i) for i in read_release(tmp_path / "out" / "it")]
        assert (tmp_path / "ext" / "items.tsv").read_bytes() == (tmp_path / "out" / "it" / "items.tsv").read_bytes()


class TestReproducible:
    def test_byte_identical_for_a_seed_whatever_the_workers(self, ud, tmp_path):
        assert run_agree(COMMAND, ud, "--out", tmp_path / "one", "--exclude", "wo", "-q").exit_code == 0
        assert run_agree(COMMAND, ud, "--out", tmp_path / "two", "--exclude", "wo", "--workers", 2,
                         "-q").exit_code == 0
        assert tree(tmp_path / "one") == tree(tmp_path / "two")
        assert run_agree(COMMAND, ud, "--out", tmp_path / "seed", "--exclude", "wo", "--seed", 5, "-q").exit_code == 0
        other = tree(tmp_path / "seed")
        assert other["it/pairs.jsonl"] != tree(tmp_path / "one")["it/pairs.jsonl"]
        assert other["it/items.tsv"] == tree(tmp_path / "one")["it/items.tsv"]   # the seed is the nonce's only

    def test_a_language_does_not_depend_on_the_others(self, ud, tmp_path):
        run_agree(COMMAND, ud, "--out", tmp_path / "all", "-q")
        run_agree(COMMAND, ud, "--out", tmp_path / "it", "--only", "it", "-q")
        assert tree(tmp_path / "all" / "it") == tree(tmp_path / "it" / "it")


class TestResume:
    def test_an_interrupted_run_resumes_and_ends_as_a_fresh_one(self, ud, tmp_path, monkeypatch):
        real = batch._mine_into
        calls = []

        def interrupt_maltese(task, tmp):
            calls.append(task.language.code)
            if task.language.code == "mt" and calls.count("mt") == 1:
                (tmp / "items.tsv").write_text("half", encoding="utf-8")   # something half-written
                raise KeyboardInterrupt
            return real(task, tmp)

        monkeypatch.setattr(batch, "_mine_into", interrupt_maltese)
        out = tmp_path / "out"
        r = run_agree(COMMAND, ud, "--out", out, "--exclude", "wo")
        assert r.exit_code == 130 and "Interrupted" in r.output and not out.exists()
        partial = tmp_path / "out.partial"
        assert sorted(p.name for p in partial.iterdir()) == [".agree-partial", "it"]   # mt left nothing
        r = run_agree(COMMAND, ud, "--out", out, "--exclude", "wo")
        assert r.exit_code == 0, r.output
        assert "resuming the interrupted run in " in r.stderr and "kept (finished by an earlier run)" in r.stderr
        assert calls == ["it", "mt", "mt"] and not partial.exists()
        monkeypatch.setattr(batch, "_mine_into", real)
        run_agree(COMMAND, ud, "--out", tmp_path / "fresh", "--exclude", "wo", "-q")
        assert tree(out) == tree(tmp_path / "fresh")

    def test_a_finished_run_again_keeps_every_language(self, ud, tmp_path, monkeypatch):
        out = tmp_path / "out"
        run_agree(COMMAND, ud, "--out", out, "-q")
        before = {code: tree(out / code) for code in ("it", "mt")}
        inode = (out / "it" / "pairs.jsonl").stat().st_ino
        monkeypatch.setattr(batch, "mine_language", lambda *a: pytest.fail("a finished language was mined again"))
        r = run_agree(COMMAND, ud, "--out", out, "--exclude", "wo")
        assert r.exit_code == 0 and r.stderr.count("kept (finished by an earlier run)") == 2
        assert (out / "it" / "pairs.jsonl").stat().st_ino == inode      # linked, not copied
        assert {code: tree(out / code) for code in ("it", "mt")} == before and not (out / "wo").exists()

    def test_other_options_or_changed_inputs_mine_again(self, ud, tmp_path):
        out = tmp_path / "out"
        run_agree(COMMAND, ud, "--out", out, "--only", "it", "-q")
        r = run_agree(COMMAND, ud, "--out", out, "--only", "it", "--n", 2)
        assert r.exit_code == 0 and "kept (finished" not in r.stderr
        with open(ud / "UD_Italian-Other" / "it_other-ud-dev.conllu", "a", encoding="utf-8") as fh:
            fh.write("\n")
        r = run_agree(COMMAND, ud, "--out", out, "--only", "it", "--n", 2)
        assert r.exit_code == 0 and "kept (finished" not in r.stderr
        (out / "it" / "pairs.jsonl").write_text("", encoding="utf-8")      # a damaged output is not kept
        r = run_agree(COMMAND, ud, "--out", out, "--only", "it", "--n", 2)
        assert "kept (finished" not in r.stderr and (out / "it" / "pairs.jsonl").stat().st_size > 0


class TestBadInputs:
    @pytest.mark.parametrize("args, message", [
        (["--only", "zz"], "--only zz: no treebank of that language in {ud} (its languages: it, mt, wo)"),
        (["--exclude", "it,mt,wo"], "no language left to mine in {ud} after --only and --exclude"),
        (["--executor", "local", "--ray-address", "1.2.3.4:6379"], "--ray-address needs --executor ray"),
    ])
    def test_options(self, ud, tmp_path, args, message):
        r = run_agree(COMMAND, ud, "--out", tmp_path / "out", *args)
        assert r.exit_code == 1 and r.stderr.strip() == "Error: " + message.format(ud=ud), r.output
        assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()

    def test_a_folder_without_treebanks(self, tmp_path):
        (tmp_path / "empty" / "UD_X").mkdir(parents=True)
        (tmp_path / "empty" / "UD_X" / "README.md").write_text("nothing\n")
        r = run_agree(COMMAND, tmp_path / "empty", "--out", tmp_path / "out")
        assert r.exit_code == 1 and r.stderr.startswith(f"Error: {tmp_path / 'empty'}: no .conllu, .conllu.gz, "
                                                        ".conllu.bz2 file in it or in its folders")

    def test_out_inside_the_input(self, ud):
        r = run_agree(COMMAND, ud, "--out", ud / "release")
        assert r.exit_code == 1 and "--out lies inside the input" in r.stderr and not (ud / "release").exists()

    def test_a_file_named_otherwise_is_skipped_with_a_warning(self, ud, tmp_path):
        write(ud / "UD_Italian-Toy" / "extra.conllu", BASIC[:1])
        r = run_agree(COMMAND, ud, "--out", tmp_path / "out", "--only", "mt")
        assert r.exit_code == 0 and "Warning: skipped " in r.stderr and "extra.conllu: the file name" in r.stderr

    def test_a_foreign_partial_directory_is_not_used(self, ud, tmp_path):
        (tmp_path / "out.partial").mkdir()
        (tmp_path / "out.partial" / "mine.txt").write_text("x")
        r = run_agree(COMMAND, ud, "--out", tmp_path / "out", "--only", "mt")
        assert r.exit_code == 1 and "out.partial exists and was not made by `agree extract-all`" in r.stderr
        assert (tmp_path / "out.partial" / "mine.txt").read_text() == "x"


@pytest.mark.slow
def test_ray_tasks_write_what_local_processes_write(ray_cluster, ud, tmp_path):
    run = lambda out, **kw: extract_languages(RunContext(COMMAND, out=tmp_path / out), ud, n=2,  # noqa: E731
                                              exclude=("wo",), **kw)
    run("local", workers=2)
    result = run("ray", workers=2, executor="ray")
    assert not result.failed and tree(tmp_path / "ray") == tree(tmp_path / "local")


@pytest.mark.integration
def test_real_languages(shared, tmp_path):
    """Three real treebanks: Albanian's two files, Maltese (no features: its reason), and
    Italian's two treebanks pooled, both NonCommercial."""
    ud = shared("ud")
    r = run_agree(COMMAND, ud, "--out", tmp_path / "out", "--only", "sq,mt", "--workers", 2, "-q")
    assert r.exit_code == 0 and r.stderr == ""
    index = rows(tmp_path / "out")
    # 2 before issue 41 (noun subjects as third person, generated wrong forms)
    assert index["sq"]["items"] == "9" and index["sq"]["treebanks"] == "sq_staf"
    assert index["mt"]["reason"].startswith("no token carries Gender or Number or Person")
    card = (tmp_path / "out" / "README.md").read_text()
    assert "| mt_mudt | Maltese (mt) | UD_Maltese-MUDT | 8330fc6 | CC BY-SA 4.0 |" in card


def test_more_processes_than_the_machine_can_use_is_refused(ud, tmp_path):
    """An absurd --workers on this machine: one line before any work, nothing written; a
    cluster (--ray-address) may be as large as it likes."""
    from formats.resources import cpu_count

    r = run_agree(COMMAND, ud, "--out", tmp_path / "out", "--workers", 100_000, "-q")
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert f"at most {4 * cpu_count()} here" in r.stderr and "--executor ray" in r.stderr
    assert not list(tmp_path.glob("out*"))
