"""A replaced word fits its sentence (nonce/frames.py): its frame with the markers of its
dependents, the features the words agreeing with it impose, the harmony of a clitic
after it; and the target pair rules of relation items (an auxiliary keeps its own pair,
a German article before an adjective too, a wrong form that is also the right one is
no pair)."""
from __future__ import annotations

import random

import pytest

from formats.items import Item
from nonce.fit import harmony_fits, main_only, needs_fit, unambiguous
from nonce.frames import CONFLICT, Context, Frames, frames_of
from nonce.generate import NonceConfig, make_nonce
from nonce.pool import CandidatePool, PoolOptions
from treebanks.cache import load_columns
from treebanks.paradigms import Analysis, ParadigmTable
from treebanks.sounds import harmonises, harmony_class

FIN = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
INF = "VerbForm=Inf"

# Italian-like: cominciare takes a + infinitive, volere a bare one; arrivare is never passive
_IT = """# sent_id = a1
1\tLei\tlei\tPRON\t_\tGender=Fem|Number=Sing\t2\tnsubj\t_\t_
2\tcomincia\tcominciare\tVERB\t_\t{fin}\t0\troot\t_\t_
3\ta\ta\tADP\t_\t_\t4\tmark\t_\t_
4\tstudiare\tstudiare\tVERB\t_\t{inf}\t2\txcomp\t_\t_

# sent_id = a2
1\tLei\tlei\tPRON\t_\tGender=Fem|Number=Sing\t2\tnsubj\t_\t_
2\tvuole\tvolere\tVERB\t_\t{fin}\t0\troot\t_\t_
3\tstudiare\tstudiare\tVERB\t_\t{inf}\t2\txcomp\t_\t_

# sent_id = a3
1\tLa\til\tDET\t_\tGender=Fem|Number=Sing\t2\tdet\t_\t_
2\tlegge\tlegge\tNOUN\t_\tNumber=Sing\t4\tnsubj:pass\t_\t_
3\tè\tessere\tAUX\t_\t_\t4\taux:pass\t_\t_
4\tapprovata\tapprovare\tVERB\t_\tGender=Fem|Number=Sing|VerbForm=Part\t0\troot\t_\t_

# sent_id = a4
1\tLei\tlei\tPRON\t_\tGender=Fem|Number=Sing\t3\tnsubj\t_\t_
2\tè\tessere\tAUX\t_\t_\t3\taux\t_\t_
3\tarrivata\tarrivare\tVERB\t_\tGender=Fem|Number=Sing|VerbForm=Part\t0\troot\t_\t_

# sent_id = a5
1\tIl\til\tDET\t_\tGender=Masc|Number=Sing\t2\tdet\t_\t_
2\tSenato\tsenato\tNOUN\t_\tNumber=Sing\t0\troot\t_\t_
3\t,\t,\tPUNCT\t_\t_\t5\tpunct\t_\t_
4\tche\tche\tPRON\t_\tGender=Masc|PronType=Rel\t5\tnsubj\t_\t_
5\tvota\tvotare\tVERB\t_\t{fin}\t2\tacl:relcl\t_\t_
6\tla\til\tDET\t_\tGender=Fem|Number=Sing\t7\tdet\t_\t_
7\tlegge\tlegge\tNOUN\t_\tGender=Masc|Number=Sing\t5\tobj\t_\t_

""".format(fin=FIN, inf=INF)


@pytest.fixture()
def it_treebank(tmp_path):
    path = tmp_path / "it_x-ud-test.conllu"
    path.write_text(_IT, encoding="utf-8")
    tb, _ = load_columns([path], workers=1)
    return tb


def _stem(path) -> str:
    return str(path).rsplit("/", 1)[-1].removesuffix(".conllu")


def _item(sent: str, tokens, pos, feats, *, cue=0, target=1, lemma="x", correct=None, wrong="y",
          relation="subj-verb", feature="Number", wrong_value="Plur") -> Item:
    return Item(item_id=f"it_x-ud-test:{sent}:{cue}-{target}:{feature}", variant=0,
                construction=f"{relation} {feature}", direction="_", tokens=tuple(tokens), pos=tuple(pos),
                feats=tuple(feats), correct=correct or tokens[target], wrong=wrong, lemma=lemma, number="Sing",
                cue_index=cue, target_index=target, attractors=0, punct=False, relation=relation, feature=feature,
                wrong_value=wrong_value, scoring="target")


class TestFrame:
    def test_a_complement_keeps_its_marker_and_form(self, it_treebank):
        item = _item("a1", ("Lei", "comincia", "a", "studiare"), ("PRON", "VERB", "ADP", "VERB"),
                     ("Gender=Fem|Number=Sing", FIN, "_", INF), lemma="cominciare")
        frames = frames_of(it_treebank, [item], _stem)
        sig = frames.of_item(item).sigs[1]
        assert sig == "xcomp:a:Inf"
        assert frames.fits("cominciare", "VERB", "Fin|", sig)
        assert not frames.fits("volere", "VERB", "Fin|", sig)   # never *vuole a studiare*

    def test_a_passive_participle_takes_only_a_verb_seen_in_the_passive(self, it_treebank):
        item = _item("a3", ("La", "legge", "è", "approvata"), ("DET", "NOUN", "AUX", "VERB"),
                     ("Gender=Fem|Number=Sing", "Number=Sing", "_", "Gender=Fem|Number=Sing|VerbForm=Part"),
                     cue=1, target=3, relation="subj-pred", feature="Gender", wrong_value="Masc")
        frames = frames_of(it_treebank, [item], _stem)
        sig = frames.of_item(item).sigs[3]
        assert sig == "pass"
        assert frames.fits("approvare", "VERB", "Part|", sig)
        assert not frames.fits("arrivare", "VERB", "Part|", sig)   # never *è stato arrivato*


class TestAgreement:
    def test_a_noun_without_gender_takes_it_from_its_determiner_and_relative_pronoun(self, it_treebank):
        item = _item("a5", ("Il", "Senato", ",", "che", "vota", "la", "legge"),
                     ("DET", "NOUN", "PUNCT", "PRON", "VERB", "DET", "NOUN"),
                     ("Gender=Masc|Number=Sing", "Number=Sing", "_", "Gender=Masc|PronType=Rel", FIN,
                      "Gender=Fem|Number=Sing", "Gender=Masc|Number=Sing"), cue=1, target=4)
        ctx = frames_of(it_treebank, [item], _stem).of_item(item)
        assert ctx.needs[1] == (("Gender", "Masc"),)
        assert ctx.needs[6] == ()   # its own Gender: the features of its key decide

    def test_candidates_must_have_that_gender_and_no_other(self):
        table = ParadigmTable({Analysis("Senato", "Senato", "NOUN", "Number=Sing"): 3,
                               Analysis("Governo", "Governo", "NOUN", "Number=Sing"): 3,
                               Analysis("Governo", "Governo", "NOUN", "Gender=Masc|Number=Sing"): 3,
                               Analysis("Camera", "Camera", "NOUN", "Number=Sing"): 3,
                               Analysis("Camera", "Camera", "NOUN", "Gender=Fem|Number=Sing"): 3,
                               Analysis("Corte", "Corte", "NOUN", "Gender=Fem,Masc|Number=Sing"): 3})
        pool = CandidatePool(table, PoolOptions(lang="it"))
        key = pool.key("Senato", "NOUN", "Number=Sing")
        assert needs_fit(pool, pool.candidates(key), key, (("Gender", "Masc"),)).values == ("Governo",)

    def test_agreeing_words_that_disagree_keep_the_word(self):
        pl = FIN.replace("Sing", "Plur")
        table = ParadigmTable({**{Analysis(w, w, "NOUN", "Number=Sing"): 3 for w in ("cosa", "casa")},
                               Analysis("va", "andare", "VERB", FIN): 3, Analysis("vanno", "andare", "VERB", pl): 3,
                               Analysis("corre", "correre", "VERB", FIN): 3,
                               Analysis("corrono", "correre", "VERB", pl): 3})
        item = _item("z", ("cosa", "va"), ("NOUN", "VERB"), ("Number=Sing", FIN), lemma="andare", wrong="vanno")
        frames = Frames({("correre", "VERB", "Fin|"): {"": 3}},
                        {item.item_id: Context(("", ""), (CONFLICT, ()), (False, False))})
        result = make_nonce([item], table, NonceConfig(n=2, lang="it"), random.Random(1), frames=frames)
        assert result.positions_no_agreement == 1 and all(v.tokens[0] == "cosa" for v in result.items)


class TestHarmony:
    @pytest.mark.parametrize("word, cls", [("Kıbrıs'ta", "a"), ("İzmir'de", "e"), ("kitap", "at"),
                                           ("göz", "ö"), ("okul", "o")])
    def test_turkish_harmony_classes(self, word, cls):
        assert harmony_class(word, "tr") == cls

    def test_only_harmonising_languages_and_words(self):
        assert harmony_class("Kassel", "de") == ""
        assert harmonises("da", "tr") and harmonises("misin", "tr", lemma="mi") and harmonises("'ta", "tr")
        assert not harmonises("ev", "tr") and not harmonises("da", "de")

    def test_a_word_before_a_clitic_keeps_its_harmony(self):
        f = "Case=Loc|Number=Sing"
        table = ParadigmTable({Analysis(w, w.split("'")[0], "PROPN", f): 3
                               for w in ("Kıbrıs'ta", "Ankara'da", "İzmir'de", "Berlin'de")})
        item = _item("k", ("Kıbrıs'ta", "da", "kalıyor"), ("PROPN", "CCONJ", "VERB"), (f, "_", FIN),
                     cue=0, target=2)
        frames = Frames({}, {item.item_id: Context(("", "", ""), ((), (), ()), (True, False, False))})
        pool = CandidatePool(table, PoolOptions(lang="tr"))
        key = pool.key("Kıbrıs'ta", "PROPN", f)
        assert harmony_fits(pool, pool.candidates(key), key, "a").values == ("Ankara'da", "Kıbrıs'ta")
        result = make_nonce([item], table, NonceConfig(n=4, lang="tr"), random.Random(1), frames=frames,
                            pool=pool)
        assert {v.tokens[0] for v in result.items} <= {"Kıbrıs'ta", "Ankara'da"}


class TestCueAndForms:
    @pytest.mark.parametrize("rows, cue, feats, other", [
        ((("práce", "práce", "Number=Plur"), ("práce", "práce", "Number=Sing"), ("ženy", "žena", "Number=Plur")),
         "ženy", "Number=Plur", "Sing"),
        # a capitalised cue is read as its lower-case form
        ((("Množství", "množství", "Number=Sing"), ("množství", "množství", "Number=Plur"),
          ("Žena", "žena", "Number=Sing")), "Žena", "Number=Sing", "Plur"),
    ], ids=["wrong-value-analysis", "capitalised-cue"])
    def test_a_cue_replacement_has_no_analysis_with_the_wrong_value(self, rows, cue, feats, other):
        table = ParadigmTable({Analysis(form, lemma, "NOUN", f): 3 for form, lemma, f in rows})
        pool = CandidatePool(table, PoolOptions(lang="cs"))
        key = pool.key(cue, "NOUN", feats)
        assert unambiguous(pool, pool.candidates(key), key, "Number", other).values == (cue,)

    def test_only_a_cells_main_form_replaces_a_word(self):
        sg = "Number=Sing|Tense=Pres|VerbForm=Fin"
        table = ParadigmTable({Analysis("is", "zijn", "VERB", sg): 40, Analysis("bent", "zijn", "VERB", sg): 6,
                               Analysis("loopt", "lopen", "VERB", sg): 9})
        pool = CandidatePool(table, PoolOptions(lang="nl"))
        key = pool.key("loopt", "VERB", sg)
        assert main_only(pool, pool.candidates(key), key).values == ("is", "loopt")


def _context(n: int) -> Context:
    return Context(("",) * n, ((),) * n, (False,) * n)


class TestTargets:
    def test_an_auxiliary_target_keeps_its_own_pair(self):
        table = ParadigmTable({Analysis("es", "ser", "AUX", FIN): 5, Analysis("son", "ser", "AUX", FIN.replace("Sing", "Plur")): 5,
                               Analysis("ha", "haber", "AUX", FIN): 5,
                               Analysis("han", "haber", "AUX", FIN.replace("Sing", "Plur")): 5,
                               Analysis("tipo", "tipo", "NOUN", "Number=Sing"): 5,
                               Analysis("gato", "gato", "NOUN", "Number=Sing"): 5})
        item = _item("e", ("tipo", "es"), ("NOUN", "AUX"), ("Number=Sing", FIN), lemma="ser", wrong="son")
        frames = Frames({}, {item.item_id: _context(2)})
        result = make_nonce([item], table, NonceConfig(n=3, lang="es"), random.Random(1), frames=frames)
        assert {(v.correct, v.wrong) for v in result.items} == {("es", "son")}   # never *ha el que*
        assert {v.tokens[0] for v in result.items[1:]} == {"gato"}

    def test_a_german_article_before_an_adjective_keeps_its_own_pair(self):
        m, f = "Case=Nom|Definite=Def|Gender=Masc|Number=Sing", "Case=Nom|Definite=Def|Gender=Fem|Number=Sing"
        table = ParadigmTable({Analysis("der", "der", "DET", m): 9, Analysis("die", "der", "DET", f): 9,
                               Analysis("ein", "ein", "DET", m): 9, Analysis("eine", "ein", "DET", f): 9})
        item = _item("d", ("der", "richtige", "Minister"), ("DET", "ADJ", "NOUN"), (m, "_", "Gender=Masc"),
                     cue=2, target=0, lemma="der", wrong="die", relation="det-noun", feature="Gender",
                     wrong_value="Fem")
        frames = Frames({}, {item.item_id: _context(3)})
        result = make_nonce([item], table, NonceConfig(n=2, lang="de"), random.Random(1), frames=frames)
        assert result.targets_before_adjective == 1 and {v.correct for v in result.items} == {"der"}

    def test_a_pair_whose_wrong_form_is_also_the_right_one_is_not_drawn(self):
        ind3, ind2 = FIN, FIN.replace("Person=3", "Person=2")
        sub3 = ind3.replace("Mood=Ind", "Mood=Sub")
        table = ParadigmTable({Analysis("applica", "applicare", "VERB", ind3): 5,
                               Analysis("applichi", "applicare", "VERB", ind2): 5,
                               Analysis("applichi", "applicare", "VERB", sub3): 5,
                               Analysis("canta", "cantare", "VERB", ind3): 5,
                               Analysis("canti", "cantare", "VERB", ind2): 5,
                               Analysis("parla", "parlare", "VERB", ind3): 5,
                               Analysis("parli", "parlare", "VERB", ind2): 5})
        item = _item("p", ("essa", "parla"), ("PRON", "VERB"), ("Number=Sing|Person=3", ind3), lemma="parlare",
                     wrong="parli", feature="Person", wrong_value="2")
        frames = Frames({("applicare", "VERB", "Fin|"): {"": 5}, ("cantare", "VERB", "Fin|"): {"": 5},
                         ("parlare", "VERB", "Fin|"): {"": 5}}, {item.item_id: _context(2)})
        result = make_nonce([item], table, NonceConfig(n=4, lang="it", features=("Person",), values=("1", "2", "3")),
                            random.Random(1), frames=frames)
        assert {v.correct for v in result.items[1:]} == {"canta"}   # never essa applica / *applichi


class TestSecondRound:
    def test_a_target_without_an_object_takes_only_a_mostly_intransitive_lemma(self):
        frames = Frames({("vermek", "VERB", "Fin|"): {"": 6, "obj": 4}, ("uyumak", "VERB", "Fin|"): {"": 9, "obj": 1}})
        assert not frames.fits("vermek", "VERB", "Fin|", "", usual_only=True)   # *öyküler veriyorum*
        assert frames.fits("uyumak", "VERB", "Fin|", "", usual_only=True)
        assert frames.fits("vermek", "VERB", "Fin|", "")   # a word that is not the target may

    def test_a_participle_without_tense_keeps_present_or_past(self):
        from nonce.fit import fitting
        from nonce.frames import FrameFilter
        part = "VerbForm=Part"
        table = ParadigmTable({Analysis(f, lemma, "VERB", part): 3 for f, lemma in
                               (("verdwenen", "verdwijnen"), ("gebleven", "blijven"), ("vloeiend", "vloeien"))})
        pool = CandidatePool(table, PoolOptions(lang="nl"))
        frames = Frames({(lemma, "VERB", "Part|"): {"": 3} for lemma in ("verdwijnen", "blijven", "vloeien")})
        item = _item("n", ("het", "is", "verdwenen"), ("PRON", "AUX", "VERB"), ("_", FIN, part), target=1)
        key = pool.key("verdwenen", "VERB", part)

        class Tally:
            no_frame = no_candidate_main = 0
        got = fitting(item, 2, pool.candidates(key), key, pool, FrameFilter(frames, pool), _context(3), Tally())
        assert got.values == ("gebleven", "verdwenen")   # never *is vloeiend*


_NL = """# sent_id = r1
1\tSport\tsport\tNOUN\t_\tNumber=Sing\t4\tnsubj\t_\t_
2\tis\tzijn\tAUX\t_\t{fin}\t4\tcop\t_\t_
3\thet\thet\tDET\t_\t_\t4\tdet\t_\t_
4\tdecor\tdecor\tNOUN\t_\tNumber=Sing\t0\troot\t_\t_
5\twaarin\twaarin\tADV\t_\t_\t7\tadvmod\t_\t_
6\tdramatiek\tdramatiek\tNOUN\t_\tNumber=Sing\t7\tnsubj\t_\t_
7\tgedijt\tgedijen\tVERB\t_\t{fin}\t4\tacl:relcl\t_\t_

""".format(fin=FIN)


class TestThirdRound:
    def test_an_adverb_opening_a_relative_clause_keeps_its_form(self, tmp_path):
        path = tmp_path / "it_x-ud-test.conllu"
        path.write_text(_NL, encoding="utf-8")
        tb, _ = load_columns([path], workers=1)
        item = _item("r1", ("Sport", "is", "het", "decor", "waarin", "dramatiek", "gedijt"),
                     ("NOUN", "AUX", "DET", "NOUN", "ADV", "NOUN", "VERB"),
                     ("Number=Sing", FIN, "_", "Number=Sing", "_", "Number=Sing", FIN), cue=5, target=6)
        ctx = frames_of(tb, [item], _stem).of_item(item)
        assert ctx.needs[4] == CONFLICT and ctx.needs[5] != CONFLICT   # never *het decor genoeg dramatiek gedijt*

    def test_a_subject_cue_takes_no_word_that_is_also_another_case(self):
        from nonce.fit import one_case
        nom = "Case=Nom|Number=Sing"
        table = ParadigmTable({Analysis("suyu", "su", "NOUN", nom): 3, Analysis("suyu", "su", "NOUN", "Case=Acc|Number=Sing"): 3,
                               Analysis("reklam", "reklam", "NOUN", nom): 3})
        pool = CandidatePool(table, PoolOptions(lang="tr"))
        key = pool.key("reklam", "NOUN", nom)
        assert one_case(pool, pool.candidates(key), key, "Nom").values == ("reklam",)   # never *suyu dedim*


_HI = """# sent_id = h1
1\tबात\tबात\tNOUN\t_\tGender=Fem|Number=Sing\t3\tnmod\t_\t_
2\tकी\tका\tADP\t_\tGender=Fem|Number=Sing\t1\tcase\t_\t_
3\tविरासत\tविरासत\tNOUN\t_\tNumber=Sing\t0\troot\t_\t_

"""


def test_a_noun_takes_its_gender_from_the_genitive_postposition_of_its_possessor(tmp_path):
    path = tmp_path / "it_x-ud-test.conllu"
    path.write_text(_HI, encoding="utf-8")
    tb, _ = load_columns([path], workers=1)
    item = _item("h1", ("बात", "की", "विरासत"), ("NOUN", "ADP", "NOUN"),
                 ("Gender=Fem|Number=Sing", "Gender=Fem|Number=Sing", "Number=Sing"), cue=0, target=1)
    assert frames_of(tb, [item], _stem).of_item(item).needs[2] == (("Gender", "Fem"),)   # never *की प्रस्ताव*


def test_a_light_verb_noun_counts_as_an_object():
    """Turkish yapmak mostly takes a noun as compound:lvc (açıklama yap-): korkuyor never becomes yapıyor."""
    frames = Frames({("yap", "VERB", "Fin|"): {"": 5, "compound:lvc:açıklama": 4, "obj:a": 1}})
    assert not frames.fits("yap", "VERB", "Fin|", "", usual_only=True)
