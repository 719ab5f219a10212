"""`agree score` end to end: paper .tab outputs, real unigram / 5-gram models, errors."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import run_agree
from formats.items import Item, write_items
from lm.corpus.prepare import load_corpus
from lm.unigram import train_unigram

HEADER = ("pattern\tconstr_id\tsent_id\tcorrect_number\tform\tclass\ttype\tprefix\tn_attr\tpunct\tfreq\t"
          "len_context\tlen_prefix\tsent\tfull_id\tmturk_count\tm1\tm2")
#: sentence id, type, prefix, attractors, (correct form, freq, votes, m1, m2), (wrong form, ...)
SENTENCES = [
    (0, "original", "the dog near the cars", 1, ("runs", 50, 9, -1.0, -2.0), ("run", 90, 1, -2.0, -1.0)),
    (1, "generated", "the cat near the cups", 1, ("naps", 30, 7, -1.0, -1.5), ("nap", 10, 3, -3.0, -1.0)),
    (2, "generated", "the owl", 0, ("sings", 20, 10, -2.0, -0.5), ("sing", 40, 0, -1.0, -1.0)),
    (3, "generated", "the ant", 0, ("digs", 60, 8, -0.5, -0.5), ("dig", 5, 2, -4.0, -0.5)),
]


def paper_tab(path: Path) -> Path:
    lines = [HEADER]
    for sid, typ, prefix, attr, *forms in SENTENCES:
        for cls, (form, freq, votes, m1, m2) in zip(("correct", "wrong"), forms):
            lines.append("\t".join(map(str, [
                "L__NOUN_ADP_DET_NOUN_VERB", 5, sid, "sing", form, cls, typ, prefix, attr, False, freq,
                len(prefix.split()) - 1, len(prefix.split()), f"{prefix} {form} . <eos>", f"x__5__{sid}",
                f"{votes}.0", m1, m2])))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(*args):
    result = run_agree("score", *args)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


class TestPaperOutputs:
    def test_table_files_and_humans(self, tmp_path):
        tab = paper_tab(tmp_path / "best_model_mturk.tab")
        r = run(tab, "--from-outputs", "m1", "--from-outputs", "m2", "--humans", tab, "--out", tmp_path / "o", "-q")
        assert r.exit_code == 0, r.stderr
        # m1 right on items 0, 1, 3; m2 on 1 only (3 is a tie: undecidable, left out of its
        # nonce accuracy, 1 of 2 decidable); freq on 1, 3; humans: mean share
        assert r.stdout == ("model\tkind\tmodels\toriginal\tnonce\n"
                            "unigram[freq]\tunigram (baseline)\t1\t0.0\t66.7\n"
                            "m1\tpaper-output\t1\t100.0\t66.7\n"
                            "m2\tpaper-output\t1\t0.0\t50.0\n"
                            "humans\thumans\t-\t90.0\t83.3\n")
        out = tmp_path / "o"
        for name in ("items.tsv", "summary.json", "summary.md", "manifest.json", "model_vs_human.png",
                     "accuracy_by_construction.png", "accuracy_by_attractors.png"):
            assert (out / name).stat().st_size > 0, name
        rows = (out / "items.tsv").read_text().splitlines()
        assert len(rows) == 1 + 3 * 4
        summary = json.loads((out / "summary.json").read_text())
        by_attr = {(r["group"], r["condition"], r["value"]): r["accuracy"]
                   for r in summary["accuracy"] + summary["humans"]["rows"] if r["by"] == "attractors"}
        assert by_attr[("m1", "nonce", 0)] == 50.0 and by_attr[("m1", "nonce", 1)] == 100.0
        assert by_attr[("humans", "nonce", 0)] == 90.0
        tests = {(t["model_a"], t["model_b"], t["condition"]): t for t in summary["paired_tests"]}
        assert (tests[("m1", "m2", "nonce")]["only_a"], tests[("m1", "m2", "nonce")]["only_b"]) == (1, 1)  # item 3 is a tie for m2: not paired
        agree = {(a["model"], a["condition"]): a for a in summary["human_agreement"]}
        assert agree[("m1", "nonce")]["majority_match"] == pytest.approx(100 * 2 / 3, abs=1e-3)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["command"] == "score" and manifest["counts"]["scored_rows"] == 12
        assert len(manifest["inputs"]) == 1  # the test set and the human file are one file

    def test_same_seed_gives_identical_files(self, tmp_path):
        tab = paper_tab(tmp_path / "x.tab")
        for out in ("a", "b"):
            assert run(tab, "--from-outputs", "m1", "--humans", tab, "--out", tmp_path / out, "-q").exit_code == 0
        for f in sorted((tmp_path / "a").iterdir()):
            if f.name != "manifest.json":  # it records argv, which names --out
                assert f.read_bytes() == (tmp_path / "b" / f.name).read_bytes(), f.name

    def test_unknown_column_lists_the_available_ones(self, tmp_path):
        tab = paper_tab(tmp_path / "x.tab")
        r = run(tab, "--from-outputs", "hidden650", "--out", tmp_path / "o", "-q")
        assert r.exit_code == 1
        assert r.stderr == f"Error: {tab}: no model column 'hidden650' (model columns: m1, m2)\n"
        assert not (tmp_path / "o").exists()

    def test_human_file_without_the_columns(self, tmp_path):
        tab = paper_tab(tmp_path / "x.tab")
        votes = tmp_path / "votes.tsv"
        votes.write_text("item_id\tvariant\tyes\tno\n")
        r = run(tab, "--from-outputs", "m1", "--humans", votes, "--out", tmp_path / "o", "-q")
        assert r.exit_code == 1
        assert r.stderr == (f"Error: {votes}: not a human-judgment file: it needs the columns item_id, "
                            "variant, votes_correct, votes_wrong (or the paper's best_model_mturk.tab with "
                            "mturk_count); found: item_id, variant, yes, no\n")

    def test_nothing_to_score(self, tmp_path):
        (tmp_path / "ext").mkdir()
        write_items(tmp_path / "ext" / "items.tsv", ITEMS)
        r = run(tmp_path / "ext", "--out", tmp_path / "o", "-q")
        assert (r.exit_code, r.stderr) == (1, "Error: nothing to score: give --model DIR or --from-outputs COLUMN\n")

    def test_from_outputs_needs_a_tab(self, tmp_path):
        (tmp_path / "ext").mkdir()
        write_items(tmp_path / "ext" / "items.tsv", ITEMS)
        r = run(tmp_path / "ext", "--from-outputs", "m1", "--out", tmp_path / "o", "-q")
        assert r.exit_code == 1
        assert r.stderr == (f"Error: --from-outputs needs a paper .tab file with model columns; "
                            f"{tmp_path / 'ext'} is not one (items test set)\n")

    def test_unknown_model_kind(self, tmp_path):
        (tmp_path / "ext").mkdir()
        write_items(tmp_path / "ext" / "items.tsv", ITEMS)
        (tmp_path / "m").mkdir()
        (tmp_path / "m" / "config.json").write_text('{"kind": "rnng"}')
        r = run(tmp_path / "ext", "--model", tmp_path / "m", "--out", tmp_path / "o", "-q")
        assert r.exit_code == 1
        assert r.stderr == (f"Error: {tmp_path / 'm'}: unknown model kind 'rnng' "
                            "(known: kn5, lstm, transformer, unigram)\n")

    def test_require_in_vocab_needs_a_model(self, tmp_path):
        """A paper .tab's columns have no vocabulary: one clear line, nothing written."""
        tab = paper_tab(tmp_path / "x.tab")
        r = run(tab, "--from-outputs", "m1", "--require-in-vocab", "--out", tmp_path / "o", "-q")
        assert (r.exit_code, r.stderr) == (1, "Error: --require-in-vocab needs a model with a vocabulary "
                                              "(--model); the model columns of a paper .tab (--from-outputs) "
                                              "have none\n")
        assert not (tmp_path / "o").exists() and not (tmp_path / "o.partial").exists()

    def test_help_has_an_example(self):
        r = run("--help")
        assert r.exit_code == 0 and "Example:" in r.stdout and "--from-outputs" in r.stdout


# --------------------------------------------------------------------------- real models

def item(item_id, variant, prefix, correct, wrong, perturbation=None, attractors=0):
    tokens = tuple(prefix.split()) + (correct, ".")
    return Item(item_id, variant, "NOUN VERB", "L", tokens, ("_",) * len(tokens), ("_",) * len(tokens),
                correct, wrong, "_", "Sing", 1, len(tokens) - 2, attractors, False,
                perturbation or ("original" if variant == 0 else "nonce"))


ITEMS = [item("a", 0, "the dog", "runs", "run"), item("a", 1, "the cat", "sleeps", "sleep"),
         item("b", 0, "the dogs", "run", "runs"), item("b", 1, "the cats", "sleep", "sleeps"),
         item("c", 0, "the zebra", "runs", "run", attractors=1)]


def corpus_dir(root: Path, sentences: list[str]) -> Path:
    """A corpus directory in the format lm.corpus.prepare writes."""
    root.mkdir(parents=True)
    counts = Counter(w for s in sentences for w in s.split())
    for split in ("train", "valid", "test"):
        (root / f"{split}.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    words = sorted(counts, key=lambda w: (-counts[w], w))
    (root / "vocab.txt").write_text("\n".join(["<eos>", "<unk>", *words]) + "\n", encoding="utf-8")
    (root / "counts.tsv").write_text("word\tcount\n" + "".join(f"{w}\t{counts[w]}\n" for w in words),
                                     encoding="utf-8")
    (root / "manifest.json").write_text('{"command": "corpus", "parameters": {"lang": "en"}}\n')
    return root


def unigram(root: Path, sentences: list[str]) -> Path:
    train_unigram(load_corpus(corpus_dir(root / "corpus", sentences)), root / "model")
    return root / "model"


#: singular forms more frequent: a unigram model picks the singular every time
SING = ["the dog runs ."] * 5 + ["the dogs run ."] * 2 + ["the cat sleeps ."] * 3 + ["the cats sleep ."]
#: here "run" is the more frequent form
PLUR = ["the dogs run ."] * 4 + ["the dog runs ."] + ["the cat sleeps ."] * 3 + ["the cats sleep ."]


@pytest.fixture
def testset(tmp_path):
    (tmp_path / "ext").mkdir()
    write_items(tmp_path / "ext" / "items.tsv", ITEMS)
    return tmp_path / "ext"


class TestRealModels:
    def test_seeds_are_averaged_and_oov_counted(self, tmp_path, testset):
        m1, m2 = unigram(tmp_path / "u1", SING), unigram(tmp_path / "u2", PLUR)
        r = run(testset, "--model", f"uni={m1}", "--model", f"uni={m2}", "--out", tmp_path / "o", "-q")
        assert r.exit_code == 0, r.stderr
        # original items a, b, c: SING right on a, c; PLUR right on b, and on c? "run" wins: no
        # -> 66.7 and 33.3: mean 50.0, sd 23.6; nonce a, b: SING right on a (sleeps), PLUR too
        assert r.stdout == ("model\tkind\tmodels\toriginal\tnonce\n"
                            "uni\tunigram (baseline)\t2\t50.0 ± 23.6\t50.0 ± 0.0\n")
        summary = json.loads((tmp_path / "o" / "summary.json").read_text())
        assert {m["name"]: m["oov_items"] for m in summary["models"]} == {"u1/model": 1, "u2/model": 1}
        md = (tmp_path / "o" / "summary.md").read_text()
        assert "| u1/model | uni | unigram | 5 | 5 | 0 | 1 |" in md

    def test_require_in_vocab(self, tmp_path, testset):
        m1 = unigram(tmp_path / "u1", SING)
        r = run(testset, "--model", m1, "--require-in-vocab", "--out", tmp_path / "o", "-q")
        assert r.exit_code == 0, r.stderr
        rows = (tmp_path / "o" / "items.tsv").read_text().splitlines()[1:]
        assert sorted(row.split("\t")[0] for row in rows) == ["a", "a", "b", "b"]  # c: "zebra"

    def test_a_reference_not_utf8_is_refused_before_scoring(self, tmp_path, testset):
        ref = tmp_path / "models_summary.jsonl"
        ref.write_bytes('{"UID": "caf\u00e9", "lstm": 0.5}\n'.encode("latin-1"))
        r = run(testset, "--model", unigram(tmp_path / "u1", SING), "--reference", ref, "--out", tmp_path / "o")
        assert r.exit_code == 1 and r.stderr.splitlines()[-1].startswith(f"Error: {ref}: not valid UTF-8 (")
        assert "scoring" not in r.stderr
        assert not (tmp_path / "o").exists() and not (tmp_path / "o.partial").exists()

    def test_a_failure_after_scoring_says_what_is_kept(self, tmp_path, testset):
        """A reference that matches none of the constructions is found after scoring: the
        finished shards stay in OUT.partial, and the run says so, before its one Error line."""
        ref = tmp_path / "models_summary.jsonl"
        ref.write_text('{"UID": "anaphor_gender_agreement", "lstm": 0.5}\n', encoding="utf-8")
        model = unigram(tmp_path / "u1", SING)
        r = run(testset, "--model", model, "--reference", ref, "--out", tmp_path / "o")
        lines = r.stderr.splitlines()
        assert r.exit_code == 1 and lines[-1] == (f"Error: {ref}: none of its paradigms is a construction of "
                                                  "the test sets (BLiMP paradigms are joined by UID)")
        assert lines[-2] == (f"kept 1 finished shard(s) in {tmp_path / 'o.partial'}: run the same command "
                             "again to score only the rest")
        assert not (tmp_path / "o").exists()
        r = run(testset, "--model", model, "--out", tmp_path / "o")
        assert r.exit_code == 0 and "1 of 1 shards finished earlier (kept), 0 to score" in r.stderr
        assert not (tmp_path / "o.partial").exists()

    def test_model_of_another_language(self, tmp_path):
        m1 = unigram(tmp_path / "u1", SING)
        (tmp_path / "it").mkdir()
        write_items(tmp_path / "it" / "items.tsv", [item("i", 0, "il cane", "corre", "corrono")])
        r = run(tmp_path / "it", "--model", m1, "--out", tmp_path / "o", "-q")
        assert r.exit_code == 1
        assert r.stderr == ("Error: model model knows none of the 2 target forms of the test set "
                            "(e.g. corre, corrono): is it a model of another language or vocabulary?\n")

    def test_perturbed_sets_give_a_robustness_curve(self, tmp_path, testset):
        m1 = unigram(tmp_path / "u1", SING)
        (tmp_path / "noisy").mkdir()
        write_items(tmp_path / "noisy" / "items.tsv",
                    [it.replace(perturbation="qwerty:0.2") for it in ITEMS])
        r = run(testset, tmp_path / "noisy", "--model", m1, "--out", tmp_path / "o", "-q")
        assert r.exit_code == 0, r.stderr
        assert r.stdout.splitlines()[0] == "model\tkind\tmodels\toriginal\tnonce\tqwerty:0.2"
        assert (tmp_path / "o" / "robustness.png").stat().st_size > 0
        summary = json.loads((tmp_path / "o" / "summary.json").read_text())
        assert {(row["severity"], row["n"]) for row in summary["robustness"]} == {(0.0, 3), (0.2, 5)}
        per_set = {(r["value"], r["condition"]): r["items"] for r in summary["accuracy"] if r["by"] == "testset"}
        assert per_set == {(str(testset), "original"): 3, (str(testset), "nonce"): 2,
                           (str(tmp_path / "noisy"), "qwerty:0.2"): 5}

    def test_duplicate_items(self, tmp_path, testset):
        m1 = unigram(tmp_path / "u1", SING)
        r = run(testset, testset, "--model", m1, "--out", tmp_path / "o", "-q")
        assert (r.exit_code, r.stderr) == (1, f"Error: {testset}: item a variant 0 (original) appears twice\n")

    def test_unigram_is_the_baseline_beside_a_5gram(self, tmp_path, testset):
        pytest.importorskip("kenlm")
        from lm.errors import LMError
        from lm.kenlm.scorer import train_kn5

        m1 = unigram(tmp_path / "u1", SING)
        try:
            train_kn5(load_corpus(tmp_path / "u1" / "corpus"), tmp_path / "kn", order=3)
        except LMError as e:  # lmplz not built in this environment
            pytest.skip(str(e))
        r = run(testset, "--model", tmp_path / "kn", "--model", m1, "--out", tmp_path / "o", "-q")
        assert r.exit_code == 0, r.stderr
        lines = r.stdout.splitlines()
        assert [line.split("\t")[:3] for line in lines[1:]] == [["model", "unigram (baseline)", "1"],
                                                                 ["kn", "kn5", "1"]]
