"""The text as written: spacing flags (formats/spacing.py), the detokenization rule
(formats/detok.py), items.tsv's text column, BLiMP's published strings, UD's
SpaceAfter, and perturbations that keep or change the spacing on purpose."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from formats.testsets.blimp import PairSkips, pair_item, read_blimp
from formats.detok import detokenize, space_after
from formats.errors import AgreeError
from formats.items import COLUMNS, Item, read_items, write_items
from formats.spacing import render, spacing_of, word_spans


@pytest.mark.parametrize("words, text", [
    ("Katherine ca n't help herself .", "Katherine can't help herself."),
    ("it would be dangerous to take one 's eyes off the ball .", "it would be dangerous to take one's eyes off the ball."),
    ("you 're beautiful , he said ( loudly ) !", "you're beautiful, he said (loudly)!"),
    ('there are 50,000 " foreigners " in the " Andaman Islands " .',
     'there are 50,000 "foreigners" in the "Andaman Islands".'),
    ("con l' omicidio dell' uomo , un po' trucido", "con l'omicidio dell'uomo, un po' trucido"),
    ("il status delle ' sedute ' .", "il status delle 'sedute'."),
    ("the students' books cost 5 % more ...", "the students' books cost 5% more..."),
    ("al - Qaeda infiltrators -- he said", "al - Qaeda infiltrators -- he said"),
    ("L' Italia « vince » ?", "L'Italia «vince»?"),
])
def test_detokenization_rule(words, text):
    """Punctuation, English clitics, Italian elisions (not po'), alternating quotes;
    dashes keep their spaces; words never change."""
    assert detokenize(words.split()) == text
    assert spacing_of(text, words.split()) == space_after(words.split())


def test_spans_and_spacing_round_trip():
    words = ["The", "keys", "are", "here", "."]
    flags = (True, True, True, False, False)
    text = render(words, flags)
    assert text == "The keys are here."
    assert [text[s:e] for s, e in word_spans(words, flags)] == words
    assert spacing_of("  The keys  are\there.  ", words) == flags    # whitespace runs: one space
    assert spacing_of("The keys are here!", words) is None             # does not spell the words
    assert spacing_of("The keys are here. Really", words) is None


def _item(tokens, space_after=None):
    return Item("a", 0, "NOUN VERB", "L", tuple(tokens), ("_",) * len(tokens), ("_",) * len(tokens),
                tokens[2], "is", "_", "Plur", 1, 2, 0, False, space_after=space_after)


def test_items_tsv_text_column(tmp_path):
    """The text column holds the text as written; it reads back as the flags, and an
    item without spacing reads back equal to itself (the rule's text)."""
    ud = _item(["The", "keys", "are", "here", "."], (True, True, True, False, False))
    odd = _item(["The", "keys", "are", "here", "."], (False, True, True, True, False))
    paper = _item(["The", "keys", "are", "here", "."])
    write_items(tmp_path / "items.tsv", [ud, odd, paper])
    header, *rows = (tmp_path / "items.tsv").read_text().splitlines()
    assert header.split("\t")[-1] == "text" and COLUMNS[-1] == "text"
    assert [r.split("\t")[-1] for r in rows] == ["The keys are here.", "Thekeys are here .", "The keys are here."]
    back = list(read_items(tmp_path))
    assert back == [ud.replace(space_after=None), odd, paper]   # ud's flags are the rule's
    assert [b.text for b in back] == ["The keys are here.", "Thekeys are here .", "The keys are here."]


def test_items_tsv_without_text_column_reads_with_the_rule(tmp_path):
    item = _item(["They", "do", "n't", "run", "."])
    cols = [c for c in COLUMNS if c != "text"]
    (tmp_path / "items.tsv").write_text("\t".join(cols) + "\n" + "\t".join(item.as_row()[c] for c in cols) + "\n")
    (got,) = read_items(tmp_path)
    assert got == item and got.space_after is None and got.text == "They don't run."


def test_items_tsv_text_that_does_not_spell_the_tokens(tmp_path):
    item = _item(["The", "keys", "are", "here", "."])
    row = item.as_row()
    row["text"] = "The locks are here."
    (tmp_path / "items.tsv").write_text("\t".join(COLUMNS) + "\n" + "\t".join(row[c] for c in COLUMNS) + "\n")
    with pytest.raises(AgreeError, match=r"items.tsv:2: malformed item row .*does not spell"):
        list(read_items(tmp_path))


def test_pair_item_keeps_both_published_strings():
    it = pair_item("x:0", "x", "Katherine can't help herself.", "Katherine can't help himself.")
    assert it.tokens[-2:] == ("herself", ".") and it.text == "Katherine can't help herself."
    assert render(it.extra["wrong_tokens"], it.extra["wrong_spaces"]) == "Katherine can't help himself."
    odd = pair_item("x:1", "x", "The dog , it runs .", "The dogs , it run .")   # spaced as published
    assert odd.text == "The dog , it runs ." and odd.target_index == 1


def test_empty_sentence_is_a_counted_skip(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"sentence_good": " ", "sentence_bad": "The dogs runs.", "UID": "x"}\n'
                    '{"sentence_good": "The dog runs.", "sentence_bad": "The dog runs.", "UID": "x"}\n'
                    '{"sentence_good": "The dog runs.", "sentence_bad": "The dog run.", "UID": "x"}\n')
    skips = PairSkips()
    items = read_blimp(path, skips)
    assert len(items) == 1 and (skips.empty, skips.identical) == (1, 1)
    assert skips.notes() == ["1 pair(s) skipped: the two sentences are identical",
                             "1 pair(s) skipped: a sentence is empty"]


@pytest.mark.integration
def test_blimp_strings_exactly(shared):
    """Every BLiMP agreement pair's two sentences come back exactly as published."""
    data = shared("blimp", "data")
    n = 0
    for path in sorted(data.glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        items = read_blimp(path)
        assert len(items) == len(rows)
        for row, it in zip(rows, items):
            assert it.text == row["sentence_good"]
            assert render(it.extra["wrong_tokens"], it.extra["wrong_spaces"]) == row["sentence_bad"]
            n += 1
    assert n == 16000


def test_ud_space_after_and_multiword_tokens(tmp_path):
    """SpaceAfter=No (on a word, or on a multiword token's range line) is read; the
    sentence's words and flags give back its # text; the cache keeps the flags."""
    from treebanks.cache import load_columns
    from treebanks.reader import read_treebanks

    text = ("# sent_id = s1\n# text = They don't run, the dogs said.\n"
            "1\tThey\tthey\tPRON\t_\tNumber=Plur\t4\tnsubj\t_\t_\n"
            "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
            "2\tdo\tdo\tAUX\t_\tNumber=Plur\t4\taux\t_\tSpaceAfter=No\n"
            "3\tn't\tnot\tPART\t_\t_\t4\tadvmod\t_\t_\n"
            "4\trun\trun\tVERB\t_\tNumber=Plur\t0\troot\t_\tSpaceAfter=No|Gloss=x\n"
            "5\t,\t,\tPUNCT\t_\t_\t8\tpunct\t_\t_\n"
            "6\tthe\tthe\tDET\t_\t_\t7\tdet\t_\t_\n"
            "7\tdogs\tdog\tNOUN\t_\tNumber=Plur\t8\tnsubj\t_\t_\n"
            "8\tsaid\tsay\tVERB\t_\t_\t4\tparataxis\t_\tSpaceAfter=No\n"
            "9\t.\t.\tPUNCT\t_\t_\t4\tpunct\t_\tSpaceAfter=No\n\n")
    path = tmp_path / "t.conllu"
    path.write_text(text)
    (s,) = read_treebanks([path])
    assert s.forms == ("They", "don't", "run", ",", "the", "dogs", "said", ".")
    assert render(s.forms, s.spaces[:-1] + (False,)) == "They don't run, the dogs said."
    cols, _ = load_columns([path], cache_dir=tmp_path / "cache", workers=1)
    again, how = load_columns([path], cache_dir=tmp_path / "cache", workers=1)  # from the cache
    assert how["cached"] == 1
    for c in (cols, again):
        assert c.sentence(0).spaces == s.spaces
        assert c.sentence(0).tokens[2].space_after is False


@pytest.mark.integration
def test_extracted_ewt_items_read_their_treebank_text(shared, tmp_path):
    """Items mined from EWT give back the sentence's # text exactly, and nonce variants
    keep its spacing."""
    import conllu

    from agreement.extraction.extract import ExtractConfig, extract_items
    from nonce.generate import NonceConfig, make_nonce

    ewt = shared("ud", "en_ewt")
    texts = {}
    for path in sorted(ewt.glob("*.conllu")):
        with open(path, encoding="utf-8") as fh:
            for tl in conllu.parse_incr(fh):
                texts[(path.stem, tl.metadata["sent_id"])] = tl.metadata["text"]
    result = extract_items(sorted(ewt.glob("*.conllu")), ExtractConfig(cache_dir=str(tmp_path)))
    assert result.items
    for it in result.items:
        stem, sent_id = it.item_id.split(":")[:2]
        assert it.text == texts[(stem, sent_id)].strip()
    variants = make_nonce(result.items, result.paradigms, NonceConfig(), random.Random(1)).items
    spacing = {it.item_id: it.spacing for it in result.items}
    assert len(variants) > len(result.items)
    assert all(v.spacing == spacing[v.item_id] for v in variants)


def test_perturbations_keep_and_change_the_spacing():
    from nonce.perturb.base import Draft

    it = _item(["They", "do", "n't", "run", ",", "the", "dogs", "said", "."],
               (True, False, True, False, True, True, True, False, False))
    assert it.text == "They don't run, the dogs said."
    d = Draft(it.replace(cue_index=0, target_index=3))
    d.delete(4)                                   # the comma: "run" takes its space
    d.insert(6, ",", "PUNCT")                     # a comma after "dogs": written against it
    d.merge(4)                                    # "the dogs" -> "thedogs"
    out = d.to_item("marks:1", 3)
    assert out.text == "They don't run thedogs, said."
    assert out.tokens == ("They", "do", "n't", "run", "thedogs", ",", "said", ".")


def test_sentence_that_is_not_unicode_text_is_one_error(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"sentence_good": "The dog runs.", "sentence_bad": "The dog run."}\n'
                    '{"sentence_good": "The dog \\ud800 runs.", "sentence_bad": "The dog run."}\n')
    with pytest.raises(AgreeError, match=r"x.jsonl:2: sentence_good is not Unicode text \(a lone surrogate"):
        read_blimp(path)
