"""Nonce variants (nonce/): the candidate index, the vowel rules, make_nonce."""
from __future__ import annotations

import random
from collections import Counter

import pytest

from formats.items import Item
from nonce.errors import NonceError
from nonce.generate import NonceConfig, make_nonce
from nonce.pool import CONTENT_POS, CandidatePool, Choices, PoolOptions, _choices
from nonce.vowels import case_class, initial_class, vowel_rule_on
from treebanks.features import parse_feats
from treebanks.paradigms import ParadigmTable
from conftest import raises_as_cli

N_SG = "Number=Sing"
N_PL = "Number=Plur"
V_SG = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
V_PL = "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin"
V_PAST = "Mood=Ind|Tense=Past|VerbForm=Fin"
ADJ = "Degree=Pos"

# (form, lemma, upos, feats, count): a tiny English treebank's paradigm table
LEXICON = [
    *[(w, w, "NOUN", N_SG, 3) for w in ("dog", "cat", "idea", "owl", "apple", "hat")],
    *[(w + "s", w, "NOUN", N_PL, 3) for w in ("dog", "cat", "idea", "owl", "apple", "hat")],
    ("Dog", "dog", "NOUN", N_SG, 2), ("Cat", "cat", "NOUN", N_SG, 2), ("Owl", "owl", "NOUN", N_SG, 2),
    ("Owls", "owl", "NOUN", N_PL, 2), ("Apples", "apple", "NOUN", N_PL, 2), ("Ideas", "idea", "NOUN", N_PL, 2),
    ("Cats", "cat", "NOUN", N_PL, 2), ("Hats", "hat", "NOUN", N_PL, 2),
    *[(w + "s", w, "VERB", V_SG, 4) for w in ("bark", "run", "eat", "sleep", "sing")],
    *[(w, w, "VERB", V_PL, 4) for w in ("bark", "run", "eat", "sleep", "sing")],
    ("grew", "grow", "VERB", V_PAST, 5), ("slept", "sleep", "VERB", V_PAST, 2),
    ("put", "put", "VERB", V_PAST, 2), ("puts", "put", "VERB", V_SG, 2), ("put", "put", "VERB", V_PL, 2),
    *[(w, w, "ADJ", ADJ, 2) for w in ("big", "red", "old", "odd", "small")],
    *[(w, w, "ADV", "_", 2) for w in ("often", "quickly", "rarely")],
    ("the", "the", "DET", "Definite=Def|PronType=Art", 50), ("The", "the", "DET", "Definite=Def|PronType=Art", 9),
    ("a", "a", "DET", "Definite=Ind|PronType=Art", 20), ("an", "a", "DET", "Definite=Ind|PronType=Art", 5),
    ("that", "that", "PRON", "PronType=Rel", 10), ("with", "with", "ADP", "_", 10), (".", ".", "PUNCT", "_", 30),
    ("lone", "lone", "ADJ", "Degree=Cmp", 2),  # the only Degree=Cmp word: no other candidate
    ("once", "once", "NOUN", N_SG, 1),          # seen once: never a candidate
]


def make_table(rows=LEXICON) -> ParadigmTable:
    table = ParadigmTable()
    for form, lemma, upos, feats, n in rows:
        table.add(form, lemma, upos, feats, n)
    return table


def make_item(item_id, words, cue, target, wrong, lemma, number="Sing"):
    """``words``: (form, upos, feats) triples."""
    forms, pos, feats = zip(*words)
    return Item(item_id=item_id, variant=0, construction="NOUN VERB VERB", direction="L",
                tokens=forms, pos=pos, feats=feats, correct=forms[target], wrong=wrong, lemma=lemma,
                number=number, cue_index=cue, target_index=target, attractors=0, punct=False)


DET_DEF = ("the", "DET", "Definite=Def|PronType=Art")
ITEMS = [
    # The big dog that the cat rarely sings barks .
    make_item("s1:1", [("The", "DET", "Definite=Def|PronType=Art"), ("big", "ADJ", ADJ), ("dog", "NOUN", N_SG),
                       ("that", "PRON", "PronType=Rel"), DET_DEF, ("cat", "NOUN", N_SG), ("rarely", "ADV", "_"),
                       ("sings", "VERB", V_SG), ("barks", "VERB", V_SG), (".", "PUNCT", "_")],
              cue=2, target=8, wrong="bark", lemma="bark"),
    # Owls with an old hat run .
    make_item("s2:0", [("Owls", "NOUN", N_PL), ("with", "ADP", "_"), ("an", "DET", "Definite=Ind|PronType=Art"),
                       ("old", "ADJ", ADJ), ("hat", "NOUN", N_SG), ("lone", "ADJ", "Degree=Cmp"),
                       ("run", "VERB", V_PL), (".", "PUNCT", "_")],
              cue=0, target=6, wrong="runs", lemma="run", number="Plur"),
    # The dog that the cats saw grew . (past tense: no number contrast, no pair)
    make_item("s3:1", [("The", "DET", "Definite=Def|PronType=Art"), ("dog", "NOUN", N_SG),
                       ("that", "PRON", "PronType=Rel"), DET_DEF, ("cats", "NOUN", N_PL), ("grew", "VERB", V_PAST),
                       ("grew", "VERB", V_PAST), (".", "PUNCT", "_")],
              cue=1, target=6, wrong="grows", lemma="grow"),
]


def nonce(items=ITEMS, seed=1, table=None, **config):
    table = table or make_table()
    return make_nonce(items, table, NonceConfig(**{"lang": "en", **config}), random.Random(seed))


def other_number(feats: str) -> str:
    d = parse_feats(feats)
    return {"Sing": "Plur", "Plur": "Sing"}[d["Number"]]


def check_variant(table: ParadigmTable, original: Item, variant: Item) -> None:
    """Every property a nonce variant must have (issue 3)."""
    assert len(variant.tokens) == len(original.tokens)
    assert (variant.pos, variant.feats) == (original.pos, original.feats)
    assert (variant.cue_index, variant.target_index, variant.number) == \
        (original.cue_index, original.target_index, original.number)
    assert variant.perturbation == "nonce" and variant.item_id == original.item_id
    for i, (word, upos, feats) in enumerate(zip(variant.tokens, variant.pos, variant.feats)):
        if upos not in CONTENT_POS and i != variant.target_index:
            assert word == original.tokens[i], f"function word {original.tokens[i]!r} changed"
        elif word != original.tokens[i]:
            assert any(a.upos == upos and a.feats == feats for a, _ in table.analyses(word)), \
                f"{word!r} has no analysis {upos} {feats}"
    t = variant.target_index
    assert variant.tokens[t] == variant.correct and variant.correct != variant.wrong
    assert variant.lemma != original.lemma
    target_analyses = [a for a, _ in table.analyses(variant.correct)
                       if a.upos == variant.pos[t] and a.feats == variant.feats[t]]
    assert variant.lemma in {a.lemma for a in target_analyses}
    # the wrong form: the same lemma and POS, the other number, no other feature contradicting
    # the target's (features absent on one side are allowed: closest-mode alternatives)
    own = parse_feats(variant.feats[t])
    wrong = [parse_feats(a.feats) for a, _ in table.analyses(variant.wrong)
             if a.lemma == variant.lemma and a.upos == variant.pos[t]]
    assert any(f.get("Number") == other_number(variant.feats[t])
               and all(f[k] == v for k, v in own.items() if k in f and k != "Number") for f in wrong), \
        f"{variant.wrong!r} is not the other-number form of {variant.correct!r}"


class TestMakeNonce:
    def test_every_variant_keeps_grammar_and_replaces_meaning(self):
        """Length, POS and features at every position, function words, cue and target
        number, and the wrong form (same lemma, other number) all hold in every variant."""
        table = make_table()
        result = nonce(table=table, n=9)
        originals = {it.item_id: it for it in ITEMS}
        variants = [v for v in result.items if v.variant > 0]
        assert len(variants) == 2 * 9
        for v in variants:
            check_variant(table, originals[v.item_id], v)
        # content words really change: the cue and the context noun take other words
        assert {v.tokens[2] for v in variants if v.item_id == "s1:1"} - {"dog"}

    def test_output_order_and_variant_numbers(self):
        result = nonce(n=3)
        assert [(it.item_id, it.variant) for it in result.items] == \
            [("s1:1", 0), ("s1:1", 1), ("s1:1", 2), ("s1:1", 3),
             ("s2:0", 0), ("s2:0", 1), ("s2:0", 2), ("s2:0", 3), ("s3:1", 0)]
        assert result.items[0] is ITEMS[0]

    def test_target_without_pair_is_kept_as_original_and_counted(self):
        """'grew' has no number contrast: the item stays, without variants, and is counted."""
        result = nonce()
        assert [it.variant for it in result.items if it.item_id == "s3:1"] == [0]
        assert result.targets_no_pair == {"VERB": 1}
        assert result.targets == {"VERB": 3}
        assert (result.originals, result.with_variants, result.variants) == (3, 2, 18)

    def test_position_without_candidate_keeps_word_and_is_counted(self):
        """'lone' is the only Degree=Cmp adjective: it stays in every variant."""
        result = nonce()
        assert all(v.tokens[5] == "lone" for v in result.items if v.item_id == "s2:0")
        assert result.positions_no_candidate == {"ADJ": 1}
        assert result.positions == {"ADJ": 3, "NOUN": 4, "ADV": 1, "VERB": 1}

    def test_capitalisation_and_article_are_respected(self):
        """Sentence-initial 'Owls' gets a capitalised vowel-initial plural noun, 'old'
        (after 'an') a vowel-initial adjective; without the vowel rule, any adjective."""
        result = nonce(n=9)
        s2 = [v for v in result.items if v.item_id == "s2:0" and v.variant]
        assert {v.tokens[0] for v in s2} == {"Apples", "Ideas"}
        assert {v.tokens[3] for v in s2} == {"odd"}
        off = nonce(n=9, vowel_rule="off")
        assert {v.tokens[3] for v in off.items if v.item_id == "s2:0" and v.variant} - {"odd"}

    def test_same_seed_same_variants(self):
        assert nonce(seed=7).items == nonce(seed=7).items

    def test_other_seed_other_variants(self):
        a = [v.tokens for v in nonce(seed=7).items if v.variant]
        b = [v.tokens for v in nonce(seed=8).items if v.variant]
        assert a != b

    def test_item_order_does_not_change_an_items_variants(self):
        forward = {(v.item_id, v.variant): v for v in nonce(seed=3).items}
        backward = {(v.item_id, v.variant): v for v in nonce(items=ITEMS[::-1], seed=3).items}
        assert forward == backward

    def test_variants_in_the_input_are_ignored(self):
        once = nonce(seed=2, n=2)
        again = nonce(items=list(once.items), seed=2, n=2)
        assert again.items == once.items

    def test_vocabulary_restricts_candidates_and_targets(self):
        vocab = frozenset({"dog", "cat", "barks", "big", "rarely", "sings", "sing", "Owls", "Cats",
                           "run", "runs", "old", "odd", "hat", "idea"})
        result = nonce(n=9, vocab=vocab)
        originals = {it.item_id: it for it in ITEMS}
        variants = [v for v in result.items if v.variant]
        assert len(variants) == 18
        for v in variants:
            for i, w in enumerate(v.tokens):
                if v.pos[i] in CONTENT_POS and w != originals[v.item_id].tokens[i]:
                    assert w in vocab
            assert v.correct in vocab and v.wrong in vocab
        # 'bark' is not in the vocabulary, so 'barks'/'bark' is no pair; 'Owls' has no other candidate
        assert {v.correct for v in variants if v.item_id == "s1:1"} == {"sings", "runs"}
        assert {v.correct for v in variants if v.item_id == "s2:0"} == {"sing"}

    def test_malformed_item_is_an_error(self):
        bad = ITEMS[0].replace(pos=ITEMS[0].pos[:-1])
        with pytest.raises(NonceError, match=r"item s1:1: 10 tokens but 9 POS tags"):
            nonce(items=[bad])

    @pytest.mark.parametrize("option,message", [
        ({"n": 0}, "--n must be at least 1"), ({"ambiguity": 1.5}, "--ambiguity must be in"),
        ({"sampling": "zipf"}, "--sampling must be one of"), ({"vowel_rule": "maybe"}, "--vowel-rule must be")])
    def test_bad_options(self, option, message):
        with raises_as_cli(NonceError, "nonce", message):
            NonceConfig(**option)


class TestPool:
    def test_ambiguity_threshold(self):
        """'walk': 19 NOUN, 1 VERB (5% other POS): a noun candidate at 0.1, not at 0."""
        rows = [("walk", "walk", "NOUN", N_SG, 19), ("walk", "walk", "VERB", V_PL, 1),
                ("dog", "dog", "NOUN", N_SG, 2)]
        key = ("NOUN", N_SG, "lower", "")
        loose = CandidatePool(make_table(rows), PoolOptions(ambiguity=0.1))
        strict = CandidatePool(make_table(rows), PoolOptions(ambiguity=0))
        assert loose.candidates(key).values == ("dog", "walk")
        assert strict.candidates(key).values == ("dog",)

    def test_seen_once_and_merged_tokens_are_not_candidates(self):
        rows = [("dog", "dog", "NOUN", N_SG, 1), ("cat", "cat", "NOUN", N_SG, 2),
                ("farlo", "fare+lo", "VERB", "VerbForm=Inf", 5), ("fare", "fare", "VERB", "VerbForm=Inf", 5)]
        pool = CandidatePool(make_table(rows))
        assert pool.candidates(("NOUN", N_SG, "lower", "")).values == ("cat",)
        assert pool.candidates(("VERB", "VerbForm=Inf", "lower", "")).values == ("fare",)

    def test_pairs_have_a_number_contrast_and_are_grouped_by_lemma(self):
        pool = CandidatePool(make_table(), PoolOptions(lang="en", vowel_rule=False))
        sg = pool.pairs(("VERB", V_SG, "lower", ""))
        assert [(p.form, p.alternative) for p in sg.values] == \
            [("barks", "bark"), ("eats", "eat"), ("puts", "put"), ("runs", "run"), ("sings", "sing"),
             ("sleeps", "sleep")]
        assert pool.pairs(("VERB", V_PAST, "lower", "")) is None  # 'grew', 'slept', 'put': no contrast
        assert sg.available("eat") == 5 and sg.available("nothing") == 6

    def test_pairs_differ_in_number_only_and_keep_capitalisation(self):
        """'brings' has no plural present, only 'brought' (plural past), which the closest
        rule does not offer (Tense differs); 'Speaks' has only the lower-case 'speak'. Neither is a pair."""
        rows = [("brings", "bring", "VERB", V_SG, 3), ("brought", "bring", "VERB", V_PL.replace("Pres", "Past"), 3),
                ("Speaks", "speak", "VERB", V_SG, 3), ("speak", "speak", "VERB", V_PL, 3),
                ("sings", "sing", "VERB", V_SG, 3), ("sing", "sing", "VERB", V_PL, 3)]
        pool = CandidatePool(make_table(rows))
        assert pool.alternative("bring", "VERB", V_SG) is None
        assert [p.form for p in pool.pairs(("VERB", V_SG, "lower", "")).values] == ["sings"]
        assert pool.pairs(("VERB", V_SG, "title", "")) is None

    def test_draw_never_returns_the_excluded_group(self):
        c = _choices({"a": 1, "b": 50, "c": 1, "d": 3}, lambda f: f, lambda f: f)
        rng = random.Random(0)
        for weighted in (False, True):
            for ex in "abcd":
                drawn = {c.draw(rng, weighted, ex) for _ in range(300)}
                assert ex not in drawn and len(drawn) == 3
        one = _choices({"a": 4}, lambda f: f, lambda f: f)
        assert one.draw(rng, False, "a") is None and one.draw(rng, True, "a") is None
        assert one.draw(rng, True, "z") == "a"

    def test_frequency_weighting(self):
        """With weights 9:1, frequency sampling picks the frequent word about 90% of the time,
        uniform sampling about half of the time."""
        c = _choices({"rare": 1, "common": 9}, lambda f: f, lambda f: f)
        rng = random.Random(5)
        weighted = Counter(c.draw(rng, True) for _ in range(2000))
        uniform = Counter(c.draw(rng, False) for _ in range(2000))
        assert 0.87 < weighted["common"] / 2000 < 0.93
        assert 0.45 < uniform["common"] / 2000 < 0.55

    def test_choices_is_sorted_whatever_the_insertion_order(self):
        a = _choices({"b": 1, "a": 2}, lambda f: f, lambda f: f)
        b = _choices({"a": 2, "b": 1}, lambda f: f, lambda f: f)
        assert isinstance(a, Choices) and (a.values, a.cum) == (b.values, b.cum) == (("a", "b"), (2, 3))


class TestVowels:
    @pytest.mark.parametrize("word,cls", [
        ("apple", "V"), ("Owl", "V"), ("dog", "C"), ("hour", "V"), ("house", "C"), ("university", "C"),
        ("unimportant", "V"), ("one", "C"), ("onerous", "V"), ("European", "C"), ("2003", "#")])
    def test_english(self, word, cls):
        assert initial_class(word, "en") == cls

    @pytest.mark.parametrize("word,cls", [
        ("amico", "V"), ("hotel", "V"), ("èra", "V"), ("studente", "S"), ("zio", "S"), ("gnomo", "S"),
        ("psicologo", "S"), ("yogurt", "S"), ("sera", "C"), ("cane", "C"), ("Stato", "S")])
    def test_italian(self, word, cls):
        assert initial_class(word, "it_isdt") == cls

    def test_table_and_override(self):
        assert vowel_rule_on("en") and vowel_rule_on("it-IT") and not vowel_rule_on("ru")
        assert not vowel_rule_on(None) and vowel_rule_on("ru", "on") and not vowel_rule_on("it", "off")

    @pytest.mark.parametrize("word,cls", [("dog", "lower"), ("The", "title"), ("NASA", "upper"),
                                          ("A", "title"), ("2003", "none"), ("iPhone", "lower")])
    def test_case_class(self, word, cls):
        assert case_class(word) == cls
