"""BLiMP and MultiBLiMP readers, their bad input, and BLiMP's humans and published
accuracies beside ours (``agree score --humans/--reference``)."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from formats.testsets.blimp import PairSkips, join_words, read_blimp, split_words
from agreement.errors import AgreeError
from formats.testsets.multiblimp import read_multiblimp
from formats.testsets import detect_testset, load_testset

from conftest import run_agree, shared_path


def run(*args):
    return run_agree("score", *args)


def pair(good, bad, uid="p_agr", pid=0, one_prefix=True, **more):
    row = {"sentence_good": good, "sentence_bad": bad, "field": "morphology",
           "linguistics_term": "agreement", "UID": uid, "simple_LM_method": True,
           "one_prefix_method": one_prefix, "two_prefix_method": False, "lexically_identical": False,
           "pairID": str(pid), **more}
    return json.dumps(row)


def write_blimp_dir(root, lines_by_uid):
    root.mkdir(parents=True, exist_ok=True)
    for uid, lines in lines_by_uid.items():
        (root / f"{uid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


PAIRS = {
    "sv_agr": [pair("The dog runs.", "The dog run.", "sv_agr", 0),
               pair("The dogs run.", "The dogs runs.", "sv_agr", 1),
               pair("The dog near the cats runs.", "The dog near the cats run.", "sv_agr", 2)],
    "det_agr": [pair("Craig sees this dog.", "Craig sees these dog.", "det_agr", 0, one_prefix=False),
                pair("Craig sees these dogs.", "Craig sees this dogs.", "det_agr", 1, one_prefix=False),
                pair("The dog runs.", "Dog the run.", "det_agr", 2, one_prefix=False)],
}


def test_words_split_off_final_punctuation_only():
    assert split_words("Katherine can't help herself.") == ("Katherine", "can't", "help", "herself", ".")
    assert split_words("Is it? ") == ("Is", "it", "?")
    assert split_words("Mr. Smith runs !") == ("Mr.", "Smith", "runs", "!")
    assert split_words("...") == ("...",)
    assert join_words(("the", "dog", ",", "runs", ".")) == "the dog , runs."
    assert split_words(join_words(("the", "dog", ",", "runs", "."))) == ("the", "dog", ",", "runs", ".")


def test_blimp_pairs_become_items(tmp_path):
    d = write_blimp_dir(tmp_path / "b", PAIRS)
    assert detect_testset(d) == ("blimp", d)
    assert detect_testset(d / "sv_agr.jsonl") == ("blimp", d / "sv_agr.jsonl")
    items = {it.item_id: it for it in read_blimp(d)}
    a = items["sv_agr:0"]
    assert (a.tokens, a.target_index, a.correct, a.wrong, a.construction, a.variant) == (
        ("The", "dog", "runs", "."), 2, "runs", "run", "sv_agr", 0)
    assert a.extra["wrong_tokens"] == ("The", "dog", "run", ".") and a.extra["target_ok"]
    d0 = items["det_agr:0"]  # one differing word, but BLiMP says not one-prefix
    assert (d0.target_index, d0.correct, d0.wrong, d0.extra["target_ok"]) == (2, "this", "these", False)
    d2 = items["det_agr:2"]  # two differing words: sentence method only
    assert (d2.target_index, d2.extra["target_ok"]) == (0, False)
    # several files name the same set as the directory
    both = read_blimp([d / "det_agr.jsonl", d / "sv_agr.jsonl"])
    assert sorted(it.item_id for it in both) == sorted(items)


def test_identical_pairs_are_counted_skips(tmp_path):
    d = write_blimp_dir(tmp_path / "b", {"x": [pair("A dog runs.", "A dog runs.", "x"), pair("A b.", "A c.", "x", 1)]})
    skips = PairSkips()
    assert [it.item_id for it in read_blimp(d, skips)] == ["x:1"]
    assert skips.identical == 1
    r = run(d, "--out", tmp_path / "o", "--from-outputs", "nothing")
    assert r.exit_code == 1
    assert f"{d}: 1 pair(s) skipped: the two sentences are identical" in r.stderr


def test_line_that_is_not_json(tmp_path):
    d = write_blimp_dir(tmp_path / "b", {"x": [pair("A b.", "A c."), '{"sentence_good": "A b.", oops']})
    r = run(d / "x.jsonl", "--method", "sentence", "--out", tmp_path / "o")
    assert r.exit_code == 1
    assert r.stderr.startswith(f"Error: {d / 'x.jsonl'}:2: not JSON (")
    assert "Traceback" not in r.output
    (d / "x.jsonl").write_text('{"sentence_good": "A b."}\n')
    with pytest.raises(AgreeError, match=r"x.jsonl:1: not a BLiMP pair \(missing sentence_bad\)"):
        read_blimp(d)


MB_HEADER = ("\tsen\tverb\tverb_idx\twrong_sen\twrong_verb\tphenomenon\tlang\tgrammatical_feature"
             "\tungrammatical_feature\tchild\tchild_idx\thead\thead_idx")
MB_ROWS = ["0\tDe hond loopt .\tloopt\t2\tDe hond lopen .\tlopen\tSV-#\tnld\tSing\tPlur\thond\t1\t\t",
           "1\tDe honden lopen .\tlopen\t2\tDe honden loopt .\tloopt\tSV-#\tnld\tPlur\tSing\thonden\t1\t\t",
           "2\tIk loop .\tloop\t1\tIk loopt .\tloopt\tSV-P\tnld\tPerson=1\tPerson=3\tIk\t0\t\t"]


def test_multiblimp_rows_become_items(tmp_path):
    path = tmp_path / "nld.tsv"
    path.write_text("\n".join([MB_HEADER, *MB_ROWS]) + "\n", encoding="utf-8")
    assert detect_testset(path) == ("multiblimp", path)
    items = read_multiblimp(path)
    assert [(it.item_id, it.construction, it.target_index, it.correct, it.wrong, it.number)
            for it in items] == [("nld:0", "nld SV-#", 2, "loopt", "lopen", "Sing"),
                                 ("nld:1", "nld SV-#", 2, "lopen", "loopt", "Plur"),
                                 ("nld:2", "nld SV-P", 1, "loop", "loopt", "Person=1")]
    assert items[0].extra["wrong_tokens"] == ("De", "hond", "lopen", ".")
    assert load_testset(tmp_path, "multiblimp").kind == "multiblimp"


def test_multiblimp_without_wrong_sen(tmp_path):
    path = tmp_path / "nld.tsv"
    path.write_text("sen\tverb\nDe hond loopt .\tloopt\n", encoding="utf-8")
    r = run(path, "--format", "multiblimp", "--out", tmp_path / "o")
    assert (r.exit_code, r.stderr) == (1, f"Error: {path}:1: not a MultiBLiMP file (missing columns: wrong_sen; "
                                          "the header has sen, verb)\n")


def unigram_model(root):
    from lm.corpus.prepare import load_corpus
    from lm.unigram import train_unigram

    lines = ["The dog runs ."] * 3 + ["The dogs run ."] * 2 + ["Craig sees this dog ."] * 2 + ["The dog near the cats runs ."]
    root.mkdir(parents=True)
    for split in ("train", "valid", "test"):
        (root / f"{split}.txt").write_text("\n".join(lines) + "\n")
    counts = Counter(w for s in lines for w in s.split())
    words = sorted(counts, key=lambda w: (-counts[w], w))
    (root / "vocab.txt").write_text("\n".join(["<eos>", "<unk>", *words]) + "\n")
    (root / "counts.tsv").write_text("word\tcount\n" + "".join(f"{w}\t{counts[w]}\n" for w in words))
    (root / "manifest.json").write_text('{"command": "corpus", "parameters": {"lang": "en"}}\n')
    train_unigram(load_corpus(root), root / "model")
    return root / "model"


def test_target_method_skips_and_counts_pairs_it_cannot_score(tmp_path):
    d = write_blimp_dir(tmp_path / "b", PAIRS)
    model = unigram_model(tmp_path / "u")
    r = run_agree("score", str(d), "--model", str(model), "--out", str(tmp_path / "t"))
    assert r.exit_code == 0, r.output
    note = (f"{d}: 3 of 6 pairs skipped by the target method (they differ in more than one word, "
            "or BLiMP marks them not one-prefix; the sentence method scores them)")
    assert note in r.stderr
    assert f"Note: {note}" in (tmp_path / "t" / "summary.md").read_text()
    assert len((tmp_path / "t" / "items.tsv").read_text().splitlines()) == 1 + 3
    only_det = tmp_path / "det"
    write_blimp_dir(only_det, {"det_agr": PAIRS["det_agr"]})
    r = run(only_det, "--model", model, "--out", tmp_path / "t2")
    assert (r.exit_code, r.stderr) == (1, f"Error: {only_det}: no pair can be scored with --method "
                                          "target (3 skipped); use --method sentence\n")
    r = run(d, "--model", model, "--method", "sentence", "--out", tmp_path / "s", "-q")
    assert r.exit_code == 0, r.stderr
    assert len((tmp_path / "s" / "items.tsv").read_text().splitlines()) == 1 + 6


def test_blimp_humans_and_published_columns(tmp_path):
    d = write_blimp_dir(tmp_path / "b", PAIRS)
    model = unigram_model(tmp_path / "u")
    humans = tmp_path / "human_validation_summary.csv"
    humans.write_text('"Condition","accepted","total_mean","count"\n"sv_agr",5,0.9,100\n'
                      '"det_agr",5,0.8,100\n"other",4,0.5,100\n')
    ref = tmp_path / "models_summary.jsonl"
    ref.write_text('{"UID":"sv_agr","linguistics_term":"agr","ngram":0.5,"lstm":0.75,"txl":0.7,"gpt2":0.9}\n'
                   '{"UID":"det_agr","linguistics_term":"agr","ngram":0.25,"lstm":0.5,"txl":0.6,"gpt2":1.0}\n')
    r = run(d, "--model", model, "--method", "sentence", "--humans", humans, "--reference", ref,
            "--out", tmp_path / "o", "-q")
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[2:] == ["humans\thumans\t-\t85.0", "5-gram (published)\tpublished\t-\t37.5",
                         "LSTM (published)\tpublished\t-\t62.5",
                         "Transformer-XL (published)\tpublished\t-\t65.0",
                         "GPT-2 (published)\tpublished\t-\t95.0"]
    md = (tmp_path / "o" / "summary.md").read_text()
    assert ("| construction | items | model | humans | 5-gram (published) | LSTM (published) | "
            "Transformer-XL (published) | GPT-2 (published) |") in md
    assert "| sv_agr | 3 |" in md and "| 90.0 | 50.0 | 75.0 | 70.0 | 90.0 |" in md
    assert (tmp_path / "o" / "accuracy_by_construction.png").stat().st_size > 0
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert manifest["parameters"]["reference"] == str(ref)
    ref.write_text("not json\n")
    r = run(d, "--model", model, "--reference", ref, "--out", tmp_path / "o", "-q")
    assert (r.exit_code, r.stderr) == (1, f"Error: {ref}:1: not JSON (Expecting value at column 1)\n")


def test_real_blimp_files():
    data = shared_path("blimp", "data")
    skips = PairSkips()
    items = read_blimp(data, skips)
    assert len(items) == 16000 and skips.identical == 0
    assert sum(it.extra["target_ok"] for it in items) == 10000  # one_prefix_method true
    for it in items:  # every agreement pair differs in exactly one word
        good, bad = it.tokens, it.extra["wrong_tokens"]
        assert len(good) == len(bad) and sum(a != b for a, b in zip(good, bad)) == 1
    first = next(it for it in items if it.item_id == "anaphor_gender_agreement:0")
    assert first.tokens == ("Katherine", "can't", "help", "herself", ".")
    assert (first.correct, first.wrong, first.target_index) == ("herself", "himself", 3)
