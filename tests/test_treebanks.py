"""treebanks/: the streaming CoNLL-U reader, canonical features, paradigm tables."""
from __future__ import annotations

import bz2
import gzip
from pathlib import Path
from textwrap import dedent

import pytest

from treebanks.errors import TreebankError
from treebanks.features import canonical_feats, feature_values, format_feats, infer_verb_number, parse_feats
from treebanks.paradigms import Analysis, ParadigmTable
from treebanks.reader import read_treebanks

# Italian, with a multiword token (3-4 della = di la), an empty node (5.1) and
# features written out of canonical order.
ITALIAN = dedent("""\
    # sent_id = it-1
    # text = Il gatto della vicina dorme.
    1\tIl\til\tDET\tRD\tNumber=Sing|Gender=Masc|Definite=Def|PronType=Art\t2\tdet\t_\t_
    2\tgatto\tgatto\tNOUN\tS\tNumber=Sing|Gender=Masc\t6\tnsubj\t_\t_
    3-4\tdella\t_\t_\t_\t_\t_\t_\t_\t_
    3\tdi\tdi\tADP\tE\t_\t5\tcase\t_\t_
    4\tla\til\tDET\tRD\tDefinite=Def|Gender=Fem|Number=Sing|PronType=Art\t5\tdet\t_\t_
    5\tvicina\tvicina\tNOUN\tS\tGender=Fem|Number=Sing\t2\tnmod\t_\t_
    5.1\tè\tessere\tAUX\t_\t_\t_\t_\t2:cop\t_
    6\tdorme\tdormire\tVERB\tV\tMood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin\t0\troot\t_\t_
    7\t.\t.\tPUNCT\tFS\t_\t6\tpunct\t_\t_

    # sent_id = it-2
    1\tDormono\tdormire\tVERB\tV\tMood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin\t0\troot\t_\t_
    2\t.\t.\tPUNCT\tFS\t_\t1\tpunct\t_\t_
    """)

# English "doesn't": the AUX part carries the features, both parts attach outside.
ENGLISH = dedent("""\
    # sent_id = en-1
    1\tShe\tshe\tPRON\tPRP\tCase=Nom|Number=Sing|Person=3\t4\tnsubj\t_\t_
    2-3\tdoesn't\t_\t_\t_\t_\t_\t_\t_\t_
    2\tdoes\tdo\tAUX\tVBZ\tMood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin\t4\taux\t_\t_
    3\tn't\tnot\tPART\tRB\tPolarity=Neg\t4\tadvmod\t_\t_
    4\tknow\tknow\tVERB\tVB\tVerbForm=Inf\t0\troot\t_\t_
    """)


def write(tmp_path: Path, text: str, name: str = "t.conllu") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def read(path) -> list:
    return list(read_treebanks([path]))


class TestReader:
    def test_multiword_token_becomes_one_node_with_the_surface_form(self, tmp_path):
        """della = di + la: one node, the DET's features (same depth, more features),
        lemmas joined; arcs into either part point to it; the empty node 5.1 is gone."""
        s = read(write(tmp_path, ITALIAN))[0]
        assert s.forms == ("Il", "gatto", "della", "vicina", "dorme", ".")
        della = s.tokens[2]
        assert (della.lemma, della.upos, della.feats, della.head, della.deprel) == (
            "di+il", "DET", "Definite=Def|Gender=Fem|Number=Sing|PronType=Art", 3, "det")
        assert [t.head for t in s.tokens] == [1, 4, 3, 1, -1, 4]
        assert [t.index for t in s.tokens] == list(range(6))

    def test_multiword_tie_goes_to_the_part_with_features(self, tmp_path):
        s = read(write(tmp_path, ENGLISH))[0]
        assert s.forms == ("She", "doesn't", "know")
        assert (s.tokens[1].upos, s.tokens[1].lemma, s.tokens[1].head) == ("AUX", "do+not", 2)
        assert "Number=Sing" in s.tokens[1].feats

    def test_multiword_part_nearest_the_root_wins(self, tmp_path):
        """vámonos = vamos (root) + nos (its object): the verb part represents it."""
        text = dedent("""\
            1-2\tvámonos\t_\t_\t_\t_\t_\t_\t_\t_
            1\tvamos\tir\tVERB\t_\tMood=Ind|Number=Plur|Person=1\t0\troot\t_\t_
            2\tnos\tyo\tPRON\t_\tCase=Acc|Number=Plur|Person=1|PronType=Prs|Reflex=Yes\t1\tobj\t_\t_
            3\tya\tya\tADV\t_\t_\t1\tadvmod\t_\t_
            """)
        s = read(write(tmp_path, text))[0]
        assert s.forms == ("vámonos", "ya")
        assert (s.tokens[0].upos, s.tokens[0].head, s.tokens[1].head) == ("VERB", -1, 0)

    def test_features_canonical_and_metadata(self, tmp_path):
        s1, s2 = read(write(tmp_path, ITALIAN))
        assert s1.tokens[0].feats == "Definite=Def|Gender=Masc|Number=Sing|PronType=Art"
        assert s1.tokens[5].feats == "_"
        assert (s1.sent_id, s1.line, s2.sent_id, s2.line) == ("it-1", 1, "it-2", 13)
        assert s1.source == str(tmp_path / "t.conllu")

    def test_compressed_files_and_directories_stream_in_order(self, tmp_path):
        d = tmp_path / "tb"
        d.mkdir()
        with gzip.open(d / "a.conllu.gz", "wt", encoding="utf-8") as fh:
            fh.write(ITALIAN)
        with bz2.open(d / "b.conllu.bz2", "wt", encoding="utf-8") as fh:
            fh.write(ENGLISH)
        (d / "notes.txt").write_text("not a treebank")
        ids = [s.sent_id for s in read_treebanks([d])]
        assert ids == ["it-1", "it-2", "en-1"]

    def test_sentence_without_sent_id_is_numbered(self, tmp_path):
        text = "1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n\n1\tYo\tyo\tINTJ\t_\t_\t0\troot\t_\t_\n"
        assert [s.sent_id for s in read(write(tmp_path, text))] == ["1", "2"]


GOOD_ROW = "1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n"


class TestReaderErrors:
    @pytest.mark.parametrize("row, message", [
        ("2\tthere\tthere\tADV\t_\t_\t1\tadvmod\t_\n", "expected 10 tab-separated columns, found 9"),
        ("2\tthere\tthere\tADV\t_\t_\t1\tadvmod\t_\t_\t_\n", "expected 10 tab-separated columns, found 11"),
        ("x\tthere\tthere\tADV\t_\t_\t1\tadvmod\t_\t_\n", "ID: 'x' is not a word ID (1, 2-3 or 4.1 expected)"),
        ("2\tthere\tthere\tADV\t_\t_\tone\tadvmod\t_\t_\n",
         "HEAD: 'one' is not a number"),
        ("2\tthere\tthere\tADV\t_\t_\t_\tadvmod\t_\t_\n", "word 2 has no HEAD"),
        ("2\tthere\tthere\tADV\t_\t_\t9\tadvmod\t_\t_\n", "HEAD 9 of word 2 is outside the sentence (1..2)"),
        ("3\tthere\tthere\tADV\t_\t_\t1\tadvmod\t_\t_\n", "word ID 3 out of sequence (expected 2)"),
        ("2\tthere\tthere\tADV\t_\tDegree\t1\tadvmod\t_\t_\n",
         "FEATS: malformed feature 'Degree' (expected Name=Value)"),
    ])
    def test_malformed_line_names_file_and_line(self, tmp_path, row, message):
        path = write(tmp_path, GOOD_ROW + "\n# sent_id = b\n" + GOOD_ROW + row)
        with pytest.raises(TreebankError) as e:
            read(path)
        assert str(e.value) == f"{path}:5: {message}"

    def test_missing_file(self, tmp_path):
        with pytest.raises(TreebankError, match=r"nope.conllu: no such file$"):
            read(tmp_path / "nope.conllu")

    @pytest.mark.parametrize("text", ["", "\n\n  \n"])
    def test_empty_file(self, tmp_path, text):
        path = write(tmp_path, text)
        with pytest.raises(TreebankError) as e:
            read(path)
        assert str(e.value) == f"{path}: empty treebank (no sentences)"

    def test_not_utf8(self, tmp_path):
        path = tmp_path / "latin1.conllu"
        path.write_bytes((GOOD_ROW + "\n" + "1\tcaf\xe9\tcaf\xe9\tNOUN\t_\t_\t0\troot\t_\t_\n").encode("latin-1"))
        with pytest.raises(TreebankError) as e:
            read(path)
        assert str(e.value) == f"{path}:3: not UTF-8 text (byte 0xe9 at column 6); CoNLL-U files must be UTF-8"

    def test_head_cycle_inside_multiword_token(self, tmp_path):
        text = ("1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n1\ta\ta\tX\t_\t_\t2\tdep\t_\t_\n"
                "2\tb\tb\tX\t_\t_\t1\tdep\t_\t_\n3\tc\tc\tX\t_\t_\t0\troot\t_\t_\n")
        with pytest.raises(TreebankError, match=r"t.conllu:2: word 1 is in a head cycle"):
            read(write(tmp_path, text))

    def test_conllu_plus_columns(self, tmp_path):
        standard = "# global.columns = ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC\n"
        assert [s.forms for s in read(write(tmp_path, standard + GOOD_ROW))] == [("Hi",)]
        path = write(tmp_path, "# global.columns = ID FORM PARSEME:MWE\n" + GOOD_ROW)
        with pytest.raises(TreebankError) as e:
            read(path)
        assert str(e.value) == (f"{path}:1: CoNLL-U Plus columns (ID FORM PARSEME:MWE) are not supported; "
                                "expected the 10 CoNLL-U columns")

    def test_corrupt_gzip(self, tmp_path):
        path = tmp_path / "x.conllu.gz"
        path.write_bytes(b"not gzip at all")
        with pytest.raises(TreebankError, match=r"x.conllu.gz: cannot decompress"):
            read(path)


class TestFeatures:
    def test_round_trip_and_canonical_order(self):
        assert parse_feats("Number=Sing|Gender=Masc") == {"Number": "Sing", "Gender": "Masc"}
        assert parse_feats("_") == {} and format_feats({}) == "_"
        assert canonical_feats("Number=Plur|Gender=Masc,Fem|abbr=Yes|Case=Nom") == \
            "abbr=Yes|Case=Nom|Gender=Fem,Masc|Number=Plur"

    def test_feature_values_in_the_order_asked(self):
        assert feature_values("Gender=Fem|Number=Sing", ("Gender", "Number")) == ("Fem", "Sing")
        assert feature_values("Gender=Fem", ("Number",)) is None

    def test_infer_verb_number_only_for_finite_present_verbs_without_number(self):
        assert infer_verb_number("VERB", "Mood=Ind|Tense=Pres|VerbForm=Fin") == \
            "Mood=Ind|Number=Plur|Tense=Pres|VerbForm=Fin"
        assert infer_verb_number("AUX", "Mood=Ind|Person=3|Tense=Pres|VerbForm=Fin") == \
            "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
        for upos, feats in [("VERB", "Mood=Ind|Tense=Past|VerbForm=Fin"), ("NOUN", "Tense=Pres|VerbForm=Fin"),
                            ("VERB", "Mood=Ind|Number=Sing|Tense=Pres|VerbForm=Fin"), ("VERB", "VerbForm=Inf")]:
            assert infer_verb_number(upos, feats) == feats


def table_of(*rows) -> ParadigmTable:
    t = ParadigmTable()
    for form, lemma, upos, feats, n in rows:
        t.add(form, lemma, upos, feats, n)
    return t


class TestParadigms:
    def test_counts_from_sentences_and_analyses_most_frequent_first(self, tmp_path):
        t = ParadigmTable.from_sentences(read_treebanks([write(tmp_path, ITALIAN + "\n" + ITALIAN)]))
        assert t.counts[Analysis("dorme", "dormire", "VERB",
                                 "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin")] == 2
        t.add("dorme", "dormire", "NOUN", "_", 1)
        assert [(a.upos, n) for a, n in t.analyses("dorme")] == [("VERB", 2), ("NOUN", 1)]
        assert t.analyses("unseen") == []

    def test_alternative_other_number(self, tmp_path):
        t = ParadigmTable.from_sentences(read_treebanks([write(tmp_path, ITALIAN)]))
        # spellings as the treebank has them (agree extract matches the target's capitalisation)
        assert t.alternative("dormire", "VERB", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin") == "Dormono"
        assert t.alternative("gatto", "NOUN", "Gender=Masc|Number=Sing") is None

    def test_closest_finds_what_the_exact_swap_cannot(self):
        """Russian past tense: Gender only in the singular."""
        t = table_of(("спал", "спать", "VERB", "Gender=Masc|Number=Sing|Tense=Past|VerbForm=Fin", 5),
                     ("спали", "спать", "VERB", "Number=Plur|Tense=Past|VerbForm=Fin", 4),
                     ("спят", "спать", "VERB", "Number=Plur|Person=3|Tense=Pres|VerbForm=Fin", 9))
        feats = "Gender=Masc|Number=Sing|Tense=Past|VerbForm=Fin"
        assert t.alternative("спать", "VERB", feats, mode="closest") == "спали"
        assert t.alternative("спать", "VERB", feats, mode="exact") is None

    def test_closest_never_changes_another_feature_value(self):
        """became (Past) must not get become (Pres) as its other-number form."""
        t = table_of(("became", "become", "VERB", "Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin", 5),
                     ("become", "become", "VERB", "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin", 3),
                     ("תלמידים", "תלמיד", "NOUN", "Gender=Fem,Masc|Number=Plur", 2),
                     ("תלמיד", "תלמיד", "NOUN", "Gender=Masc|Number=Sing", 4))
        assert t.alternative("become", "VERB", "Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin") is None
        assert t.alternative("תלמיד", "NOUN", "Gender=Masc|Number=Sing") == "תלמידים"
        assert t.alternative("תלמיד", "NOUN", "Gender=Masc|Number=Sing", mode="exact") is None

    def test_exact_swap_and_most_frequent_spelling(self):
        t = table_of(("is", "be", "AUX", "Number=Sing|Person=3|Tense=Pres", 50),
                     ("are", "be", "AUX", "Number=Plur|Person=3|Tense=Pres", 30),
                     ("r", "be", "AUX", "Number=Plur|Person=3|Tense=Pres", 2),
                     ("were", "be", "AUX", "Number=Plur|Person=3|Tense=Past", 40))
        assert t.alternative("be", "AUX", "Number=Sing|Person=3|Tense=Pres", mode="exact") == "are"
        assert t.alternative("be", "AUX", "Number=Sing|Person=3|Tense=Pres") == "are"
        with pytest.raises(ValueError, match="unknown alternative mode"):
            t.alternative("be", "AUX", "Number=Sing", mode="fuzzy")

    def test_several_features_change_as_few_as_possible(self):
        t = table_of(("bella", "bello", "ADJ", "Gender=Fem|Number=Sing", 3),
                     ("belle", "bello", "ADJ", "Gender=Fem|Number=Plur", 3),
                     ("belli", "bello", "ADJ", "Gender=Masc|Number=Plur", 9))
        assert t.alternative("bello", "ADJ", "Gender=Fem|Number=Sing", ("Gender", "Number")) == "belle"

    def test_save_and_load_round_trip_sorted(self, tmp_path):
        t = table_of(("dogs", "dog", "NOUN", "Number=Plur", 2), ("barks", "bark", "VERB", "Number=Sing", 1),
                     ("dog", "dog", "NOUN", "Number=Sing", 3))
        path = tmp_path / "paradigms.tsv"
        assert t.save(path) == 3
        assert path.read_text().splitlines() == [
            "form\tlemma\tupos\tfeats\tcount", "dogs\tdog\tNOUN\tNumber=Plur\t2",
            "dog\tdog\tNOUN\tNumber=Sing\t3", "barks\tbark\tVERB\tNumber=Sing\t1"]
        assert ParadigmTable.load(tmp_path).counts == t.counts

    def test_load_rejects_a_malformed_table(self, tmp_path):
        path = tmp_path / "paradigms.tsv"
        path.write_text("form\tlemma\tupos\tfeats\tcount\ndog\tdog\tNOUN\tNumber=Sing\tmany\n")
        with pytest.raises(TreebankError, match=r"paradigms.tsv:2: expected form, lemma, upos, feats, count"):
            ParadigmTable.load(path)

    @pytest.mark.parametrize("row, message", [
        ("dog\tdog\tNOUN\tNumber=Sing", "expected form, lemma, upos, feats, count"),
        ("\tdog\tNOUN\tNumber=Sing\t3", "empty form (a row is form, lemma, upos, feats, count, "
                                         "with feats _ when there are none)"),
        ("dog\tdog\tNOUN\t\t3", "empty feats ("),
        ("dog\t \t\tNumber=Sing\t3", "empty lemma and upos ("),
        ("dog\tdog\tNOUN\tNumber=Sing\t0", "count 0: a row is an analysis the treebank has, seen at least once"),
    ])
    def test_load_rejects_a_row_with_a_field_missing(self, tmp_path, row, message):
        """A row with a field missing or empty is refused by line, never read as a word
        that nonce sentences could draw (an empty form would be an empty word)."""
        path = tmp_path / "paradigms.tsv"
        path.write_text(f"form\tlemma\tupos\tfeats\tcount\ndogs\tdog\tNOUN\tNumber=Plur\t2\n{row}\n")
        with pytest.raises(TreebankError) as e:
            ParadigmTable.load(path)
        assert str(e.value) == f"{path}:3: {message}" or str(e.value).startswith(f"{path}:3: {message}")
