"""agreement.extraction.construction_miner / agreement.extraction.extract / formats.testsets.colorlessgreen
on a toy treebank
whose answers are known: subject-verb across a relative clause (kept), verb-object
(rejected), a non-projective arc, a verb with no plural form, past tenses spelled
alike, and a word whose rare plural reading must not count as an attractor."""
from __future__ import annotations

from pathlib import Path

import pytest

from formats.testsets.colorlessgreen import read_colorlessgreen, write_colorlessgreen
from agreement.errors import AgreeError
from agreement.extraction.extract import ExtractConfig, extract_items, parse_features
from formats.vocab import vocab_words as read_vocab
from agreement.extraction.construction_miner import ConstructionMiner, MiningConfig, parse_construction
from treebanks.errors import TreebankError
from treebanks.reader import read_treebanks
from conftest import as_cli

NOUNS = [("dog", "dogs", "Masc"), ("cat", "cats", "Fem"), ("boy", "boys", "Masc"), ("girl", "girls", "Fem")]
VERBS = [("bark", "barks", "bark"), ("sleep", "sleeps", "sleep"), ("run", "runs", "run")]
SG, PL = "Sing", "Plur"


def _verb_feats(number, gender, english_2_0):
    feats = {"Mood": "Ind", "Person": "3", "Tense": "Pres", "VerbForm": "Fin", "Number": number}
    if english_2_0 and number == PL:  # UD English 2.0 left Number off non-3sg verbs
        del feats["Number"], feats["Person"]
    if gender:
        feats["Gender"] = gender
    return "|".join(f"{k}={v}" for k, v in sorted(feats.items()))


def _noun_feats(number, gender):
    return f"Gender={gender}|Number={number}" if gender else f"Number={number}"


def _rows_to_conllu(sent_id, rows):
    lines = [f"# sent_id = {sent_id}"]
    for i, (form, lemma, upos, feats, head, deprel) in enumerate(rows, start=1):
        lines.append(f"{i}\t{form}\t{lemma}\t{upos}\t_\t{feats}\t{head}\t{deprel}\t_\t_")
    return "\n".join(lines) + "\n"


def subject_verb(n1, v1, n2, v2, *, gender=False, english_2_0=False, v1_feats=None):
    """``the N1 that the N2 V2 V1 .``: N1 <-nsubj- V1 is L NOUN VERB VERB (5 apart)."""
    (f1, num1, g1), (f2, num2, g2) = n1, n2
    g1, g2 = (g1, g2) if gender else (None, None)
    return [("the", "the", "DET", "Definite=Def|PronType=Art", 2, "det"),
            (f1, f1.rstrip("s"), "NOUN", _noun_feats(num1, g1), 7, "nsubj"),
            ("that", "that", "PRON", "PronType=Rel", 6, "obj"),
            ("the", "the", "DET", "Definite=Def|PronType=Art", 5, "det"),
            (f2, f2.rstrip("s") if f2 != "fish" else "fish", "NOUN", _noun_feats(num2, g2), 6, "nsubj"),
            (v2[0], v2[1], "VERB", _verb_feats(num2, g2, english_2_0), 2, "acl:relcl"),
            (v1[0], v1[1], "VERB", v1_feats or _verb_feats(num1, g1, english_2_0), 0, "root"),
            (".", ".", "PUNCT", "_", 7, "punct")]


def verb_object(subject, verb, english_2_0=False):
    """``the N V every single day the ball .``: V -obj-> ball is R VERB NOUN DET NOUN;
    the object is always singular, whatever the verb's number."""
    form, num, _ = subject
    return [("the", "the", "DET", "Definite=Def|PronType=Art", 2, "det"),
            (form, form.rstrip("s"), "NOUN", f"Number={num}", 3, "nsubj"),
            (verb, "see", "VERB", _verb_feats(num, None, english_2_0), 0, "root"),
            ("every", "every", "DET", "PronType=Tot", 6, "det"),
            ("single", "single", "ADJ", "Degree=Pos", 6, "amod"),
            ("day", "day", "NOUN", "Number=Sing", 3, "obl:tmod"),
            ("the", "the", "DET", "Definite=Def|PronType=Art", 8, "det"),
            ("ball", "ball", "NOUN", "Number=Sing", 3, "obj"),
            (".", ".", "PUNCT", "_", 3, "punct")]


# "A hearing is scheduled on the issue today": issue -> hearing crosses "is scheduled"
NON_PROJECTIVE = [("A", "a", "DET", "Definite=Ind|PronType=Art", 2, "det"),
                  ("hearing", "hearing", "NOUN", "Number=Sing", 4, "nsubj:pass"),
                  ("is", "be", "AUX", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", 4, "aux:pass"),
                  ("scheduled", "schedule", "VERB", "Tense=Past|VerbForm=Part|Voice=Pass", 0, "root"),
                  ("on", "on", "ADP", "_", 7, "case"),
                  ("the", "the", "DET", "Definite=Def|PronType=Art", 7, "det"),
                  ("issue", "issue", "NOUN", "Number=Sing", 2, "nmod"),
                  ("today", "today", "NOUN", "Number=Sing", 4, "obl:tmod"),
                  (".", ".", "PUNCT", "_", 4, "punct")]


def toy_sentences(*, gender=False, english_2_0=False, extra=()):
    """The toy treebank as (sent_id, rows) pairs; see the module docstring."""
    sents = []
    # the context noun cycles cats (Plur), fish, cat, fish: fish is Sing 12 times
    second = [("cats", PL, "Fem"), ("fish", SG, "Masc"), ("cat", SG, "Fem"), ("fish", SG, "Masc")]
    for number in (SG, PL):
        for i in range(12):
            sg, pl, g = NOUNS[i % 4]
            v_pl, v_sg, lemma = VERBS[i % 3]
            n2 = second[i % 4]
            v2 = ("sees", "see") if n2[1] == SG else ("see", "see")
            n1 = (sg if number == SG else pl, number, g)
            v1 = (v_sg if number == SG else v_pl, lemma)
            sents.append((f"sv-{number}-{i}", subject_verb(n1, v1, n2, v2, gender=gender, english_2_0=english_2_0)))
    # fish annotated plural once: that reading (1 of 13) is under 10%, no attractor
    sents.append(("fish-plural", subject_verb(("dog", SG, "Masc"), ("barks", "bark"), ("fish", PL, "Masc"),
                                              ("see", "see"), gender=gender, english_2_0=english_2_0)))
    # a verb never seen in the plural: no alternative form
    sents.append(("purrs", subject_verb(("cat", SG, "Fem"), ("purrs", "purr"), ("dogs", PL, "Masc"),
                                        ("see", "see"), gender=gender, english_2_0=english_2_0)))
    # past tense: the alternative is spelled the same
    for number, n1 in ((SG, ("girl", SG, "Fem")), (PL, ("girls", PL, "Fem"))):
        feats = f"Mood=Ind|Number={number}|Person=3|Tense=Past|VerbForm=Fin"
        sents.append((f"slept-{number}", subject_verb(n1, ("slept", "sleep"), ("cat", SG, "Fem"), ("sees", "see"),
                                                       gender=gender, english_2_0=english_2_0, v1_feats=feats)))
    for i in range(20):
        sg, pl, g = NOUNS[i % 4]
        subject = (sg, SG, g) if i % 2 == 0 else (pl, PL, g)
        sents.append((f"vo-{i}", verb_object(subject, "sees" if i % 2 == 0 else "see", english_2_0)))
    sents.append(("nonproj", NON_PROJECTIVE))
    sents.extend(extra)
    return sents


def toy_conllu(**kwargs) -> str:
    return "\n".join(_rows_to_conllu(sid, rows) for sid, rows in toy_sentences(**kwargs))


def toy_treebank(directory: Path, name: str = "toy.conllu", **kwargs) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(toy_conllu(**kwargs), encoding="utf-8")
    return path


@pytest.fixture
def toy(tmp_path) -> Path:
    return toy_treebank(tmp_path)


@pytest.fixture
def result(toy):
    return extract_items([toy], ExtractConfig(explain=("R VERB NOUN DET NOUN", "L NOUN VERB VERB", "L ADJ NOUN")))


class TestMining:
    def test_subject_verb_kept_verb_object_rejected(self, result):
        assert [c.name for c in result.report.kept] == ["L NOUN VERB VERB"]
        sv = result.report.kept[0]
        assert sv.pairs == (("Sing", "Sing", 15), ("Plur", "Plur", 13)) and sv.entropy == 0.0
        vo = {c.name: c for c in result.report.constructions}["R VERB NOUN DET NOUN"]
        # the object is always singular: H(target | cue) = 0 would keep it; H(cue | target) does not
        assert {tv for _, tv, _ in vo.pairs} == {"Sing"}
        assert not vo.kept and vo.reason == "H(cue|target) = 0.6931 nats >= 0.001"

    def test_relative_clause_arc_rejected_by_entropy(self, result):
        """N1 -acl:relcl-> V2 agrees with N2, not with N1: any value pair occurs."""
        c = {c.name: c for c in result.report.constructions}["R NOUN PRON NOUN VERB"]
        assert not c.kept and c.entropy > 0.5

    def test_filter_counts(self, result):
        f = result.filters
        assert (f["non_projective"], f["disagreeing"], f["no_alternative"], f["same_spelling"], f["vocab"]) == \
            (1, 0, 1, 2, 0)
        assert f["items"] == len(result.items) == 28 - 1 - 2
        assert f["arcs"] == (f["distance"] + f["punct"] + f["non_projective"] + f["missing_feature"]
                             + f["excluded_value"] + f["candidates"])

    def test_pairs_seen_once_are_noise(self, toy, tmp_path):
        """One subject-verb disagreement (an annotation error) is dropped; two reject."""
        def bad(i):
            return (f"bad-{i}", subject_verb(("dog", SG, "Masc"), ("bark", "bark"), ("cat", SG, "Fem"), ("sees", "see"),
                                             v1_feats="Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin"))
        one = toy_treebank(tmp_path / "one", extra=[bad(1)])
        two = toy_treebank(tmp_path / "two", extra=[bad(1), bad(2)])
        assert [c.name for c in extract_items([one]).report.kept] == ["L NOUN VERB VERB"]
        rejected = extract_items([two]).report.constructions
        assert [c.reason for c in rejected if c.name == "L NOUN VERB VERB"] == ["H(cue|target) = 0.1963 nats >= 0.001"]

    def test_min_count_applies_to_both_numbers(self, toy):
        assert extract_items([toy], ExtractConfig(min_count=13)).report.kept[0].name == "L NOUN VERB VERB"
        r = extract_items([toy], ExtractConfig(min_count=14))
        assert r.report.kept == () and r.items == ()
        sv = {c.name: c for c in r.report.constructions}["L NOUN VERB VERB"]
        assert sv.reason == "fewer than two Number values on >= 14 cues (Plur 13, Sing 15)"

    def test_distance_bounds(self, toy):
        # subject and verb are 5 apart: a minimum of 6 loses them
        assert extract_items([toy], ExtractConfig(min_distance=6)).report.kept == ()
        assert extract_items([toy], ExtractConfig(max_distance=4)).report.kept == ()

    def test_non_projective_arc_is_not_a_candidate(self, tmp_path):
        path = tmp_path / "np.conllu"
        path.write_text(_rows_to_conllu("np", NON_PROJECTIVE))
        miner = ConstructionMiner(MiningConfig())
        for s in read_treebanks([path]):
            miner.add_sentence(s)
        # issue(7) -> hearing(2) is non-projective; today -> scheduled lacks Number on the verb
        assert (miner.drops["non_projective"], miner.drops["missing_feature"], miner.drops["candidates"]) == (1, 1, 0)
        assert dict(miner.joint) == {}

    def test_head_cycle_is_an_error(self, tmp_path):
        rows = [("a", "a", "NOUN", "Number=Sing", 5, "dep")] + [("b", "b", "X", "_", 3, "dep"),
                ("c", "c", "X", "_", 2, "dep"), ("d", "d", "X", "_", 0, "root"), ("e", "e", "VERB", "Number=Sing", 4, "dep")]
        path = tmp_path / "cycle.conllu"
        path.write_text(_rows_to_conllu("c", rows))
        with pytest.raises(TreebankError, match=r"cycle.conllu:1: the heads do not form a tree \(word 2 is in a cycle\)"):
            extract_items([path])

    def test_explain(self, result):
        vo, sv, none = result.report.explanations
        assert vo.splitlines() == [
            "R VERB NOUN DET NOUN: REJECTED (20 candidate arcs)",
            "  cue>target pairs: Plur>Sing 10, Sing>Sing 10",
            "  H(cue|target) = 0.6931 nats (must be < 0.001): FAILS",
            "  cues per Number value (two values need >= 10): Plur 10, Sing 10: passes",
            "  -> rejected: H(cue|target) = 0.6931 nats >= 0.001"]
        assert sv.splitlines()[-2:] == ["  -> kept", "  items: 25"]
        assert none.startswith("L ADJ NOUN: no candidate arc has this construction")

    def test_parse_construction_accepts_the_papers_spellings(self):
        key = ("R", ("VERB", "NOUN", "CCONJ", "VERB"))
        assert parse_construction("R VERB NOUN CCONJ VERB") == key
        assert parse_construction("R__VERB_NOUN_CCONJ_VERB") == key
        assert parse_construction("R!VERB_NOUN_CCONJ_VERB!Number=Sing!Number=Plur") == key
        with pytest.raises(AgreeError, match="expected a direction"):
            parse_construction("VERB NOUN")


def by_id(result):
    return {it.item_id: it for it in result.items}


class TestItems:
    def test_item_fields(self, result):
        it = by_id(result)["toy:sv-Sing-0:1-6"]  # "the dog that the cats see barks ."
        assert (it.tokens, it.prefix, it.correct, it.wrong, it.lemma, it.number) == (
            ("the", "dog", "that", "the", "cats", "see", "barks", "."),
            ("the", "dog", "that", "the", "cats", "see"), "barks", "bark", "bark", "Sing")
        assert (it.cue_index, it.target_index, it.context_length, it.prefix_length, it.punct) == (1, 6, 4, 6, False)
        assert (it.construction, it.direction, it.variant, it.perturbation) == ("NOUN VERB VERB", "L", 0, "original")
        assert it.pos == ("DET", "NOUN", "PRON", "DET", "NOUN", "VERB", "VERB", "PUNCT")
        assert it.feats[1] == "Number=Sing" and it.feats[6].startswith("Mood=Ind|Number=Sing")

    def test_attractors_use_the_paradigm_readings_with_the_10_percent_rule(self, result):
        items = by_id(result)
        assert items["toy:sv-Sing-0:1-6"].attractors == 1   # dog ... cats
        assert items["toy:sv-Sing-2:1-6"].attractors == 0   # dog ... cat
        assert items["toy:sv-Plur-1:1-6"].attractors == 1   # cats ... fish (Sing)
        assert items["toy:sv-Plur-0:1-6"].attractors == 0   # dogs ... cats
        # fish is annotated plural here, but that reading is 1 of 13 (< 10%): no attractor
        assert items["toy:fish-plural:1-6"].attractors == 0

    def test_dropped_items(self, result):
        ids = by_id(result)
        assert "toy:purrs:1-6" not in ids                    # no plural of "purr"
        assert not [i for i in ids if i.startswith("toy:slept")]  # slept / slept

    def test_items_sorted_and_deterministic(self, toy):
        a = extract_items([toy]).items
        assert a == extract_items([toy]).items
        assert [it.item_id for it in a[:3]] == ["toy:sv-Sing-0:1-6", "toy:sv-Sing-1:1-6", "toy:sv-Sing-2:1-6"]

    def test_vocabulary_filter(self, toy, tmp_path):
        vocab = tmp_path / "vocab.txt"
        words = {"<eos>", "<unk>", "the", "that", "see", "sees", "barks", "bark", "runs", "run", "dog", "dogs",
                 "cat", "cats", "fish", "boy", "boys", "girl", "girls"}  # no sleep/sleeps
        vocab.write_text("\n".join(sorted(words)) + "\n")
        r = extract_items([toy], ExtractConfig(vocab=read_vocab(vocab)))
        assert r.filters["vocab"] == 8 and len(r.items) == 25 - 8
        assert all(set(it.tokens[it.cue_index:it.target_index + 1]) | {it.wrong} <= words for it in r.items)

    def test_several_agreement_features(self, tmp_path):
        path = toy_treebank(tmp_path, gender=True)
        r = extract_items([path], ExtractConfig(features=("Number", "Gender")))
        assert [c.name for c in r.report.kept] == ["L NOUN VERB VERB"]
        it = by_id(r)["toy:sv-Sing-1:1-6"]  # the cat ... sleeps
        assert (it.number, it.correct, it.wrong) == ("Fem,Sing", "sleeps", "sleep")

    def test_unknown_feature_names_the_ones_present(self, toy):
        with pytest.raises(TreebankError) as e:
            extract_items([toy], ExtractConfig(features=("Foo",)))
        assert str(e.value) == (f"{toy}: no token has the feature Foo; features in this treebank: "
                                "Definite, Degree, Mood, Number, Person, PronType, Tense, VerbForm, Voice")

    def test_infer_verb_number_for_old_english_releases(self, tmp_path):
        path = toy_treebank(tmp_path, english_2_0=True)
        plain = extract_items([path])
        assert plain.report.kept == ()
        inferred = extract_items([path], ExtractConfig(infer_verb_number=True))
        assert [c.name for c in inferred.report.kept] == ["L NOUN VERB VERB"]
        assert len(inferred.items) == 25 and by_id(inferred)["toy:sv-Plur-0:1-6"].wrong == "barks"

    def test_alt_exact(self, toy):
        assert extract_items([toy], ExtractConfig(alt="exact")).items == extract_items([toy]).items

    @pytest.mark.parametrize("config, message", [
        (ExtractConfig(alt="fuzzy"), "unknown --alt 'fuzzy' (expected one of: closest, exact)"),
        (ExtractConfig(min_distance=5, max_distance=4), "need 1 <= min distance <= max distance (got 5..4)"),
        (ExtractConfig(min_count=0), "--min-count must be at least 1 (got 0)"),
        (ExtractConfig(explain=("X NOUN VERB",)), "construction 'X NOUN VERB': expected a direction"),
    ])
    def test_bad_configuration(self, toy, config, message):
        with pytest.raises(AgreeError) as e:
            extract_items([toy], config)
        assert as_cli(e.value, "extract").startswith(message)

    def test_parse_features(self):
        assert parse_features("Number|Gender") == ("Gender", "Number")
        with pytest.raises(AgreeError):
            parse_features("|")


class TestColorlessGreen:
    def test_write_then_read_back(self, result, tmp_path):
        write_colorlessgreen(result.items, tmp_path, frequencies={"barks": 7})
        lines = (tmp_path / "generated.text").read_text().splitlines()
        assert lines[0] == "the dog that the cats see barks . <eos>"
        gold = (tmp_path / "generated.gold").read_text().splitlines()[0].split("\t")
        assert gold[:4] == ["L!NOUN_VERB_VERB!Number=Plur!Number=Sing", "0", "0", "6"]
        assert gold[6:11] == ["barks", "bark", "bark", "1", "NOUN"]
        assert (tmp_path / "generated.eval").read_text().splitlines()[:2] == ["6", "6"]
        tab = (tmp_path / "generated.tab").read_text().splitlines()
        assert tab[1].split("\t")[:13] == ["L__NOUN_VERB_VERB", "0", "0", "sing", "barks", "correct", "original",
                                           "the dog that the cats see", "1", "False", "7", "5", "6"]
        back = read_colorlessgreen(tmp_path)
        assert len(back) == len(result.items)
        for ours, theirs in zip(result.items, back):
            assert (theirs.tokens, theirs.correct, theirs.wrong, theirs.lemma, theirs.number, theirs.cue_index,
                    theirs.target_index, theirs.attractors, theirs.punct, theirs.construction, theirs.direction) == (
                ours.tokens, ours.correct, ours.wrong, ours.lemma, ours.number, ours.cue_index,
                ours.target_index, ours.attractors, ours.punct, ours.construction, ours.direction)
            assert theirs.pos[ours.cue_index] == "NOUN" and theirs.feats[ours.target_index] == \
                ours.feats[ours.target_index]

    def test_inconsistent_files(self, result, tmp_path):
        write_colorlessgreen(result.items, tmp_path)
        gold = tmp_path / "generated.gold"
        gold.write_text("\n".join(gold.read_text().splitlines()[:-1]) + "\n")
        with pytest.raises(AgreeError, match=r"row counts disagree \(.text 25, .gold 24, .tab 50"):
            read_colorlessgreen(tmp_path / "generated")
        with pytest.raises(AgreeError, match="no such file"):
            read_colorlessgreen(tmp_path / "nothing")
