"""``agree nonce``: files, determinism, manifest counts and bad input (CliRunner)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_agree
from formats.manifest import write_manifest
from formats.items import read_items, write_items
from test_nonce import ITEMS, check_variant, make_table
from treebanks.paradigms import ParadigmTable


def make_extract_dir(path: Path, command: str = "extract", lang: str | None = "en") -> Path:
    """An extract directory as ``agree extract`` writes it, from the test_nonce fixture."""
    path.mkdir(parents=True, exist_ok=True)
    write_items(path / "items.tsv", ITEMS)
    make_table().save(path / "paradigms.tsv")
    (path / "constructions.tsv").write_text("direction\tconstruction\nL\tNOUN VERB VERB\n", encoding="utf-8")
    write_manifest(path, command, [path / "items.tsv"],
                   {"features": "Number", "alt": "closest", "lang": lang, "min_count": 10})
    return path


def run(*args):
    result = run_agree("nonce", *args)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), \
        result.exception
    return result


@pytest.fixture
def extract_dir(tmp_path):
    return make_extract_dir(tmp_path / "extract")


def test_writes_a_complete_test_set(extract_dir, tmp_path):
    out = tmp_path / "nonce"
    r = run(extract_dir, "--n", 4, "--seed", 3, "--out", out)
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == \
        ["constructions.tsv", "items.tsv", "manifest.json", "paradigms.tsv"]
    assert (out / "paradigms.tsv").read_bytes() == (extract_dir / "paradigms.tsv").read_bytes()
    items = list(read_items(out))
    assert [(it.item_id, it.variant) for it in items][:5] == [("s1:1", v) for v in range(5)]
    assert len(items) == 3 + 2 * 4
    table, originals = make_table(), {it.item_id: it for it in ITEMS}
    for it in items:
        if it.variant:
            check_variant(table, originals[it.item_id], it)
        else:
            assert it == originals[it.item_id] and it.perturbation == "original"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["command"] == "nonce"
    assert manifest["parameters"]["vowel_rule_applied"] is True
    assert manifest["counts"]["targets_no_pair"] == {"VERB": 1}
    assert manifest["counts"]["positions_no_candidate"] == {"ADJ": 1}
    assert manifest["counts"]["variants"] == 8
    assert "no replacement pair for 1 targets, no candidate for 1 of 9 positions" in r.output


def test_same_seed_byte_identical_other_seed_differs(extract_dir, tmp_path):
    outs = []
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        # the same --out each time, so that argv (recorded in the manifest) is the same too
        assert run(extract_dir, "--seed", seed, "--out", tmp_path / "out", "-q").exit_code == 0
        outs.append({p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()})
    assert outs[0] == outs[1]
    assert outs[0]["items.tsv"] != outs[2]["items.tsv"]


def test_vocabulary_restricts_words(extract_dir, tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("<eos>\n<unk>\nsings\nsing\nruns\nrun\nbig\nred\n", encoding="utf-8")
    assert run(extract_dir, "--vocab", vocab, "--out", tmp_path / "o", "-q").exit_code == 0
    variants = [it for it in read_items(tmp_path / "o") if it.variant]
    assert {(it.correct, it.wrong) for it in variants} <= {("sings", "sing"), ("runs", "run"), ("sing", "sings")}
    assert {it.tokens[1] for it in variants if it.item_id == "s1:1"} == {"red"}
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert manifest["inputs"][-1]["path"] == str(vocab)


def test_colorlessgreen_format(extract_dir, tmp_path):
    r = run(extract_dir, "--n", 2, "--format", "colorlessgreen", "--out", tmp_path / "cg", "-q")
    assert r.exit_code == 0, r.output
    names = {p.name for p in (tmp_path / "cg").iterdir()}
    assert {"items.tsv", "generated.text", "generated.gold", "generated.eval", "generated.tab"} <= names
    text = (tmp_path / "cg" / "generated.text").read_text(encoding="utf-8").splitlines()
    assert len(text) == 3 + 2 * 2


def test_help_has_an_example():
    r = run_agree("nonce", "--help")
    assert r.exit_code == 0 and "Example:\n    agree extract" in r.output and "--ambiguity" in r.output


@pytest.mark.parametrize("remove,missing", [("paradigms.tsv", "paradigms.tsv"), ("items.tsv", "items.tsv"),
                                            ("manifest.json", "manifest.json")])
def test_missing_file(extract_dir, tmp_path, remove, missing):
    (extract_dir / remove).unlink()
    r = run(extract_dir, "--out", tmp_path / "o")
    assert r.exit_code == 1
    assert r.output == f"Error: {extract_dir}: not an agree extract directory (missing {missing})\n"
    assert not (tmp_path / "o").exists()


def test_manifest_from_another_command(tmp_path):
    d = make_extract_dir(tmp_path / "x", command="nonce")
    r = run(d, "--out", tmp_path / "o")
    assert (r.exit_code, r.output) == (1, f"Error: {d}: manifest.json was written by 'nonce', not 'agree extract'\n")


def test_manifest_from_another_version(extract_dir, tmp_path):
    m = json.loads((extract_dir / "manifest.json").read_text())
    m["versions"]["agree"] = "0.0.3"
    (extract_dir / "manifest.json").write_text(json.dumps(m))
    r = run(extract_dir, "--out", tmp_path / "o")
    assert r.exit_code == 1
    assert r.output.startswith(f"Error: {extract_dir}: written by agree 0.0.3, this is agree 0.")


def test_items_from_another_version(extract_dir, tmp_path):
    lines = (extract_dir / "items.tsv").read_text().splitlines()
    cut = [line.split("\t") for line in lines]
    pos = cut[0].index("pos")
    (extract_dir / "items.tsv").write_text("\n".join("\t".join(c[:pos] + c[pos + 1:]) for c in cut) + "\n")
    r = run(extract_dir, "--out", tmp_path / "o")
    assert (r.exit_code, r.output) == (
        1, f"Error: {extract_dir / 'items.tsv'}: from another version (missing columns: pos)\n")


def test_vocabulary_without_usable_words(extract_dir, tmp_path):
    empty = tmp_path / "vocab.txt"
    empty.write_text("<eos>\n<unk>\n\n", encoding="utf-8")
    r = run(extract_dir, "--vocab", empty, "--out", tmp_path / "o")
    assert (r.exit_code, r.output) == (
        1, f"Error: {empty}: the vocabulary has no usable words (empty, or only <eos>/<unk>)\n")
    foreign = tmp_path / "foreign.txt"
    foreign.write_text("Hund\nKatze\n", encoding="utf-8")
    r = run(extract_dir, "--vocab", foreign, "--out", tmp_path / "o")
    assert (r.exit_code, r.output) == (
        1, f"Error: {foreign}: the vocabulary has no usable words: none of its 2 words occurs "
           f"in the treebank's paradigms.tsv\n")
    assert not (tmp_path / "o").exists()


def test_bad_option_value(extract_dir, tmp_path):
    r = run(extract_dir, "--n", 0, "--out", tmp_path / "o")
    assert (r.exit_code, r.output) == (1, "Error: --n must be at least 1, not 0\n")


SG, PL = "Number=Sing", "Number=Plur"
V = "Mood=Ind|Number={}|Person=3|Tense=Pres|VerbForm=Fin"


def conllu_sentence(sid, subj, subj_n, obj, obj_n, rel_verb, rel_n, verb, verb_n):
    """``The <subj> that the <obj> <rel_verb> <verb> .``: subject noun <- main verb,
    with a relative clause between them (construction L NOUN VERB VERB)."""
    rows = [("The", "the", "DET", "Definite=Def|PronType=Art", 2, "det"),
            (subj, subj.rstrip("s") if subj_n == PL else subj, "NOUN", subj_n, 7, "nsubj"),
            ("that", "that", "PRON", "PronType=Rel", 6, "obj"),
            ("the", "the", "DET", "Definite=Def|PronType=Art", 5, "det"),
            (obj, obj.rstrip("s") if obj_n == PL else obj, "NOUN", obj_n, 6, "nsubj"),
            (rel_verb, rel_verb.removesuffix("s") if "Sing" in rel_n else rel_verb, "VERB", rel_n, 2, "acl:relcl"),
            (verb, verb.removesuffix("s") if "Sing" in verb_n else verb, "VERB", verb_n, 0, "root"),
            (".", ".", "PUNCT", "_", 7, "punct")]
    lines = [f"# sent_id = {sid}"]
    for i, (form, lemma, upos, feats, head, rel) in enumerate(rows, start=1):
        lines.append(f"{i}\t{form}\t{lemma}\t{upos}\t_\t{feats}\t{head}\t{rel}\t_\t_")
    return "\n".join(lines) + "\n\n"


def test_extract_then_nonce_end_to_end(tmp_path):
    """The real chain: agree extract on a tiny treebank, then agree nonce on its output."""
    nouns = ["dog", "cat", "hat", "pig"]
    verbs = ["bark", "run", "sing", "jump"]
    text = ""
    for k in range(8):
        n = SG if k % 2 else PL
        subj = nouns[k % 4] + ("" if n == SG else "s")
        verb = verbs[k % 4] + ("s" if n == SG else "")
        rel = verbs[(k + 1) % 4] + ("s" if k % 3 else "")
        text += conllu_sentence(f"s{k}", subj, n, nouns[(k + 2) % 4], SG, rel, V.format("Sing" if k % 3 else "Plur"),
                                verb, V.format("Sing" if n == SG else "Plur"))
    treebank = tmp_path / "tiny.conllu"
    treebank.write_text(text * 2, encoding="utf-8")  # every word seen more than once
    r = run_agree("extract", str(treebank), "--lang", "en", "--min-count", "2",
                                 "--out", str(tmp_path / "ex"), "-q")
    assert r.exit_code == 0, r.output
    originals = list(read_items(tmp_path / "ex"))
    assert len(originals) == 16
    r = run(tmp_path / "ex", "--n", 3, "--seed", 1, "--out", tmp_path / "nonce", "-q")
    assert r.exit_code == 0, r.output
    table = ParadigmTable.load(tmp_path / "ex")
    items = list(read_items(tmp_path / "nonce"))
    assert len(items) == 16 * 4
    by_id = {it.item_id: it for it in originals}
    for it in items:
        if it.variant:
            check_variant(table, by_id[it.item_id], it)
    # the cue (another noun of its number is always there) and the target change in every variant
    assert all(it.tokens[1] != by_id[it.item_id].tokens[1] for it in items if it.variant)
    assert all(it.lemma != by_id[it.item_id].lemma for it in items if it.variant)


def test_frequency_sampling_and_vowel_rule_off(extract_dir, tmp_path):
    r = run(extract_dir, "--sampling", "frequency", "--vowel-rule", "off", "--ambiguity", 0,
            "--out", tmp_path / "o", "-q")
    assert r.exit_code == 0, r.output
    params = json.loads((tmp_path / "o" / "manifest.json").read_text())["parameters"]
    assert (params["sampling"], params["vowel_rule_applied"], params["ambiguity"]) == ("frequency", False, 0.0)
    table, originals = make_table(), {it.item_id: it for it in ITEMS}
    for it in read_items(tmp_path / "o"):
        if it.variant:
            check_variant(table, originals[it.item_id], it)
