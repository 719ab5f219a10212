"""formats.testsets: the registry, each reader on tiny inline fixtures (CLAMS, Marvin &
Linzen pickles, SyntaxGym suites, the BLiMP family and RuBLiMP), bad input as one
``Error: FILE:LINE:`` line with nothing written, and the published files read whole."""
from __future__ import annotations

import json
import os
import pickle
from collections import Counter

import pytest

from agreement.errors import AgreeError
from formats.testsets import FORMATS, detect_testset, load_testset
from formats.testsets import testset_inputs as inputs_of
from formats.testsets.sgformula import FormulaError, comparisons, evaluate, parse_formula
from formats.testsets.syneval import parse_condition

from conftest import run_agree, shared_path


def score(*args):
    return run_agree("score", *args)


def refused(r, tmp_path, out="o"):
    """The command failed with one Error line and wrote nothing."""
    assert r.exit_code == 1, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    assert not (tmp_path / out).exists()
    return lines[0]


# --------------------------------------------------------------------------- registry

class TestRegistry:
    def test_every_format_is_a_format_choice(self):
        """--format offers what the registry holds, auto first."""
        assert FORMATS[0] == "auto"
        assert set(FORMATS) >= {"blimp", "multiblimp", "items", "paper-tab", "colorlessgreen", "clams",
                                "lm-syneval", "syntaxgym", "rublimp", "zhoblimp", "sling", "blimp-nl",
                                "jblimp", "turblimp", "climp"}
        r = run_agree("score", "--help")
        assert "lm-syneval" in r.output and "syntaxgym" in r.output

    def test_unknown_format(self, tmp_path):
        with pytest.raises(AgreeError, match="unknown test-set format 'nope' \\(known: auto, "):
            detect_testset(tmp_path, "nope")

    @staticmethod
    def refused_as(tmp_path, name: str, text: str, fmt: str) -> tuple:
        """(the file, the one error line) of ``agree score`` on ``text`` written as ``name``, read as ``fmt``."""
        path = tmp_path / name
        path.write_text(text)
        return path, refused(score(path, "--format", fmt, "--out", tmp_path / "o"), tmp_path)

    def test_pretty_printed_json_as_blimp_says_json_not_json_lines(self, tmp_path):
        text = json.dumps([{"sentence_good": "a b", "sentence_bad": "a c"}], indent=2)
        path, line = self.refused_as(tmp_path, "p.jsonl", text, "blimp")
        assert line == (f"Error: {path}:1: JSON but not JSON Lines: one JSON array over 6 lines, where "
                        "one JSON object per line is expected")

    def test_colorlessgreen_format_on_a_single_other_file(self, tmp_path):
        path, line = self.refused_as(tmp_path, "x.tsv", "a\tb\n", "colorlessgreen")
        assert line.startswith(f"Error: {path}: not one of the paper's set files (colorlessgreen reads")
        assert "x.tsv.text" not in line

    def test_comma_csv_as_multiblimp_names_the_delimiter(self, tmp_path):
        path, line = self.refused_as(tmp_path, "eng.tsv", "sen,wrong_sen,lang\nThe dog runs.,The dog run.,eng\n",
                                     "multiblimp")
        assert line == (f"Error: {path}:1: not a MultiBLiMP file (missing columns: sen, wrong_sen; the "
                        "header is comma-separated: sen, wrong_sen, lang; tab-separated columns are expected)")

    def test_nothing_matches_says_what_it_saw(self, tmp_path):
        path = tmp_path / "t.csv"
        path.write_text("a;b;c\n1;2;3\n")
        with pytest.raises(AgreeError) as e:
            detect_testset(path)
        assert "not a test set: it is a semicolon-separated table whose first line has a, b, c" in str(e.value)
        assert "rublimp" in str(e.value) and "source_sentence, target_sentence" in str(e.value)
        (tmp_path / "d.json").write_text(json.dumps({"x": 1}, indent=1))
        with pytest.raises(AgreeError, match="it is JSON but not JSON Lines: one JSON object \\(keys: x\\)"):
            detect_testset(tmp_path / "d.json")


# --------------------------------------------------------------------------- CLAMS

def clams_dir(root, suites):
    d = root / "xx_evalset"
    d.mkdir(parents=True)
    for name, lines in suites.items():
        (d / f"{name}.txt").write_text("".join(f"{lab}\t{s}\n" for lab, s in lines), encoding="utf-8")
    return d


SIMPLE = [("True", "the dog runs"), ("False", "the dog run"), ("True", "the dogs run"), ("False", "the dogs runs")]
# as in the published suites, every subject occurs with both numbers of the other noun
ACROSS = [("True", "the dog near the cats runs"), ("False", "the dog near the cats run"),
          ("True", "the dogs near the cat run"), ("False", "the dogs near the cat runs"),
          ("True", "the dog near the cat runs"), ("False", "the dog near the cat run"),
          ("True", "the dogs near the cats run"), ("False", "the dogs near the cats runs")]
WITHIN = [("True", "the dog that the cats like runs"), ("False", "the dog that the cats likes runs"),
          ("True", "the dogs that the cat likes run"), ("False", "the dogs that the cat like run"),
          ("True", "the dog that the cat likes runs"), ("False", "the dog that the cat like runs"),
          ("True", "the dogs that the cats like run"), ("False", "the dogs that the cats likes run")]
# one subject with both verbs: what ties the number of "like" to that of "runs"
COORD = [("True", "the dog runs and likes cats"), ("False", "the dog runs and like cats"),
         ("True", "the dogs run and like cats"), ("False", "the dogs run and likes cats")]


class TestClams:
    def test_pairs_language_and_attractors(self, tmp_path):
        d = clams_dir(tmp_path, {"simple_agrmt": SIMPLE, "prep_across": ACROSS, "obj_rel_within": WITHIN,
                                 "vp_coord": COORD})
        assert detect_testset(d) == ("clams", d)
        ts = load_testset(d)
        assert ts.kind == "clams" and len(ts.items) == 12
        by = {(it.construction, " ".join(it.tokens)): it for it in ts.items}
        assert set(c for c, _ in by) == {"xx simple_agrmt", "xx prep_across", "xx obj_rel_within", "xx vp_coord"}
        across = {s: it.attractors for (c, s), it in by.items() if c == "xx prep_across"}
        # cats is plural (it agrees with like in the within suite, like with runs' subject's
        # plural in vp_coord), cat singular
        assert across == {"the dog near the cats runs": 1, "the dogs near the cat run": 1,
                          "the dog near the cat runs": 0, "the dogs near the cats run": 0}
        it = by[("xx simple_agrmt", "the dog runs")]
        assert (it.correct, it.wrong, it.target_index, it.extra["lang"]) == ("runs", "run", 2, "xx")
        assert inputs_of(d) == sorted(d.iterdir())

    def test_lang_option_and_single_file(self, tmp_path):
        d = clams_dir(tmp_path, {"simple_agrmt": SIMPLE})
        ts = load_testset(d / "simple_agrmt.txt", lang="fr")
        assert {it.construction for it in ts.items} == {"fr simple_agrmt"}

    def test_french_copula_and_adjective_pairs_are_contiguous_spans(self, tmp_path):
        """Lines as aaronmueller/clams fr_evalset/simple_agrmt.txt publishes them: 3 of its 7
        predicates change two words (120 of its 280 pairs), vieux only one."""
        from agreement.scoring.span import target_span

        d = clams_dir(tmp_path, {"simple_agrmt": [
            ("True", "les auteurs sont vieux"), ("False", "les auteurs est vieux"),
            ("True", "les auteurs sont jeunes"), ("False", "les auteurs est jeune"),
            ("True", "l' auteur est petit"), ("False", "l' auteur sont petits"),
            ("True", "les auteurs déménagent"), ("False", "les auteurs déménage")]})
        items = load_testset(d, lang="fr").items
        assert [target_span(it) for it in items] == [None, (2, 4, 4), (2, 4, 4), None]
        assert [it.extra["target_ok"] for it in items] == [True, False, False, True]

    def test_true_without_false_partner(self, tmp_path):
        d = clams_dir(tmp_path, {"s": [("True", "the dog runs"), ("True", "the dogs run"), ("False", "the dogs runs")]})
        line = refused(score(d, "--model", "x", "--out", tmp_path / "o"), tmp_path)
        assert line == (f"Error: {d / 's.txt'}:1: True sentence without its False partner "
                        "(line 2 is True again)")
        (d / "s.txt").write_text("True\tthe dog runs\n")
        assert refused(score(d, "--out", tmp_path / "o"), tmp_path).endswith(
            ":1: True sentence without its False partner (the file ends)")
        (d / "s.txt").write_text("True\tthe dog runs\nFalse\tthe dog run\nmaybe the dogs run\n")
        assert ":3: not a CLAMS line" in refused(score(d, "--format", "clams", "--out", tmp_path / "o"), tmp_path)


# --------------------------------------------------------------------------- Marvin & Linzen

class Evil:
    """Unpickling this would run a shell command."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class TestSyneval:
    def test_conditions_become_number_and_attractors(self):
        assert parse_condition("sing_MS_MV_plur_ES_EV") == ("Sing", 1)
        assert parse_condition("plur_ES_EV_plur_MS_MV") == ("Plur", 0)
        assert parse_condition("sing_MS_MV") == ("Sing", 0)
        assert parse_condition("past") == ("_", 0)

    def test_pickle_pairs_and_npi_triples(self, tmp_path):
        d = tmp_path / "templates"
        d.mkdir()
        (d / "prep_anim.pickle").write_bytes(pickle.dumps({
            "sing_MS_MV_plur_ES": [("the author near the guards laughs", "the author near the guards laugh")],
            "plur_MS_MV_plur_ES": [("the authors near the guards laugh", "the authors near the guards laughs")]},
            protocol=2))
        (d / "simple_npi_anim.pickle").write_bytes(pickle.dumps({"past": [
            ("no authors have ever been popular", "the authors have ever been popular",
             "most authors have ever been popular")], "future": [("a", "b", "c", "d")]}, protocol=2))
        assert detect_testset(d) == ("lm-syneval", d)
        ts = load_testset(d)
        got = sorted((it.item_id, it.construction, it.number, it.attractors) for it in ts.items)
        assert got == [("prep_anim:plur_MS_MV_plur_ES:0", "prep_anim", "Plur", 0),
                       ("prep_anim:sing_MS_MV_plur_ES:0", "prep_anim", "Sing", 1),
                       ("simple_npi_anim:past:0:1", "simple_npi_anim: vs intrusive", "_", 0),
                       ("simple_npi_anim:past:0:2", "simple_npi_anim: vs unlicensed", "_", 0)]
        assert any("1 tuple(s) of neither 2 nor 3 sentences skipped" in n for n in ts.notes)

    def test_a_pickle_holding_a_class_is_refused_and_nothing_runs(self, tmp_path):
        marker = tmp_path / "ran"
        path = tmp_path / "evil.pickle"
        path.write_bytes(pickle.dumps({"sing_MS_MV": [Evil(marker)]}, protocol=2))
        line = refused(score(path, "--model", "x", "--out", tmp_path / "o"), tmp_path)
        assert line.startswith(f"Error: {path}:")
        assert "refused: the pickle names posix.system" in line or "refused: the pickle names os.system" in line
        assert not marker.exists()
        path.write_bytes(pickle.dumps({"sing_MS_MV": [(1, 2)]}, protocol=2))
        assert "holds a int, not sentences (str)" in refused(score(path, "--out", tmp_path / "o"), tmp_path)


# --------------------------------------------------------------------------- SyntaxGym

def suite(predictions, conditions=("match_sing", "mismatch_sing")):
    verbs = {"match_sing": "runs", "mismatch_sing": "run", "match_plural": "run", "mismatch_plural": "runs"}
    subj = {"match_sing": "dog", "mismatch_sing": "dog", "match_plural": "dogs", "mismatch_plural": "dogs"}
    items = [{"item_number": n, "conditions": [
        {"condition_name": c, "regions": [{"region_number": 1, "content": "The"},
                                          {"region_number": 2, "content": subj[c]},
                                          {"region_number": 3, "content": verb_prefix + verbs[c]},
                                          {"region_number": 4, "content": ""}]} for c in conditions]}
        for n, verb_prefix in ((1, ""), (2, "often "))]
    return {"meta": {"name": "tiny_number", "metric": "sum"},
            "region_meta": {"1": "intro", "2": "np", "3": "verb", "4": "end"},
            "predictions": [{"type": "formula", "formula": f} for f in predictions], "items": items}


class TestSyntaxGym:
    def test_formula_grammar(self):
        s = {("a", 1): 2.0, ("b", 1): 3.0, ("a", 2): 1.0}
        assert evaluate(parse_formula("(1;%a%) < (1;%b%)"), s)
        assert evaluate(parse_formula("[(1;%a%) < (1;%b%)] & [(2;%a%) > 0.5]"), s)
        assert not evaluate(parse_formula("((1;%a%) > (1;%b%)) | ((2;%a%) > 2)"), s)
        assert evaluate(parse_formula("(1;%b%) - (1;%a%) = 1.0005"), s)  # SyntaxGym's tolerance
        assert evaluate(parse_formula("(*;%a%) > (1;%b%)-1"), s)           # * sums the condition's regions
        # syntaxgym-core's documented example: comparisons bind tighter than & and |
        both = parse_formula("(1;%b%) > (1;%a%) & (1;%a%) < (1;%b%)")
        assert evaluate(both, s) and comparisons(both) == [("a", "b", 1), ("a", "b", 1)]
        for bad, why in (("(1;%a%) <", "ends where"), ("(1;%a%) + (1;%b%)", "not a comparison"),
                         ("[(1;%a%) < 1", "without its"), ("(1;%a%) < 2 < 3", "two comparisons"),
                         ("(1;%a%) # 2", "cannot read")):
            with pytest.raises(FormulaError, match=why):
                parse_formula(bad)

    def test_suite_regions_conditions_and_pairs(self, tmp_path):
        path = tmp_path / "tiny.json"
        path.write_text(json.dumps(suite(["(3;%match_sing%) < (3;%mismatch_sing%)"]), indent=4))
        assert detect_testset(path) == ("syntaxgym", path)
        ts = load_testset(path)
        (s,) = ts.suites
        assert (s.name, s.metric, s.regions[3]) == ("tiny_number", "sum", "verb")
        assert [it.number for it in s.items] == [1, 2]
        pairs = sorted((it.item_id, " ".join(it.tokens), it.correct, it.wrong) for it in ts.items)
        assert pairs == [("tiny_number:1:match_sing>mismatch_sing", "The dog runs", "runs", "run"),
                         ("tiny_number:2:match_sing>mismatch_sing", "The dog often runs", "runs", "run")]

    @pytest.mark.parametrize("formula, said", [
        ("(9;%match_sing%) < (3;%mismatch_sing%)", "names region 9, which the suite does not have"),
        ("(3;%match_sing%) < (3;%nope%)", "names condition 'nope', which the suite does not have")])
    def test_prediction_naming_an_unknown_region_or_condition(self, tmp_path, formula, said):
        path = tmp_path / "tiny.json"
        path.write_text(json.dumps(suite([formula]), indent=4))
        line = refused(score(path, "--model", "x", "--out", tmp_path / "o"), tmp_path)
        lineno = path.read_text().splitlines().index(f'            "formula": "{formula}"') + 1
        assert line.startswith(f"Error: {path}:{lineno}: prediction 1: {formula!r} {said}")


# --------------------------------------------------------------------------- BLiMP family, RuBLiMP

class TestPairFamilies:
    def test_rublimp_csv(self, tmp_path):
        path = tmp_path / "np_agreement_number.csv"
        path.write_text("id,source_sentence,target_sentence,source_word,target_word,level,phenomenon,PID\n"
                        '7,"Серый Брат стал, как все.",Серый Брат стали как все.,стал,стали,Syntax,'
                        "Subject-Predicate Agreement,np_agreement_number\n", encoding="utf-8")
        assert detect_testset(path) == ("rublimp", path)
        (it,) = load_testset(path).items
        assert (it.item_id, it.construction, it.extra["lang"], it.extra["source_word"]) == (
            "np_agreement_number:7", "np_agreement_number", "ru", "стал")
        assert it.tokens[:3] == ("Серый", "Брат", "стал,") and it.extra["target_ok"]

    def test_skipped_pairs_are_counted_by_their_reason(self, tmp_path):
        """An identical pair and a pair with an empty sentence are skipped, each counted
        under its own reason in the test set's notes (summary.md, the manifest)."""
        path = tmp_path / "np_agreement_number.csv"
        path.write_text("id,source_sentence,target_sentence,source_word,target_word,level,phenomenon,PID\n"
                        "1,a b,a c,b,c,S,x,p\n2,a b,a b,b,b,S,x,p\n3,a b,,b,,S,x,p\n")
        testset = load_testset(path)
        assert [it.item_id for it in testset.items] == ["p:1"]
        assert testset.notes == (f"{path}: 1 pair(s) skipped: the two sentences are identical",
                                 f"{path}: 1 pair(s) skipped: a sentence is empty")

    def test_a_csv_missing_a_column(self, tmp_path):
        path = tmp_path / "x.csv"
        path.write_text("id,source_sentence,PID\n1,a b,p\n")
        line = refused(score(path, "--format", "rublimp", "--out", tmp_path / "o"), tmp_path)
        assert line == (f"Error: {path}:1: not a RuBLiMP (Taktasheva et al. 2024) file (missing columns "
                        "source_sentence, target_sentence; the header has id, source_sentence, PID)")
        path.write_text("id,source_sentence,target_sentence,PID\n1,a b,a c,p\n2,a b\n")
        assert refused(score(path, "--format", "rublimp", "--out", tmp_path / "o"), tmp_path) == (
            f"Error: {path}:3: 2 fields, the header has 4")

    def test_sling_and_zhoblimp_are_told_from_blimp(self, tmp_path):
        sling = tmp_path / "baseline_female.jsonl"
        sling.write_text(json.dumps({"sentence_good": "女医生 通过 她 。", "sentence_bad": "女医生 通过 他 。",
                                     "phenomenon": "Anaphor", "paradigm": "baseline_female", "pair_ID": 0,
                                     "field": "syntax"}, ensure_ascii=False) + "\n", encoding="utf-8")
        zho = tmp_path / "zho" / "anaphor.jsonl"
        zho.parent.mkdir()
        zho.write_text(json.dumps({"sentence_good": "a b", "sentence_bad": "a c", "UID": "anaphor",
                                   "phenomenon": "anaphor"}) + "\n")
        assert detect_testset(sling)[0] == "sling" and detect_testset(zho.parent)[0] == "zhoblimp"
        (it,) = load_testset(sling).items
        assert (it.construction, it.correct, it.wrong, it.extra["phenomenon"]) == (
            "baseline_female", "她", "他", "Anaphor")

    def test_jblimp_turblimp_blimp_nl_and_climp(self, tmp_path):
        jb = tmp_path / "validated_minimal_pairs.jsonl"
        jb.write_text(json.dumps({"ID": 4, "good_sentence": "太郎が 花子に 会う。", "bad_sentence": "太郎が 花子を 会う。",
                                  "type": "acceptability", "phenomenon": "argument structure",
                                  "paradigm": "case"}, ensure_ascii=False) + "\n", encoding="utf-8")
        tr = tmp_path / "subject_verb_agreement.csv"
        tr.write_text("good_sentence;bad_sentence;good_cue;bad_cue;critical_region;phenomenon\n"
                      "Biz geldik.;Siz geldik.;Biz;Siz;geldik;subject_verb_agreement\n", encoding="utf-8")
        nl = tmp_path / "agreement.jsonl"
        nl.write_text(json.dumps({"sentence_good": "De honden lopen.", "sentence_bad": "De honden loopt.",
                                  "linguistic_phenomenon": "agreement"}) + "\n")
        climp = tmp_path / "classifier_1000.csv"
        climp.write_text(",phenomenon,paradigm,sentence,is_acceptable\n0,classifier,cl,一 本 书,1\n"
                         "1,classifier,cl,一 个 书,0\n", encoding="utf-8")
        got = {p.name: (detect_testset(p, fmt)[0], [(it.construction, it.correct, it.wrong)
                                               for it in load_testset(p, fmt).items])
               for p, fmt in ((jb, "auto"), (tr, "auto"), (nl, "auto"), (climp, "climp"))}
        assert got == {"validated_minimal_pairs.jsonl": ("jblimp", [("case", "花子に", "花子を")]),
                       "subject_verb_agreement.csv": ("turblimp", [("subject_verb_agreement", "Biz", "Siz")]),
                       "agreement.jsonl": ("blimp-nl", [("agreement", "lopen", "loopt")]),
                       "classifier_1000.csv": ("climp", [("cl", "本", "个")])}
        climp.write_text(",phenomenon,paradigm,sentence,is_acceptable\n0,c,cl,一 本 书,1\n")
        with pytest.raises(AgreeError, match=":2: grammatical sentence without its ungrammatical partner"):
            load_testset(climp, "climp")


def test_multiblimp_num_attractors_reach_the_attractor_table(tmp_path):
    path = tmp_path / "eng.tsv"
    path.write_text("sen\twrong_sen\tlang\tphenomenon\tnum_attractors\n"
                    "The dogs near the cat run .\tThe dogs near the cat runs .\teng\tSV-#\t1\n"
                    "The dog runs .\tThe dog run .\teng\tSV-#\t0\n")
    assert [it.attractors for it in load_testset(path).items] == [1, 0]
    path.write_text("sen\twrong_sen\tnum_attractors\nThe dog runs .\tThe dog run .\tmany\n")
    with pytest.raises(AgreeError, match=r"eng.tsv:2: num_attractors is 'many', not a count"):
        load_testset(path)


# --------------------------------------------------------------------------- the published files

@pytest.mark.parametrize("parts, kind, items", [
    (("clams", "en_evalset"), "clams", 157346), (("clams", "de_evalset"), "clams", 47820),
    (("lm_syneval", "templates"), "lm-syneval", 168908), (("syntaxgym", "json"), "syntaxgym", 76),
    (("rublimp",), "rublimp", 2000)])
def test_shared_sets_read_as_published(parts, kind, items):
    """Every shared benchmark, detected and read whole; counts as its README gives them
    (M&L: 158,084 tuples, the 10,824 NPI triples giving two pairs each)."""
    path = shared_path(*parts)
    ts = load_testset(path)
    assert (ts.kind, len(ts.items)) == (kind, items)
    attractors = Counter(it.attractors for it in ts.items)
    if kind in ("clams", "lm-syneval"):
        assert attractors[1] > 0.3 * items
        across = [it for it in ts.items if "obj_rel_across_anim" in it.construction]
        assert Counter(it.attractors for it in across) == {0: len(across) // 2, 1: len(across) // 2}
    if kind == "syntaxgym":
        assert [(s.name, len(s.items), len(s.predictions)) for s in ts.suites] == [
            ("number_prep", 19, 1), ("number_src", 19, 1)]
