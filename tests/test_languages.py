"""Issue 15: the pipeline on languages other than English and Italian (inline fixtures)."""
from __future__ import annotations

import numpy as np

from conftest import run_agree
from formats.items import Item
from formats.scored import write_scored
from agreement.scoring.score import score_items
from agreement.reporting.results import build_results
from agreement.reporting.summary import summary_dict
from agreement.reporting.summary_md import render_markdown
from lm.unigram import UnigramScorer


def _item(item_id, words, correct, wrong):
    tokens = tuple(words.split()) + (correct,)
    n = len(tokens)
    return Item(item_id, 0, "NOUN VERB", "L", tokens, ("_",) * n, ("_",) * n, correct, wrong, "_", "Sing",
                0, n - 1, 0, False, "original")


class TestUndecidable:
    """A model that knows neither form scores both as <unk>: a tie, undecidable, not wrong."""

    ITEMS = [_item("known", "the dog that we saw", "runs", "run"),
             _item("unknown", "the dog that we saw", "sprints", "sprint")]

    def scored(self):
        # a real unigram model: "sprints"/"sprint" are outside its vocabulary
        model = UnigramScorer(["<eos>", "<unk>", "the", "dog", "that", "we", "saw", "runs", "run"],
                              [5, 3, 9, 4, 4, 4, 4, 6, 2], name="uni")
        return score_items(self.ITEMS, [model])

    def test_tie_is_undecidable_not_wrong(self):
        scored = self.scored()
        assert scored.correct[0] and not scored.undecidable[0]
        assert scored.logp_correct[1] == scored.logp_wrong[1]
        assert scored.undecidable[1] and not scored.correct[1]

    def test_summary_reports_accuracy_over_decidable_items(self):
        results = build_results(self.scored(), rng=np.random.default_rng(0), n_boot=50)
        summary = summary_dict(results)
        row = next(r for r in summary["accuracy"] if r["by"] == "all")
        assert (row["items"], row["undecidable"], row["accuracy"]) == (1, 1, 100.0)
        assert summary["models"][0]["undecidable_items"] == 1
        md = render_markdown(results)
        assert "Warning:** uni: 1 of 2 items (50%) are undecidable" in md

    def test_no_warning_when_all_decidable(self):
        results = build_results(self.scored().subset(slice(0, 1)), rng=np.random.default_rng(0), n_boot=50)
        assert "Warning" not in render_markdown(results)

    def test_scored_tsv_has_undecidable_column(self, tmp_path):
        write_scored(tmp_path / "s.tsv", self.scored())
        header, *rows = (tmp_path / "s.tsv").read_text().splitlines()
        col = header.split("\t").index("undecidable")
        assert [r.split("\t")[col] for r in rows] == ["0", "1"]
        assert [r.split("\t")[header.split("\t").index("correct")] for r in rows] == ["1", "0"]


class TestCaselessSentences:
    def test_caseless_paragraph_split_into_its_sentences(self):
        from lm.corpus.tokenize import sentences
        text = ('צה"ל הודיע היום על מבצע. הכוחות נכנסו לעיר ארה״ב בבוקר! מה קרה אחר כך? '
                'אף אחד לא יודע.')
        assert sentences(text, "he") == [['צה"ל', "הודיע", "היום", "על", "מבצע", "."],
                                         ["הכוחות", "נכנסו", "לעיר", "ארה״ב", "בבוקר", "!"],
                                         ["מה", "קרה", "אחר", "כך", "?"], ["אף", "אחד", "לא", "יודע", "."]]

    def test_script_specific_marks_and_combining_signs(self):
        from lm.corpus.tokenize import sentences
        assert sentences("ذهب الولد إلى المدرسة. هل رأيت المعلم؟ نعم رأيته.", "ar") == [
            ["ذهب", "الولد", "إلى", "المدرسة", "."], ["هل", "رأيت", "المعلم", "؟"], ["نعم", "رأيته", "."]]
        assert sentences("राम घर गया। सीता बाज़ार गई।", "hi") == [["राम", "घर", "गया", "।"],
                                                             ["सीता", "बाज़ार", "गई", "।"]]

    def test_no_space_no_split_and_cased_scripts_unchanged(self):
        from lm.corpus.tokenize import sentences
        assert len(sentences("מבצע.הכוחות נכנסו", "he")) == 1  # no whitespace after the period
        assert sentences("It is 3 m. the end. The dog ran.", "en") == [
            ["It", "is", "3", "m", ".", "the", "end", "."], ["The", "dog", "ran", "."]]

    def test_unknown_lang_warns_and_uses_generic_rules(self, tmp_path):

        from lm.corpus.tokenize import lang_warning
        assert lang_warning("en") is None and lang_warning("he") is None
        assert "no rules for language 'xx'" in lang_warning("xx")
        src = tmp_path / "in.txt"
        src.write_text("a b c .\n" * 30, encoding="utf-8")
        r = run_agree("corpus", str(src), "--lang", "xx", "--out", str(tmp_path / "c"), "-q")
        assert r.exit_code == 0, r.output
        assert "Warning: the tokenizer has no rules for language 'xx'; using the generic rules" in r.stderr


# --- inline CoNLL-U ------------------------------------------------------------------

def _conllu(*sentences: str) -> str:
    """Sentences as rows ``ID FORM LEMMA UPOS FEATS HEAD DEPREL`` (space-separated;
    a multiword token row is ``4-5 farlo``) -> CoNLL-U text."""
    out = []
    for k, sent in enumerate(sentences, start=1):
        out.append(f"# sent_id = s{k}")
        for row in sent.strip().splitlines():
            cols = row.split()
            if "-" in cols[0]:
                out.append("\t".join([cols[0], cols[1]] + ["_"] * 8))
            else:
                tid, form, lemma, upos, feats, head, deprel = cols
                out.append("\t".join([tid, form, lemma, upos, "_", feats, head, deprel, "_", "_"]))
        out.append("")
    return "\n".join(out) + "\n"


def _read(tmp_path, text, name="tb.conllu"):
    from treebanks.paradigms import ParadigmTable
    from treebanks.reader import read_treebanks
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    sents = list(read_treebanks([path]))
    return sents, ParadigmTable.from_sentences(sents)


def _item_of(sentence, cue, target, wrong):
    t = sentence.tokens
    return Item(f"x:{sentence.sent_id}", 0, "NOUN VERB", "L", tuple(x.form for x in t), tuple(x.upos for x in t),
                tuple(x.feats for x in t), t[target].form, wrong, t[target].lemma, "Sing", cue, target, 0, False,
                "original")


V3S = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
V3P = "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin"
MS, MP = "Gender=Masc|Number=Sing", "Gender=Masc|Number=Plur"
CL = "Clitic=Yes|Gender={g}|Number=Sing|Person=3|PronType=Prs"


def _it_sentence(noun, verb, vlemma, vfeats, fused, inf, clitic, gender="Masc", det="il"):
    return f"""
1 {det} {det} DET Definite=Def 2 det
2 {noun} {noun.rstrip('i').rstrip('e').rstrip('o')}o NOUN {MS if verb in ('vuole', 'deve') else MP} 3 nsubj
3 {verb} {vlemma} VERB {vfeats} 0 root
4-5 {fused}
4 {inf} {inf}e VERB VerbForm=Inf 3 xcomp
5 {clitic} {clitic} PRON {CL.format(g=gender)} 4 obj
6 . . PUNCT _ 3 punct"""


ITALIAN = _conllu(
    _it_sentence("cane", "vuole", "volere", V3S, "farlo", "far", "lo"),
    _it_sentence("cani", "vogliono", "volere", V3P, "dirlo", "dir", "lo"),
    _it_sentence("gatto", "deve", "dovere", V3S, "dirlo", "dir", "lo"),
    _it_sentence("gatti", "devono", "dovere", V3P, "farlo", "far", "lo"),
    _it_sentence("gatto", "vuole", "volere", V3S, "farla", "far", "la", gender="Fem"),
    """
1 il il DET Definite=Def 2 det
2 cane cano NOUN Gender=Masc|Number=Sing 3 nsubj
3 vuole volere VERB Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root
4 fare fare VERB VerbForm=Inf 3 xcomp
5 e e CCONJ _ 6 cc
6 dire dire VERB VerbForm=Inf 4 conj
7 . . PUNCT _ 3 punct""")

# Hebrew-style (transliterated): a noun written with its preposition and article
# as one token, b+h+byt "in the house"; l+byt "to a house" has other function parts
HEBREW = _conllu(*[f"""
1 yld yld NOUN {MS} 2 nsubj
2 {verb} {vl} VERB {vf} 0 root
3-5 {fused}
3 b b ADP _ 5 case
4 h h DET PronType=Art 5 det
5 {noun} {noun} NOUN {MS} 2 obl
6 . . PUNCT _ 2 punct""" for verb, vl, vf, fused, noun in (
    ("gr", "gwr", V3S, "bhbyt", "byt"), ("gr", "gwr", V3S, "bhspr", "spr"),
    ("yšb", "yšb", V3S, "bhspr", "spr"), ("yšb", "yšb", V3S, "bhbyt", "byt"))], """
1 yld yld NOUN Gender=Masc|Number=Sing 2 nsubj
2 gr gwr VERB Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root
3-4 lbyt
3 l l ADP _ 4 case
4 byt byt NOUN Gender=Masc|Number=Sing 2 obl
5 spr spr NOUN Gender=Masc|Number=Sing 4 nmod
6 byt byt NOUN Gender=Masc|Number=Sing 2 obl
7 . . PUNCT _ 2 punct""")


class TestFusedTokensUnderNonce:
    def _nonce(self, sents, table, item, n=6):
        import random

        from nonce.generate import NonceConfig, make_nonce
        return make_nonce([item], table, NonceConfig(n=n, min_count=1, ambiguity=0.0), random.Random(1))

    def test_verb_with_enclitic_keeps_its_clitic(self, tmp_path):
        sents, table = _read(tmp_path, ITALIAN)
        assert sents[0].forms == ("il", "cane", "vuole", "farlo", ".")
        assert sents[0].tokens[3].lemma == "fare+lo"
        result = self._nonce(sents, table, _item_of(sents[0], 1, 2, "vogliono"))
        variants = result.items[1:]
        assert len(variants) == 6
        # only a re-spelling with the same clitic: dirlo (never farla, nor a bare verb)
        assert {v.tokens[3] for v in variants} == {"dirlo"}
        assert result.positions_fused == {"VERB": 1} and result.positions_fused_unchanged == {}

    def test_unattested_respelling_leaves_the_position_and_counts_it(self, tmp_path):
        sents, table = _read(tmp_path, ITALIAN)
        assert sents[4].forms[3] == "farla"  # no other verb + la in the treebank
        result = self._nonce(sents, table, _item_of(sents[4], 1, 2, "vogliono"))
        assert {v.tokens[3] for v in result.items[1:]} == {"farla"}
        assert result.positions_fused_unchanged == {"no_attested_respelling": 1}

    def test_noun_with_prefixed_preposition_and_article(self, tmp_path):
        sents, table = _read(tmp_path, HEBREW)
        assert sents[0].forms == ("yld", "gr", "bhbyt", ".") and sents[0].tokens[2].upos == "NOUN"
        assert sents[0].tokens[2].lemma == "b+h+byt"
        item = _item_of(sents[0], 0, 1, "grw")
        table.add("grw", "gwr", "VERB", V3P, 2)  # the target's plural, so that it has pairs
        table.add("yšbw", "yšb", "VERB", V3P, 2)
        result = self._nonce(sents, table, item)
        assert {v.tokens[2] for v in result.items[1:]} == {"bhspr"}  # never lbyt, never bare spr

    def test_merged_target_keeps_its_own_pair(self, tmp_path):
        sents, table = _read(tmp_path, ITALIAN)
        item = _item_of(sents[0], 1, 3, "farli")
        result = self._nonce(sents, table, item)
        assert result.targets_fused == 1
        assert {(v.correct, v.wrong) for v in result.items[1:]} == {("farlo", "farli")}


class TestSpreadPairs:
    def test_variants_use_distinct_pairs_until_exhausted(self):
        import random

        from nonce.generate import NonceConfig, make_nonce
        from treebanks.paradigms import ParadigmTable
        table = ParadigmTable()
        lemmas = ["bark", "run", "eat", "sing", "jump", "swim"]
        for w in lemmas + ["sleep"]:
            table.add(w + "s", w, "VERB", V3S, 3)
            table.add(w, w, "VERB", V3P, 3)
        table.add("dog", "dog", "NOUN", MS, 3)
        table.add("cat", "cat", "NOUN", MS, 3)
        item = Item("i", 0, "NOUN VERB", "L", ("dog", "sleeps"), ("NOUN", "VERB"), (MS, V3S), "sleeps", "sleep",
                    "sleep", "Sing", 0, 1, 0, False, "original")
        for n in (6, 9):
            result = make_nonce([item], table, NonceConfig(n=n), random.Random(3))
            pairs = [v.lemma for v in result.items[1:]]
            assert len(set(pairs[:6])) == 6  # the first six variants: six different lemmas
            assert result.distinct_pairs == {6: 1}


class TestNumberOnly:
    def _table(self, rows):
        from treebanks.paradigms import ParadigmTable
        table = ParadigmTable()
        for form, lemma, feats, n in rows:
            table.add(form, lemma, "VERB", feats, n)
        return table

    def test_pair_differing_in_tense_is_rejected(self):
        table = self._table([("walks", "walk", V3S, 3),
                             ("walked", "walk", "Mood=Ind|Number=Plur|Person=3|Tense=Past|VerbForm=Fin", 2),
                             ("runs", "run", V3S, 3), ("run", "run", V3P, 3)])
        assert table.alternative("run", "VERB", V3S) == "run"
        assert table.alternative("walk", "VERB", V3S) is None
        assert table.rejected_alternatives("walk", "VERB", V3S) == [("walked", ["Tense"])]

    def test_one_sided_feature_allowed_only_when_it_covaries_with_number(self):
        past_sg = "Gender={g}|Number=Sing|Tense=Past|VerbForm=Fin"
        past_pl = "Number=Plur|Tense=Past|VerbForm=Fin"
        rows = [("spal", "spat", past_sg.format(g="Masc"), 5), ("spali", "spat", past_pl, 4),
                ("pel", "pet", past_sg.format(g="Masc"), 5), ("pela", "pet", past_sg.format(g="Fem"), 3),
                ("peli", "pet", past_pl, 4)]
        table = self._table(rows)
        assert "Gender" in table.covarying("VERB")  # singular past: always; plural: never
        assert table.alternative("spat", "VERB", past_sg.format(g="Masc")) == "spali"
        # Aspect on one side only, and it does not come and go with number: rejected
        table = self._table(rows + [("idet", "idti", "Aspect=Imp|Number=Sing|Tense=Pres|VerbForm=Fin", 3),
                                    ("idut", "idti", "Number=Plur|Tense=Pres|VerbForm=Fin", 3),
                                    ("nosit", "nosit", "Aspect=Imp|Number=Sing|Tense=Pres|VerbForm=Fin", 3),
                                    ("nosjat", "nosit", "Aspect=Imp|Number=Plur|Tense=Pres|VerbForm=Fin", 3)])
        assert table.alternative("idti", "VERB", "Aspect=Imp|Number=Sing|Tense=Pres|VerbForm=Fin") is None
        assert table.rejected_alternatives("idti", "VERB", "Aspect=Imp|Number=Sing|Tense=Pres|VerbForm=Fin") == [
            ("idut", ["Aspect"])]


def _dual_sentence(noun, nfeats, verb, vfeats):
    return f"""
1 {noun} {noun[:3]} NOUN {nfeats} 5 nsubj
2 hunā hunā ADV _ 5 advmod
3 ġadan ġadan ADV _ 5 advmod
4 ḥaqqan ḥaqqan ADV _ 5 advmod
5 {verb} {verb[:3]} VERB {vfeats} 0 root
6 . . PUNCT _ 5 punct"""


# Arabic-style (transliterated) Sing / Plur / Dual subjects and verbs
SG, PL, DU = "Number=Sing", "Number=Plur", "Number=Dual"
DUAL = _conllu(*[_dual_sentence(n, nf, v, vf) for n, nf, v, vf in (
    ("walad", SG, "kataba", SG), ("awlād", PL, "katabū", PL), ("waladān", DU, "katabā", DU),
    ("bint", SG, "kataba", SG), ("banāt", PL, "katabū", PL), ("bintān", DU, "katabā", DU),
    ("walad", SG, "daras", SG), ("awlād", PL, "darasū", PL), ("waladān", DU, "darasā", DU),
    ("bint", SG, "daras", SG), ("banāt", PL, "darasū", PL), ("bintān", DU, "darasā", DU),
    ("waladān", DU, "katabā", DU), ("bintān", DU, "darasā", DU))])


class TestDual:
    def _extract(self, tmp_path, **kw):
        from agreement.extraction.extract import ExtractConfig, extract_items
        path = tmp_path / "ar.conllu"
        path.write_text(DUAL, encoding="utf-8")
        return extract_items([path], ExtractConfig(min_count=2, **kw))

    def test_dual_arcs_excluded_and_counted_wrong_forms_never_dual(self, tmp_path):
        r = self._extract(tmp_path)
        assert [c.name for c in r.report.kept] == ["L NOUN ADV ADV ADV VERB"]
        assert r.filters["excluded_value"] == 6  # the six dual subject-verb arcs
        assert len(r.items) == 8
        assert {it.number for it in r.items} == {"Sing", "Plur"}
        dual_forms = {"katabā", "darasā"}
        assert not {it.wrong for it in r.items} & dual_forms
        assert {(it.correct, it.wrong) for it in r.items} == {
            ("kataba", "katabū"), ("katabū", "kataba"), ("daras", "darasū"), ("darasū", "daras")}

    def test_values_can_pair_singular_with_dual(self, tmp_path):
        r = self._extract(tmp_path, values=("Sing", "Dual"))
        assert {it.number for it in r.items} == {"Sing", "Dual"}
        assert ("kataba", "katabā") in {(it.correct, it.wrong) for it in r.items}

    def test_values_the_treebank_never_uses_is_a_clear_error(self, tmp_path):

        path = tmp_path / "ar.conllu"
        path.write_text(DUAL, encoding="utf-8")
        r = run_agree("extract", str(path), "--values", "Sing,Trial", "--out", str(tmp_path / "o"),
                                     "--min-count", "2", "-q")
        assert r.exit_code == 1
        assert r.output.strip().splitlines()[-1] == (
            f"Error: --values Sing,Trial: no token of {path} has Number=Trial; its Number values: Dual, Plur, Sing")
        r = run_agree("extract", str(path), "--values", "Sing", "--out", str(tmp_path / "o"), "-q")
        assert r.exit_code == 1 and "Error: --values needs two different values" in r.output
        assert not (tmp_path / "o").exists()


class TestExplainRejections:
    def test_explain_shows_which_features_differed(self, tmp_path):
        from agreement.extraction.extract import ExtractConfig, extract_items
        # "yaktub" (present) has only a past-tense plural: number and tense differ
        text = DUAL + _conllu(*[_dual_sentence("walad", SG, "yaktub", "Number=Sing|Tense=Pres")] * 2,
                              _dual_sentence("awlād", PL, "katabūhu", "Number=Plur|Tense=Past"))
        text = text.replace("katabūhu\tkat\t", "katabūhu\tyak\t")  # the lemma of yaktub
        assert "katabūhu\tyak\t" in text
        path = tmp_path / "ar.conllu"
        path.write_text(text, encoding="utf-8")
        r = extract_items([path], ExtractConfig(min_count=2, explain=("L NOUN ADV ADV ADV VERB",)))
        assert r.filters["non_number_difference"] == 3  # yaktub twice, katabūhu once
        assert "differs beyond number: 3 (e.g. yaktub / katabūhu: Tense" in r.report.explanations[0]


class TestTreebankCache:
    def test_second_run_reads_the_cache_and_gives_the_same_result(self, tmp_path):
        from agreement.extraction.extract import ExtractConfig, extract_items
        path = tmp_path / "ar.conllu"
        path.write_text(DUAL, encoding="utf-8")
        cache = tmp_path / "cache"
        plain = extract_items([path], ExtractConfig(min_count=2))
        first = extract_items([path], ExtractConfig(min_count=2, cache_dir=str(cache)))
        second = extract_items([path], ExtractConfig(min_count=2, cache_dir=str(cache), max_distance=10))
        assert (first.reading, second.reading) == ({"cached": 0, "parsed": 1}, {"cached": 1, "parsed": 0})
        assert plain.items == first.items == second.items
        assert [c.name for c in second.report.kept] == ["L NOUN ADV ADV ADV VERB"]
        assert [p.name.startswith(".tmp") for p in cache.iterdir()] == [False]  # atomic: no temporary left

    def test_corrupted_entry_is_ignored_and_rewritten(self, tmp_path):
        from treebanks.cache import load_treebanks
        path = tmp_path / "ar.conllu"
        path.write_text(DUAL, encoding="utf-8")
        cache = tmp_path / "cache"
        good, _ = load_treebanks([path], cache_dir=cache)
        entry = next(cache.iterdir())
        data = entry.read_bytes()
        entry.write_bytes(data[:-7] + b"garbage")
        again, reading = load_treebanks([path], cache_dir=cache)
        assert reading == {"cached": 0, "parsed": 1} and again == good
        assert entry.read_bytes() == data
        entry.write_bytes(data[:40])  # truncated
        assert load_treebanks([path], cache_dir=cache)[1] == {"cached": 0, "parsed": 1}

    def test_changed_file_is_parsed_again_and_parallel_equals_serial(self, tmp_path):
        from treebanks.cache import load_treebanks
        a, b = tmp_path / "a.conllu", tmp_path / "b.conllu"
        a.write_text(DUAL, encoding="utf-8")
        b.write_text(ITALIAN, encoding="utf-8")
        cache = tmp_path / "cache"
        serial, _ = load_treebanks([a, b], workers=1)
        parallel, _ = load_treebanks([a, b], cache_dir=cache, workers=2)
        assert serial == parallel and parallel[0].source == str(a)
        a.write_text(HEBREW, encoding="utf-8")
        sents, reading = load_treebanks([a, b], cache_dir=cache)
        assert reading == {"cached": 1, "parsed": 1} and sents[0].forms == ("yld", "gr", "bhbyt", ".")

    def test_cli_no_cache(self, tmp_path, monkeypatch):

        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # an empty cache of its own

        path = tmp_path / "ar.conllu"
        path.write_text(DUAL, encoding="utf-8")
        run = lambda *a: run_agree("extract", str(path), "--min-count", "2", *a)  # noqa: E731
        r = run("--out", str(tmp_path / "o1"))
        assert r.exit_code == 0 and "0 of 1 treebank files from the cache" in r.stderr
        r = run("--out", str(tmp_path / "o2"))
        assert "1 of 1 treebank files from the cache" in r.stderr
        r = run("--out", str(tmp_path / "o3"), "--no-cache")
        assert "0 of 1 treebank files from the cache" in r.stderr
        assert (tmp_path / "o1" / "items.tsv").read_bytes() == (tmp_path / "o3" / "items.tsv").read_bytes()
        assert len(list((tmp_path / "xdg" / "agree" / "treebanks").iterdir())) == 1


class TestNonceCliCounts:
    def test_manifest_and_stderr_report_distinct_pairs(self, tmp_path):
        import json


        path = tmp_path / "ar.conllu"
        path.write_text(DUAL, encoding="utf-8")
        r = run_agree("extract", str(path), "--min-count", "2", "--out", str(tmp_path / "x"), "-q")
        assert r.exit_code == 0, r.output
        r = run_agree("nonce", str(tmp_path / "x"), "--n", "3", "--ambiguity", "0", "--seed", "1",
                                     "--out", str(tmp_path / "n"))
        assert r.exit_code == 0, r.output
        counts = json.loads((tmp_path / "n" / "manifest.json").read_text())["counts"]
        # each target has exactly one other lemma with the same features: one distinct pair
        assert counts["distinct_pairs"] == {"1": 8} and counts["positions_fused_unchanged"] == {}
        assert "distinct target pairs per item: 1: 8 items" in r.stderr
