"""agreement.extraction.relations (agree extract --mode relations) on tiny Italian-like
treebanks whose answers are known: every relation and feature, a subject layer
(Number[subj]), each exclusion, a Dual left out of the contrast, targets before their
cue, wrong forms from another treebank and from a UniMorph lexicon, and the bad inputs."""
from __future__ import annotations

import gzip
import json
import random

import pytest

from agreement.errors import AgreeError
from agreement.extraction.extract import ExtractConfig, extract_items
from agreement.extraction.relations import reason_text
from agreement.extraction.validity import check_items
from conftest import run_agree
from formats.items import COLUMNS, RELATION_COLUMNS, Item, read_items, write_items
from nonce.generate import NonceConfig, make_nonce
from treebanks.errors import TreebankError
from treebanks.unimorph import map_bundle, read_unimorph

M, F = "Gender=Masc", "Gender=Fem"
ART = "Definite=Def|{g}|Number={n}|PronType=Art"
V3 = "Mood=Ind|Number={n}|Person=3|Tense=Pres|VerbForm=Fin"


def conllu(sent_id, rows):
    lines = [f"# sent_id = {sent_id}"]
    for i, (form, lemma, upos, feats, head, deprel) in enumerate(rows, start=1):
        lines.append(f"{i}\t{form}\t{lemma}\t{upos}\t_\t{feats}\t{head}\t{deprel}\t_\t_")
    return "\n".join(lines) + "\n"


def np_(det, noun, adj, g, n, head, deprel):
    """DET NOUN ADJ, the noun attached to ``head`` (1-based within the sentence) as ``deprel``."""
    lemma = {"Masc": ("il", "gatto", "nero"), "Fem": ("il", "gatta", "nero")}[g]
    return [(det, lemma[0], "DET", ART.format(g=f"Gender={g}", n=n), 2, "det"),
            (noun, lemma[1], "NOUN", f"Gender={g}|Number={n}", head, deprel),
            (adj, lemma[2], "ADJ", f"Gender={g}|Number={n}", 2, "amod")]


def sleeps(det, noun, adj, g, n, verb):
    """``DET NOUN ADJ VERB .``: subject-verb, determiner-noun, adjective-noun."""
    return np_(det, noun, adj, g, n, 4, "nsubj") + [
        (verb, "dormire", "VERB", V3.format(n=n), 0, "root"), (".", ".", "PUNCT", "_", 4, "punct")]


BASIC = [sleeps("il", "gatto", "nero", "Masc", "Sing", "dorme"),
         sleeps("i", "gatti", "neri", "Masc", "Plur", "dormono"),
         sleeps("la", "gatta", "nera", "Fem", "Sing", "dorme"),
         sleeps("le", "gatte", "nere", "Fem", "Plur", "dormono"),
         # DET NOUN ADJ AUX ADJ: subject-verb to the copula, subject-predicate to the adjective
         np_("le", "gatte", "nere", "Fem", "Plur", 5, "nsubj")
         + [("sono", "essere", "AUX", V3.format(n="Plur"), 5, "cop"),
            ("stanche", "stanco", "ADJ", "Gender=Fem|Number=Plur", 0, "root")],
         np_("il", "gatto", "nero", "Masc", "Sing", 5, "nsubj")
         + [("è", "essere", "AUX", V3.format(n="Sing"), 5, "cop"),
            ("stanco", "stanco", "ADJ", "Gender=Masc|Number=Sing", 0, "root")],
         np_("la", "gatta", "nera", "Fem", "Sing", 5, "nsubj")
         + [("è", "essere", "AUX", V3.format(n="Sing"), 5, "cop"),
            ("stanca", "stanco", "ADJ", "Gender=Fem|Number=Sing", 0, "root")],
         # a pronoun subject: Person and Number; 2nd person is attested, 1st nearest to it
         [("noi", "noi", "PRON", "Number=Plur|Person=1|PronType=Prs", 2, "nsubj"),
          ("dormiamo", "dormire", "VERB", "Mood=Ind|Number=Plur|Person=1|Tense=Pres|VerbForm=Fin", 0, "root")],
         [("voi", "voi", "PRON", "Number=Plur|Person=2|PronType=Prs", 2, "nsubj"),
          ("dormite", "dormire", "VERB", "Mood=Ind|Number=Plur|Person=2|Tense=Pres|VerbForm=Fin", 0, "root")]]


#: the BASIC shapes with other lemmas (cane, cagna, bianco, correre): nonce candidates and target pairs
MORE = [[(f, {"cane": "cane", "cani": "cane", "cagna": "cagna", "cagne": "cagna"}.get(f, lem) if u == "NOUN"
          else ("bianco" if u == "ADJ" else ("correre" if u == "VERB" else lem)), u, ft, h, d)
         for f, lem, u, ft, h, d in s]
        for s in [sleeps("il", "cane", "bianco", "Masc", "Sing", "corre"),
                  sleeps("i", "cani", "bianchi", "Masc", "Plur", "corrono"),
                  sleeps("la", "cagna", "bianca", "Fem", "Sing", "corre"),
                  sleeps("le", "cagne", "bianche", "Fem", "Plur", "corrono")]]


def write(path, sentences, start=1, gz=False):
    text = "\n".join(conllu(f"s{k}", rows) for k, rows in enumerate(sentences, start=start))
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def relation_items(tmp_path, sentences, **kw):
    path = write(tmp_path / "toy-ud-test.conllu", sentences)
    extra = {k: kw.pop(k) for k in ("paradigms", "lexicon") if k in kw}
    return extract_items([path], ExtractConfig(mode="relations", **kw), **extra)


def by_key(result):
    return {(it.relation, it.feature, it.correct): it for it in result.items}


class TestRelations:
    def test_every_relation_and_feature(self, tmp_path):
        r = relation_items(tmp_path, BASIC)
        items = by_key(r)
        sv = items[("subj-verb", "Number", "dormono")]
        assert (sv.wrong, sv.wrong_value, sv.number, sv.scoring, sv.target_side) == ("dorme", "Sing", "Plur",
                                                                                     "target", "after")
        assert sv.construction == "subj-verb Number" and sv.direction == "_" and sv.distance == 2
        assert items[("subj-verb", "Number", "sono")].wrong == "è"  # the copula of an adjective head
        assert items[("subj-pred", "Number", "stanche")].wrong == "stanca"
        assert items[("subj-pred", "Gender", "stanco")].wrong == "stanca"
        det = items[("det-noun", "Gender", "la")]
        assert (det.wrong, det.wrong_value, det.scoring, det.target_side) == ("il", "Masc", "sentence", "before")
        assert det.cue_index == 1 and det.target_index == 0 and det.prefix == ()
        adj = items[("adj-noun", "Number", "nere")]
        assert (adj.wrong, adj.scoring) == ("nera", "target")
        person = items[("subj-verb", "Person", "dormiamo")]
        assert (person.wrong, person.wrong_value) == ("dormite", "2")  # the nearest other person
        assert ("subj-verb", "Gender", "dorme") not in items  # finite verbs here carry no Gender
        assert r.reason == "" and r.mode == "relations"
        assert r.report.counts[("det-noun", "Gender")]["items"] == sum(
            1 for it in r.items if it.relation == "det-noun" and it.feature == "Gender")

    def test_items_are_valid_and_round_trip(self, tmp_path):
        r = relation_items(tmp_path, BASIC)
        v = check_items(r.items, r.paradigms)
        assert v.items == len(r.items) > 10
        assert v.share("correct_is_token") == v.share("wrong_closest") == 1.0
        write_items(tmp_path / "items.tsv", r.items)
        header = (tmp_path / "items.tsv").read_text().splitlines()[0].split("\t")
        assert header == COLUMNS + RELATION_COLUMNS
        assert [it.as_row() for it in read_items(tmp_path / "items.tsv")] == [it.as_row() for it in r.items]

    def test_distance_slice(self, tmp_path):
        r = relation_items(tmp_path, BASIC, min_distance=2, max_distance=2)
        assert {it.distance for it in r.items} == {2}
        assert r.filters["distance"] > 0

    def test_subject_layer(self, tmp_path):
        verb = "Mood=Ind|Number[subj]={n}|Person[subj]=3|Tense=Pres|VerbForm=Fin"
        # the noun's two numbers are spelled apart: a syncretic cue would be dropped (ambiguous_cue)
        sents = [[(noun, "kaci", "NOUN", f"Case=Nom|Number={n}", 2, "nsubj"),
                  (form, "dzinavs", "VERB", verb.format(n=n), 0, "root")]
                 for n, noun, form in (("Sing", "kaci", "dzinavs"), ("Plur", "kacit", "dzinaven"))]
        items = by_key(relation_items(tmp_path, sents))
        it = items[("subj-verb", "Number[subj]", "dzinaven")]
        assert (it.wrong, it.wrong_value, it.construction) == ("dzinavs", "Sing", "subj-verb Number")

    @pytest.mark.parametrize("change, excluded", [
        (lambda s: s + [("e", "e", "CCONJ", "_", 7, "cc"), ("cane", "cane", "NOUN", "Gender=Masc|Number=Sing", 2, "conj")],
         "coordinated"),
        (lambda s: [s[0], (s[1][0], s[1][1], "PRON", "Gender=Masc|Number=Plur|PronType=Rel", 4, "nsubj")] + s[2:],
         "relative_or_interrogative"),
        (lambda s: s + [("ci", "ci", "PRON", "PronType=Prs", 4, "expl")], "expletive"),
        (lambda s: s + [("cinque", "cinque", "NUM", "NumType=Card", 2, "nummod:gov")], "quantified"),
        (lambda s: [s[0], (s[1][0], s[1][1], "NOUN", "Case=Erg|Gender=Masc|Number=Plur", 4, "nsubj")] + s[2:],
         "noncontrolling_case"),
        (lambda s: s + [("stesso", "stesso", "ADJ", "_", 2, "fixed")], "fixed"),
    ])
    def test_exclusions_are_counted(self, tmp_path, change, excluded):
        r = relation_items(tmp_path, BASIC[:3] + [change(BASIC[1])])
        assert r.report.counts[("subj-verb", "Number")][excluded] == 1
        assert "s4" not in {it.item_id.split(":")[1] for it in r.items if it.relation == "subj-verb"}

    def test_dual_is_counted_and_left_out(self, tmp_path):
        dual = [("gatti", "gatto", "NOUN", "Gender=Masc|Number=Dual", 2, "nsubj"),
                ("dormono", "dormire", "VERB", V3.format(n="Dual"), 0, "root")]
        r = relation_items(tmp_path, BASIC + [dual])
        assert r.report.excluded_values == {"Number=Dual": 1}
        assert r.report.counts[("subj-verb", "Number")]["excluded_value"] == 1

    def test_nonce_keeps_the_contrasted_feature(self, tmp_path):
        r = relation_items(tmp_path, BASIC + MORE + BASIC + MORE)
        nonce = make_nonce(r.items, r.paradigms, NonceConfig(n=3, min_count=1), random.Random(1))
        gender = [it for it in nonce.items if it.variant and it.feature == "Gender" and it.relation == "adj-noun"]
        assert gender and all(it.wrong_source == "paradigms" for it in gender)
        for it in gender:  # the replacement pair differs in Gender, not in Number
            assert it.wrong_value in ("Masc", "Fem") and it.correct != it.wrong
        dets = [it for it in nonce.items if it.variant and it.relation == "det-noun"]
        assert dets and all(it.lemma == "il" for it in dets)  # one article lemma: its own pair kept
        assert nonce.targets_own_pair.get("DET", 0) > 0
        v = check_items(nonce.items, r.paradigms)
        assert v.variants > 0 and v.share("words_kept") == v.share("pair_kept") == 1.0


class TestPooledAndLexicon:
    def test_wrong_form_from_another_treebank(self, tmp_path):
        other = write(tmp_path / "other-ud-dev.conllu", BASIC[1:2], start=50)  # only it has "dormono"
        r = relation_items(tmp_path, [BASIC[0], BASIC[2]], paradigms=[other])
        sv = by_key(r)[("subj-verb", "Number", "dorme")]
        assert (sv.wrong, sv.wrong_source) == ("dormono", "other-ud-dev")
        assert r.report.counts[("subj-verb", "Number")]["wrong_pooled"] == 2
        assert "s50" not in {it.item_id.split(":")[1] for it in r.items}  # read for its paradigms only

    def test_conflicting_paradigms_own_form_first_and_reported(self, tmp_path):
        odd = [[(f if f != "dormono" else "dormeno", *rest) for f, *rest in BASIC[1]]]
        other = write(tmp_path / "other-ud-dev.conllu", odd * 3, start=50)
        r = relation_items(tmp_path, BASIC, paradigms=[other])
        assert by_key(r)[("subj-verb", "Number", "dorme")].wrong == "dormono"  # the item's own treebank's
        assert any("spelled differently" in n and "dormeno" in n for n in r.notes)

    def test_unimorph_mapping(self):
        assert map_bundle("N;PL") == ("NOUN", {"Number": "Plur"})
        assert map_bundle("V;IND;PRS;3;SG") == ("VERB", {"Mood": "Ind", "Number": "Sing", "Person": "3",
                                                         "Tense": "Pres", "VerbForm": "Fin"})
        assert map_bundle("N;PSS1S;SG") == "PSS1S"

    def test_lexicon_supplies_wrong_forms_and_counts_unknown_tags(self, tmp_path):
        lex = tmp_path / "ita"
        lex.write_text("dormire\tdormono\tV;IND;PRS;3;PL\ndormire\tdormo\tV;IND;PRS;1;SG;LGSPEC1\n\n"
                       "gatto\tgatti\tN;PL;MASC\n", encoding="utf-8")
        r = relation_items(tmp_path, [BASIC[0]], lexicon=lex)
        sv = by_key(r)[("subj-verb", "Number", "dorme")]
        assert (sv.wrong, sv.wrong_source, sv.wrong_value) == ("dormono", "unimorph", "Plur")
        assert any("2 of 3 lexicon lines read; 1 skipped" in n and "LGSPEC1 1" in n for n in r.notes)
        # the cell the lexicon filled travels in paradigms.tsv (count 0), for the nonce pairs
        assert r.paradigms.counts[("dormono", "dormire", "VERB", V3.format(n="Plur"))] == 0

    def test_lexicon_line_without_three_fields_is_an_error(self, tmp_path):
        lex = tmp_path / "bad"
        lex.write_text("dormire\tdormono\tV;IND;PRS;3;PL\ndormire dormo\n", encoding="utf-8")
        with pytest.raises(TreebankError, match=r"bad:2: not a UniMorph line"):
            read_unimorph(lex)


class TestNoSilentZero:
    def test_no_feature_says_so(self, tmp_path):
        bare = [[(f, lem, u, "_", h, d) for f, lem, u, _, h, d in s] for s in BASIC]
        r = relation_items(tmp_path, bare)
        assert not r.items and reason_text(r.reason).startswith("no token carries Gender or Number or Person")

    def test_no_wrong_form_names_the_sources_that_would_help(self, tmp_path):
        r = relation_items(tmp_path, [BASIC[0]], relations=("subj-verb",), features=("Number",))
        assert "no alternative" in reason_text(r.reason)
        assert "({paradigms})" in r.reason and "({lexicon})" in r.reason

    def test_construction_mode_zero_gives_counts_and_the_other_method(self, tmp_path):
        path = write(tmp_path / "toy-ud-test.conllu", BASIC)
        r = extract_items([path], ExtractConfig(min_distance=1, max_distance=5))
        assert not r.items and "{mode} relations" in r.reason and "nearest:" in r.reason


class TestCli:
    def test_relations_mode_writes_its_directory(self, tmp_path):
        tb = write(tmp_path / "toy-ud-test.conllu", BASIC)
        res = run_agree("extract", tb, "--mode", "relations", "--lang", "it", "--out", tmp_path / "out")
        assert res.exit_code == 0, res.output
        assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["items.tsv", "manifest.json",
                                                                        "paradigms.tsv", "relations.tsv"]
        assert res.stdout.splitlines()[0].split() == ["relation", "Gender", "Number", "Person", "items", "scored",
                                                      "by", "sentence"]
        manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
        assert manifest["parameters"]["mode"] == "relations" and manifest["counts"]["items"] > 10
        nonce = run_agree("nonce", tmp_path / "out", "--n", "2", "--out", tmp_path / "nonce")
        assert nonce.exit_code == 0, nonce.output
        assert (tmp_path / "nonce" / "relations.tsv").is_file()

    def test_zero_items_warns_with_the_reason_and_flags(self, tmp_path):
        tb = write(tmp_path / "toy-ud-test.conllu", [BASIC[0]])
        res = run_agree("extract", tb, "--mode", "relations", "--features", "Number", "--relations", "subj-verb",
                        "--out", tmp_path / "out")
        assert res.exit_code == 0
        assert "Warning: no agreement items: " in res.stderr and "(--paradigms)" in res.stderr

    @pytest.mark.parametrize("args, message", [
        (["--mode", "relations", "--min-count", "5"], "--min-count: for the construction filter"),
        (["--paradigms", "x.conllu"], "--relations, --paradigms and --lexicon are for --mode relations"),
        (["--mode", "relations", "--relations", "subj-obj"], "unknown relation 'subj-obj'"),
        (["--mode", "relations", "--features", "Case"], "relation mining contrasts Gender, Number, Person"),
        (["--mode", "relations", "--format", "colorlessgreen"], "colorlessgreen writes the paper's"),
    ])
    def test_bad_options(self, tmp_path, args, message):
        tb = write(tmp_path / "toy-ud-test.conllu", BASIC)
        res = run_agree("extract", tb, *args, "--out", tmp_path / "out")
        assert res.exit_code == 1 and message in res.stderr, res.output
        assert not (tmp_path / "out").exists()

    def test_truncated_gz_is_one_error_and_nothing_written(self, tmp_path):
        good = write(tmp_path / "toy-ud-test.conllu.gz", BASIC * 20, gz=True)
        cut = tmp_path / "cut-ud-test.conllu.gz"
        cut.write_bytes(good.read_bytes()[:-40])
        res = run_agree("extract", cut, "--mode", "relations", "--no-cache", "--out", tmp_path / "out")
        assert res.exit_code == 1 and "Traceback" not in res.output
        assert res.stderr.splitlines()[-1].startswith("Error: ") and "cannot decompress" in res.stderr
        assert not (tmp_path / "out").exists()

    def test_help_has_an_example(self):
        res = run_agree("extract", "--help")
        assert "--mode relations --out cs-rel" in res.stdout


class TestItemChecks:
    def test_target_before_cue_needs_sentence_scoring(self, tmp_path):
        it = Item("x:1:1-0:Number", 0, "det-noun Number", "_", ("le", "gatte"), ("DET", "NOUN"), ("_", "_"),
                  "le", "la", "il", "Plur", 1, 0, 0, False, relation="det-noun", feature="Number",
                  wrong_value="Sing", scoring="target", wrong_source="x")
        write_items(tmp_path / "items.tsv", [it])
        with pytest.raises(AgreeError, match="precedes its cue .* not 'sentence'"):
            list(read_items(tmp_path / "items.tsv"))
        write_items(tmp_path / "items.tsv", [it.replace(scoring="sentence")])
        (back,) = read_items(tmp_path / "items.tsv")
        assert back.context_length == 0 and back.target_side == "before"
