"""Nonce variants that stay grammatical: elision and articles (treebanks/sounds.py and
the initial classes), German adjective endings, verb frames (nonce/frames.py), and the
flag on variants whose scored prefix is the original's."""
from __future__ import annotations

import random

import pytest

from formats.items import Item
from nonce.frames import FrameFilter, frames_of
from nonce.generate import SAME_PREFIX, NonceConfig, make_nonce
from nonce.pool import CandidatePool, PoolOptions
from nonce.vowels import ending_class, initial_class, vowel_rule_on
from treebanks.cache import load_columns
from treebanks.paradigms import ParadigmTable
from treebanks.sounds import Written, is_spelling_variant, render_before

V_SG = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
V_PL = "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin"


class TestRenderBefore:
    @pytest.mark.parametrize("form, following, lang, feats, expected", [
        ("les", "apport", "fr", "", Written("les", True)),          # not "lesapport"
        ("le", "arbres", "fr", "Gender=Masc", Written("l'", False)),
        ("l'", "livre", "fr", "Gender=Masc|Number=Sing", Written("le", True)),
        ("l'", "maison", "fr", "Gender=Fem|Number=Sing", Written("la", True)),
        ("La", "île", "fr", "Gender=Fem", Written("L'", False)),
        ("ce", "arbre", "fr", "", Written("cet", True)),
        ("un", "altra", "it", "Gender=Masc", Written("un", True)),   # not "unaltra"
        ("un'", "casa", "it", "Gender=Fem", Written("una", True)),
        ("una", "isola", "it", "Gender=Fem", Written("un'", False)),
        ("l'", "studente", "it", "Gender=Masc", Written("lo", True)),
        ("l'", "libro", "it", "Gender=Masc", Written("il", True)),
        ("i", "studenti", "it", "", Written("gli", True)),
        ("dell'", "zio", "it", "Gender=Masc", Written("dello", True)),
        ("el", "home", "ca", "", Written("l'", False)),
        ("de", "aigua", "ca", "", Written("d'", False)),
        ("στη", "εικόνα", "el", "", Written("στην", True)),
        ("στην", "χώρα", "el", "", Written("στη", True)),
        ("a", "apple", "en", "", Written("an", True)),
        ("An", "car", "en", "", Written("A", True)),
        ("L\u2019", "livre", "fr", "Gender=Masc", Written("Le", True)),
        ("der", "Mann", "de", "", Written("der", True)),
    ])
    def test_writes_the_form_the_language_writes(self, form, following, lang, feats, expected):
        assert render_before(form, following, lang, feats=feats) == expected

    @pytest.mark.parametrize("form, following, lang, feats", [
        ("l'", "maison", "fr", ""),          # le or la: no Gender to decide
        ("du", "arbre", "fr", ""),           # de l' is two words
        ("le", "homme", "fr", ""),           # mute or aspirated h: spelling does not say
        ("la", "universitat", "ca", ""),     # stress decides
    ])
    def test_says_when_it_cannot_write_it(self, form, following, lang, feats):
        assert render_before(form, following, lang, feats=feats) is None

    def test_languages_without_rules_keep_the_spacing_given(self):
        assert render_before("的", "书", "zh", space_after=False) == Written("的", False)


@pytest.mark.parametrize("form, other, variant", [
    ("muß", "muss", True), ("große", "grosse", True), ("Є", "є", True), ("haven't", "havent", True),
    ("e-mail", "email", True), ("dure", "durent", False), ("is", "is", False), ("gebe", "gibt", False),
])
def test_spelling_variants(form, other, variant):
    assert is_spelling_variant(form, other) is variant


class TestClasses:
    def test_new_languages_have_the_rule(self):
        assert all(vowel_rule_on(code) for code in ("fr", "ca", "el", "it", "en"))
        assert not vowel_rule_on("de")

    @pytest.mark.parametrize("word, lang, cls", [
        ("arbre", "fr", "V"), ("île", "fr", "V"), ("livre", "fr", "C"), ("homme", "fr", "H:homme"),
        ("home", "ca", "V"), ("universitat", "ca", "I"), ("illa", "ca", "I"), ("casa", "ca", "C"),
        ("εικόνα", "el", "N"), ("πόλη", "el", "N"), ("μπάλα", "el", "N"), ("χώρα", "el", "C"),
        ("studente", "it", "S"), ("amico", "it", "V"), ("hour", "en", "V"), ("university", "en", "C"),
    ])
    def test_initial_class(self, word, lang, cls):
        assert initial_class(word, lang) == cls

    def test_german_adjective_endings(self):
        assert [ending_class(w, "ADJ", "de") for w in ("richtiger", "richtige", "guten", "gut")] == \
            ["er", "e", "en", "-"]
        assert ending_class("Minister", "NOUN", "de") == "" and ending_class("gute", "ADJ", "fr") == ""

    def test_a_french_noun_is_replaced_by_one_of_its_class(self):
        f = "Gender=Masc|Number=Sing"
        table = ParadigmTable()
        for w in ("arbre", "avion", "homme", "hasard", "livre", "bateau"):
            table.add(w, w, "NOUN", f, 3)
        pool = CandidatePool(table, NonceConfig(lang="fr").pool_options())
        assert pool.candidates(pool.key("arbre", "NOUN", f)).values == ("arbre", "avion")
        assert pool.candidates(pool.key("livre", "NOUN", f)).values == ("bateau", "livre")
        assert pool.candidates(pool.key("homme", "NOUN", f)).available("homme") == 0

    def test_a_noun_without_gender_fits_the_article_before_it(self):
        """Spanish *la base* annotated Number=Sing: never *la cabo*; an epicene (no
        gendered analysis at all) fits either article."""
        table = ParadigmTable()
        for form, feats in [("base", "Number=Sing"), ("base", "Gender=Fem|Number=Sing"), ("cabo", "Number=Sing"),
                            ("cabo", "Gender=Masc|Number=Sing"), ("capital", "Number=Sing"),
                            ("capital", "Gender=Fem|Number=Sing"), ("cliente", "Number=Sing"),
                            ("casa", "Gender=Fem|Number=Sing"), ("mesa", "Gender=Fem|Number=Sing")]:
            table.add(form, form, "NOUN", feats, 3)
        for form, lemma in [("casas", "casa"), ("mesas", "mesa")]:
            table.add(form, lemma, "NOUN", "Gender=Fem|Number=Plur", 3)
        table.add("la", "el", "DET", "Definite=Def|Gender=Fem|Number=Sing|PronType=Art", 9)
        item = Item(item_id="s:1", variant=0, construction="x", direction="L", tokens=("la", "base", "casa"),
                    pos=("DET", "NOUN", "NOUN"), feats=("Definite=Def|Gender=Fem|Number=Sing|PronType=Art",
                                                        "Number=Sing", "Gender=Fem|Number=Sing"),
                    correct="casa", wrong="casas", lemma="casa", number="Sing", cue_index=1, target_index=2,
                    attractors=0, punct=False)
        result = make_nonce([item], table, NonceConfig(n=9, lang="es"), random.Random(1))
        assert {v.tokens[1] for v in result.items[1:]} == {"capital", "cliente"}
        pool = CandidatePool(table, PoolOptions(lang="es"))
        key = pool.key("base", "NOUN", "Number=Sing")
        assert pool.gender_fits(pool.candidates(key), key, "Masc").values == ("cabo", "cliente")

    def test_a_german_adjective_keeps_its_ending(self):
        f = "Case=Nom|Degree=Pos|Gender=Masc|Number=Sing"
        table = ParadigmTable()
        for w in ("richtig", "gut", "klein"):
            table.add(w + "er", w, "ADJ", f, 3)
            table.add(w + "e", w, "ADJ", f, 3)
        pool = CandidatePool(table, PoolOptions(lang="de"))
        assert pool.candidates(pool.key("richtiger", "ADJ", f)).values == ("guter", "kleiner", "richtiger")
        assert pool.candidates(pool.key("gute", "ADJ", f)).values == ("gute", "kleine", "richtige")


# a tiny treebank: sleep and run take no object, eat and see one
_SENTENCES = [("dog", "sleeps", None), ("dogs", "sleep", None), ("cat", "runs", None), ("cats", "run", None),
              ("cat", "eats", "food"), ("cats", "eat", "food"), ("dog", "sees", "food"), ("dogs", "see", "food"),
              ("it", "sleeps", None)]
_LEMMA = {"sleeps": "sleep", "sleep": "sleep", "runs": "run", "run": "run", "eats": "eat", "eat": "eat",
          "sees": "see", "see": "see", "dogs": "dog", "cats": "cat"}


def _conllu() -> str:
    out = []
    for k in range(2):
        for j, (subj, verb, obj) in enumerate(_SENTENCES):
            plural = verb in ("sleep", "run", "eat", "see")
            subj_row = (f"1\t{subj}\tit\tPRON\t_\tNumber=Sing\t2\tnsubj\t_\t_" if subj == "it" else
                        f"1\t{subj}\t{_LEMMA.get(subj, subj)}\tNOUN\t_\tNumber={'Plur' if plural else 'Sing'}"
                        f"\t2\tnsubj\t_\t_")
            rows = [subj_row, f"2\t{verb}\t{_LEMMA[verb]}\tVERB\t_\t{V_PL if plural else V_SG}\t0\troot\t_\t_"]
            if obj:
                rows.append(f"3\t{obj}\t{obj}\tNOUN\t_\tNumber=Sing\t2\tobj\t_\t_")
            rows.append(f"{len(rows) + 1}\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_")
            out.append(f"# sent_id = s{k}-{j}\n" + "\n".join(rows) + "\n")
    return "\n".join(out) + "\n"


@pytest.fixture()
def treebank(tmp_path):
    path = tmp_path / "xx_tb-ud-train.conllu"
    path.write_text(_conllu(), encoding="utf-8")
    tb, _ = load_columns([path], workers=1)
    return tb


def _item(sent: str, tokens, pos, feats) -> Item:
    return Item(item_id=f"xx_tb-ud-train:{sent}:0-1:Number", variant=0, construction="subj-verb Number",
                direction="_", tokens=tokens, pos=pos, feats=feats, correct=tokens[1],
                wrong={"sleeps": "sleep"}[tokens[1]], lemma="sleep", number="Sing", cue_index=0, target_index=1,
                attractors=0, punct=False, relation="subj-verb", feature="Number", wrong_value="Plur",
                scoring="target")


DOG_SLEEPS = _item("s0-0", ("dog", "sleeps", "."), ("NOUN", "VERB", "PUNCT"), ("Number=Sing", V_SG, "_"))
IT_SLEEPS = _item("s0-8", ("it", "sleeps", "."), ("PRON", "VERB", "PUNCT"), ("Number=Sing", V_SG, "_"))


def _stem(path) -> str:
    return str(path).rsplit("/", 1)[-1].removesuffix(".conllu")


class TestFrames:
    def test_usual_frames_and_item_frames(self, treebank):
        frames = frames_of(treebank, [DOG_SLEEPS], _stem)
        assert frames.counts[("sleep", "VERB", "Fin|")] == {"": 6} and frames.counts[("eat", "VERB", "Fin|")] == {"obj": 4}
        assert frames.of_item(DOG_SLEEPS).sigs == ("", "", "")
        assert frames.fits("eat", "VERB", "Fin|", "obj") and not frames.fits("eat", "VERB", "Fin|", "")

    def test_an_intransitive_verb_gets_only_intransitive_pairs(self, treebank):
        table = ParadigmTable(treebank.analyses())
        config = NonceConfig(n=6, lang="xx")
        loose = make_nonce([DOG_SLEEPS], table, config, random.Random(1))
        assert {v.correct for v in loose.items[1:]} == {"runs", "eats", "sees"}
        frames = frames_of(treebank, [DOG_SLEEPS], _stem)
        strict = make_nonce([DOG_SLEEPS], table, config, random.Random(1), frames=frames)
        assert {v.correct for v in strict.items[1:]} == {"runs"}
        assert strict.counts()["frames"]["positions_no_frame"] == 0 and strict.counts()["frames"]["targets_no_frame"] == 0

    def test_the_filter_keeps_the_order_and_weights(self, treebank):
        table = ParadigmTable(treebank.analyses())
        pool = CandidatePool(table, PoolOptions())
        frames = frames_of(treebank, [], _stem)
        key = pool.key("sees", "VERB", V_SG)
        narrowed = FrameFilter(frames, pool).words(pool.candidates(key), key, "obj")
        assert narrowed.values == ("eats", "sees") and narrowed.cum == (2, 4)


class TestSamePrefix:
    def test_a_variant_that_repeats_the_scored_prefix_is_flagged(self, treebank):
        table = ParadigmTable(treebank.analyses())
        result = make_nonce([IT_SLEEPS, DOG_SLEEPS], table, NonceConfig(n=3, lang="xx"), random.Random(1))
        flagged = [v for v in result.items if v.item_id == IT_SLEEPS.item_id and v.variant]
        assert [v.perturbation for v in flagged] == [SAME_PREFIX] * 3
        assert all(v.perturbation == "nonce" for v in result.items if v.item_id == DOG_SLEEPS.item_id and v.variant)
        assert (result.same_prefix, result.variants, result.with_variants) == (3, 3, 1)
        assert result.counts()["same_prefix"] == 3

    def test_sentence_scored_items_are_not_flagged(self, treebank):
        table = ParadigmTable(treebank.analyses())
        item = IT_SLEEPS.replace(scoring="sentence")
        result = make_nonce([item], table, NonceConfig(n=2, lang="xx"), random.Random(1))
        assert [v.perturbation for v in result.items[1:]] == ["nonce", "nonce"] and result.same_prefix == 0


def test_an_elided_word_is_replaced_only_by_an_elided_word():
    """Italian anch' (glued to the next word) never takes espressamente, which would glue
    espressamenteesse; a full adverb never takes anch'."""
    from treebanks.paradigms import Analysis
    table = ParadigmTable({Analysis(f, f.rstrip("'"), "ADV", "_"): 5
                           for f in ("anch'", "quand'", "espressamente", "solamente")})
    pool = CandidatePool(table, PoolOptions(lang="it"))
    elided, full = pool.key("anch'", "ADV", "_"), pool.key("espressamente", "ADV", "_")
    assert elided != full
    assert sorted(pool.candidates(elided).values) == ["anch'", "quand'"]
    assert sorted(pool.candidates(full).values) == ["espressamente", "solamente"]


def test_a_nonce_pair_takes_its_cells_main_form_and_no_spelling_variant():
    """German muß (old spelling of 3sg muss) never pairs with muss, and Dutch kun (2sg, which
    Alpino does not tell from 3sg kan) is no target beside kan."""
    from treebanks.paradigms import Analysis
    sg, pl = "Number=Sing|Tense=Pres|VerbForm=Fin", "Number=Plur|Tense=Pres|VerbForm=Fin"
    table = ParadigmTable({Analysis("kan", "kunnen", "VERB", sg): 40, Analysis("kun", "kunnen", "VERB", sg): 6,
                           Analysis("kunnen", "kunnen", "VERB", pl): 30,
                           Analysis("wil", "willen", "VERB", sg): 20, Analysis("willen", "willen", "VERB", pl): 10})
    pool = CandidatePool(table, PoolOptions(lang="nl", features=("Number",)))
    pairs = pool.pairs(pool.key("kan", "VERB", sg))
    assert {p.form for p in pairs.values} == {"kan", "wil"}
    third = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
    de = ParadigmTable({Analysis("muß", "müssen", "VERB", third): 9,
                        Analysis("muss", "müssen", "VERB", third.replace("Person=3", "Person=1")): 4})
    pool = CandidatePool(de, PoolOptions(lang="de", features=("Person",), values=("1", "2", "3")))
    assert pool.alternative("müssen", "VERB", third) == "muss"   # the other cell exists...
    assert pool.pairs(pool.key("muß", "VERB", third)) is None    # ...but only as a spelling of this one
