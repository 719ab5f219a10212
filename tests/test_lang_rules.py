"""lm.corpus.lang_rules and lm.corpus.treebank_tokens: each language's rules cut
sentences of its own UD treebank as the treebank does, and every shared treebank's
tokens are reproduced as docs/corpora.md claims."""
from __future__ import annotations

import gzip
import textwrap
from pathlib import Path

import pytest

from conftest import run_agree, shared_path
from test_corpus import dump_xml, page
from lm.corpus.lang_rules import GENERIC, RULES, LangRules, rules_for
from lm.corpus.tokenize import KNOWN_LANGS, Tokenizer, get_tokenizer, lang_warning, sentences, tokenize
from lm.corpus.treebank_tokens import agreement, gold_sentences
from treebanks.reader import read_treebanks


def cut(text: str, lang: str) -> str:
    return " | ".join(tokenize(text, lang))


# Sentences and their tokens as the language's treebank has them (file:line of the
# sentence in ../shared/data/ud).
@pytest.mark.parametrize("lang, text, expected", [
    # br_keb-ud-test.conllu.gz:403, 1609, 189, 588, 1253, 5478
    ("br", "N'eo ket bet lazhet.", "N' | eo | ket | bet | lazhet | ."),
    ("br", "Kenaozet e vo an degouezh er bloaz-mañ gant Park an Arvorig.",
     "Kenaozet | e | vo | an | degouezh | er | bloaz | -mañ | gant | Park | an | Arvorig | ."),
    ("br", "Londrez eo kêr-benn Bro-Saoz.", "Londrez | eo | kêr-benn | Bro-Saoz | ."),
    ("br", "Ret e vo dibab goude-se.", "Ret | e | vo | dibab | goude-se | ."),
    ("br", "mab d'un den gwenn ha d'ur plac'h du, e tizho an istor-mañ",
     "mab | d' | un | den | gwenn | ha | d' | ur | plac'h | du | , | e | tizho | an | istor | -mañ"),
    ("br", "Ar Vretoned 'zo tud kalet ha kreñv.", "Ar | Vretoned | 'zo | tud | kalet | ha | kreñv | ."),
    # br_keb-ud-test.conllu.gz:1831 (d'ar: da + ar, one surface token)
    ("br", "e Kemper d'ar mare-mañ.", "e | Kemper | d'ar | mare | -mañ | ."),
    # gd_arcosg-ud-dev.conllu.gz:76, 135, 2688
    ("gd", "slaod a-steach do shèithear ceart faisg air a’ bhòrd",
     "slaod | a-steach | do | shèithear | ceart | faisg | air | a’ | bhòrd"),
    ("gd", "‘s an robh a h-uile duine eile air na trì duilleagan a dhèanamh?",
     "‘s | an | robh | a | h-uile | duine | eile | air | na | trì | duilleagan | a | dhèanamh | ?"),
    ("gd", "is sheall e, 's e 'sgrùdadh an àite anns na dh’fhàg a bhrògan",
     "is | sheall | e | , | 's | e | 'sgrùdadh | an | àite | anns | na | dh’fhàg | a | bhrògan"),
    # gd_arcosg-ud-test.conllu.gz:4414: apostrophes quoting a title are no elision marks
    ("gd", "Ann an 'Gaoir nam Ban Muileach', ann a bhith ag caoidh",
     "Ann | an | ' | Gaoir | nam | Ban | Muileach | ' | , | ann | a | bhith | ag | caoidh"),
    # mt_mudt-ud-dev.conllu.gz:95, 360, 2604
    ("mt", "Jason Micallef fil-fatt kien bilqiegħda f'dik il-parti fejn is-siġġijiet kienu immarkati",
     "Jason | Micallef | fil- | fatt | kien | bilqiegħda | f' | dik | il- | parti | fejn | is- | siġġijiet "
     "| kienu | immarkati"),
    ("mt", "fl-elezzjoni tal-Mosta, baqa' l-art.", "fl- | elezzjoni | tal- | Mosta | , | baqa' | l- | art | ."),
    ("mt", "Malta hi 300 km biss 'il bogħod mill-Libja u l-prijorita' tibqa' s-sigurta'",
     "Malta | hi | 300 | km | biss | 'il | bogħod | mill- | Libja | u | l- | prijorita' | tibqa' | s- | sigurta'"),
    # mt_mudt-ud-dev.conllu.gz:2792, 4988 (other hyphenated words stay whole)
    ("mt", "jiċċelebra l-14-il anniversarju", "jiċċelebra | l- | 14-il | anniversarju"),
    ("mt", "Jien nistaqsi, kemm-il darba jrid jintqal dan il-kliem",
     "Jien | nistaqsi | , | kemm-il | darba | jrid | jintqal | dan | il- | kliem"),
    # fro_profiterole-ud-test.conllu.gz:116, 550
    ("fro", "Ja cil d'Espaigne n'avrunt de mort guarant. »",
     "Ja | cil | d' | Espaigne | n' | avrunt | de | mort | guarant | . | »"),
    ("fro", "Li emperere, ki Franceis nos laisat, Itels.XX. milie en mist a une part ;",
     "Li | emperere | , | ki | Franceis | nos | laisat | , | Itels | .XX. | milie | en | mist | a | une | part | ;"),
    # ar_pud-ud-test.conllu:180, 1903, 2234
    ("ar", "الحد الأقصى المسموح به للشخص الواحد هو 5000 دولار.",
     "الحد | الأقصى | المسموح | ب | ه | ل | لشخص | الواحد | هو | 5000 | دولار | ."),
    ("ar", "عازف جيتارٍ موهوب, وقد عزف في حفلٍ هناك في ذات العام.",
     "عازف | جيتارٍ | موهوب | , | و | قد | عزف | في | حفلٍ | هناك | في | ذات | العام | ."),
    ("ar", "ومع ذلك, لم يتمكنوا من العثور على ذات النسق في أنسجة مثل المثانة, والتي لم تتعرض بشكل مباشر.",
     "و | مع | ذلك | , | لم | يتمكنوا | من | العثور | على | ذات | النسق | في | أنسجة | مثل | المثانة | , | و | التي "
     "| لم | تتعرض | ب | شكل | مباشر | ."),
])
def test_language_rules_cut_as_the_treebank(lang, text, expected):
    assert cut(text, lang) == expected


@pytest.mark.parametrize("lang, text, expected", [
    ("ar", "لكن والد بالغ", "لكن | والد | بالغ"),  # 'but', 'father', 'adult': no clitic inside
    ("gd", "(-steach) a -", "( | - | steach | ) | a | -"),  # a hyphen after punctuation joins nothing
    ("br", "Evel-se e oa", "Evel-se | e | oa"),  # a lexicalised adverb keeps its enclitic
    ("mt", "let's go", "let's | go"),  # no English possessive rule in Maltese
])
def test_rules_leave_what_is_not_theirs(lang, text, expected):
    assert cut(text, lang) == expected


@pytest.mark.parametrize("lang, first, second", [
    # ka_glc-ud-dev.conllu.gz:29, 57: Georgian letters are lower case for Unicode
    ("ka", "საინჟინრო საქმის საფუძველია მეცნიერული ცოდნა და პრაქტიკული გამოცდილება.",
     "საინჟინრო საქმის სპეციალისტებს ინჟინრებს უწოდებენ."),
    # hy_armtdp-ud-dev.conllu.gz:58, 74 (shortened): the full stop ։ typed as a colon
    ("hy", "Տղամարդիկ մրցեցին 1.000 մ, իսկ կանայք՝ 500 մ վազքատարածություններում:",
     "Տղամարդկանց լավագույն եռյակը ներկայացնում էր ֆիզկուլտուրայի ինստիտուտը:"),
])
def test_sentences_end_as_the_treebank_ends_them(lang, first, second):
    assert [" ".join(s) for s in sentences(f"{first} {second}", lang)] == \
        [" ".join(tokenize(first, lang)), " ".join(tokenize(second, lang))]
    assert len(sentences(f"{first} {second}", "xx")) == 1  # the generic rules wait for a capital


def test_the_table_picks_rules_by_language_code():
    assert all(isinstance(r, LangRules) for r in RULES.values())
    assert rules_for("de") is GENERIC and rules_for("mt") is RULES["mt"]
    assert rules_for("en", "keep") is not rules_for("en")
    assert get_tokenizer("MT_mudt").rules is RULES["mt"]
    assert Tokenizer("xx").tokenize("il-kampanja") == ["il", "-", "kampanja"]  # the generic rules
    assert lang_warning("fro") is None and lang_warning("gd") is None
    warning = lang_warning("xx")
    assert "no rules for language 'xx'" in warning and "--" not in warning


def test_agree_corpus_lang_picks_the_rules(tmp_path):
    """``agree corpus --lang mt`` cuts a dump's prose as MUDT does (mt_mudt-ud-dev.conllu.gz:360)."""
    text = "Tant iddgħajfet il-pożizzjoni ta' Agius Decelis fil-Mosta. " * 3
    (tmp_path / "mt.xml").write_text(dump_xml([page("Malta", text)]), encoding="utf-8")
    r = run_agree("corpus", tmp_path / "mt.xml", "--lang", "mt", "--max-unk", "1", "--out", tmp_path / "c", "-q",
                  "--any-dump-lang")  # the fixture's header says en
    assert r.exit_code == 0, r.output
    assert r.stderr == ""  # a language with rules: no warning
    lines = {line for name in ("train", "valid", "test")
             for line in (tmp_path / "c" / f"{name}.txt").read_text(encoding="utf-8").splitlines()}
    assert lines == {"Tant iddgħajfet il- pożizzjoni ta' Agius Decelis fil- Mosta ."}


# --- lm.corpus.treebank_tokens on inline CoNLL-U -----------------------------------------------

CONLLU = textwrap.dedent("""\
    # newdoc id = d1
    # text = Della casa, don't.
    1-2\tDella\t_\t_\t_\t_\t_\t_\t_\t_
    1\tDi\tdi\tADP\t_\t_\t3\tcase\t_\t_
    2\tla\til\tDET\t_\t_\t3\tdet\t_\t_
    3\tcasa\tcasa\tNOUN\t_\t_\t0\troot\t_\tSpaceAfter=No
    4\t,\t,\tPUNCT\t_\t_\t3\tpunct\t_\t_
    5-6\tdon't\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No
    5\tdo\tdo\tAUX\t_\t_\t3\tdep\t_\t_
    6\tn't\tnot\tPART\t_\t_\t5\tadvmod\t_\t_
    6.1\tx\tx\tX\t_\t_\t_\t_\t3:dep\t_
    7\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

    # text = he deus
    1\the deus\tkaout\tVERB\t_\t_\t0\troot\t_\t_

    """)


def _write(path: Path, text: str) -> Path:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as fh:
        fh.write(text)
    return path


def test_gold_tokens_are_the_readers_surface_tokens(tmp_path):
    path = _write(tmp_path / "x-ud-test.conllu.gz", CONLLU)
    first, second = gold_sentences(tmp_path)  # a directory, as expand_paths finds its files
    assert first.tokens == ("Della", "casa", ",", "don't", ".") == next(read_treebanks([path])).forms
    assert first.text == "Della casa, don't." and first.doc == "d1"
    assert first.source == f"{path}:1"
    # English UD words: a multiword token its words spell is those words (Della is not Di+la)
    assert next(gold_sentences(path, words=True)).tokens == ("Della", "casa", ",", "do", "n't", ".")
    assert second.tokens == ("he deus",)


def test_agreement_counts_spans_unspelled_sentences_and_spaced_tokens(tmp_path):
    path = _write(tmp_path / "x.conllu", CONLLU + CONLLU.replace("# text = he deus", "# text = he dues"))
    a = agreement(gold_sentences(path), lambda text: text.replace(",", " ,").replace(".", " .").split())
    # per copy: 5 tokens of the first sentence reproduced, "he deus" cut in two;
    # the second copy's last sentence does not spell its text
    assert (a.reproduced, a.gold, a.sentences, a.unspelled, a.spaced) == (10, 12, 4, 1, 2)
    assert a.recall == 10 / 12 and a.predicted == 14


# --- every shared treebank -------------------------------------------------------------------

#: Languages left under 95% of their treebank's tokens, and why (docs/corpora.md).
BELOW = {"ar": "PUD writes the clitics of open-class words as words: no rules can find them without a lexicon"}


@pytest.mark.integration
def test_every_claimed_language_reaches_95_percent_on_its_test_file():
    """Each treebank's test file (held out where the rules were written against dev,
    else half held out): 95% of its tokens, for every language but those in BELOW."""
    ud = shared_path("ud")
    shares, generic = {}, {}
    for folder in sorted(p for p in ud.iterdir() if p.is_dir()):
        lang = folder.name.split("_")[0]
        assert lang in KNOWN_LANGS, lang
        test = [s for f in sorted(folder.iterdir()) if "-test." in f.name for s in gold_sentences(f)]
        shares[folder.name] = agreement(test, get_tokenizer(lang, "keep").tokenize).recall
        if lang in BELOW:
            generic[folder.name] = agreement(test, Tokenizer("generic").tokenize).recall
    assert len(shares) == 65
    low = {tb: round(s, 3) for tb, s in shares.items() if s < 0.95}
    assert set(low) == {tb for tb in shares if tb.split("_")[0] in BELOW}, low
    assert shares["ar_pud"] >= generic["ar_pud"] + 0.1  # the rules still cut what they can
