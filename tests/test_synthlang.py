"""The demo's generated language: valid UD, real agreement, attractors, seeded."""
from __future__ import annotations

import random

import conllu
import pytest

from agreement.errors import AgreeError
from agreement.demo.synthlang import LEXICON, Generator, GrammarConfig, to_conllu, write_synthetic


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth")
    return write_synthetic(out, seed=7, sentences=400, corpus_tokens=20_000)


@pytest.fixture(scope="module")
def sentences(synth):
    with open(synth.treebank, encoding="utf-8") as fh:
        return list(conllu.parse_incr(fh))


def number(tok):
    return (tok["feats"] or {}).get("Number")


def test_treebank_is_valid_ud(synth, sentences):
    """Every sentence parses with conllu; ids run 1..n; one root; heads in range; the
    tree is connected and projective; the text line matches the forms."""
    assert len(sentences) == synth.sentences == 400
    for s in sentences:
        n = len(s)
        assert [t["id"] for t in s] == list(range(1, n + 1))
        assert sum(t["head"] == 0 for t in s) == 1
        assert all(0 <= t["head"] <= n and t["head"] != t["id"] for t in s)
        for t in s:  # every node reaches the root without a cycle
            seen, h = set(), t["id"]
            while h:
                assert h not in seen
                seen.add(h)
                h = s[h - 1]["head"]
        for t in s:  # projective: everything between a node and its head is dominated by the head
            lo, hi = sorted((t["id"], t["head"] or t["id"]))
            for k in range(lo + 1, hi):
                a = k
                while a and a != t["head"]:
                    a = s[a - 1]["head"]
                assert a == t["head"], (s.metadata["sent_id"], t["id"], k)
        text = "".join(t["form"] + ("" if (t["misc"] or {}).get("SpaceAfter") == "No" else " ")
                       for t in s).strip()
        assert s.metadata["text"] == text
        assert s[-1]["upos"] == "PUNCT" and s[0]["form"][0].isupper()


def test_features_are_canonical_and_marked(sentences):
    """Number on every noun, adjective and finite verb; features sorted like UD."""
    for s in sentences:
        for t in s:
            if t["upos"] in ("NOUN", "VERB", "ADJ"):
                assert number(t) in ("Sing", "Plur")
            raw = to_conllu_feats(t)
            if raw != "_":
                names = [f.split("=")[0] for f in raw.split("|")]
                assert names == sorted(names, key=str.lower)


def to_conllu_feats(tok):
    feats = tok["feats"] or {}
    return "|".join(f"{k}={v}" for k, v in feats.items()) or "_"


def test_agreement_is_right(sentences):
    """Subjects agree with their verbs (nsubj), verbs of a coordination agree with each
    other (conj), determiners and adjectives agree with their noun."""
    checked = {"nsubj": 0, "conj": 0, "det": 0, "amod": 0}
    for s in sentences:
        for t in s:
            head = s[t["head"] - 1] if t["head"] else None
            if t["deprel"] in checked and head is not None and number(t) and number(head):
                assert number(t) == number(head), (s.metadata["text"], t["form"], head["form"])
                checked[t["deprel"]] += 1
    assert all(n > 50 for n in checked.values()), checked


def test_long_distance_items_with_attractors_exist(sentences):
    """Subject-verb arcs with at least 3 words between, some with a noun of the other
    number in between (an attractor) close to the verb; coordinated verbs far apart."""
    attracted = coordinated = 0
    for s in sentences:
        for t in s:
            head = s[t["head"] - 1] if t["head"] else None
            if head is None or head["id"] - t["id"] < 4:
                continue
            between = s[t["id"]:head["id"] - 1]
            if t["deprel"] == "nsubj" and t["upos"] == "NOUN":
                if any(b["upos"] == "NOUN" and number(b) != number(t) for b in between[-5:]):
                    attracted += 1
        for t in s:
            if t["deprel"] == "conj" and t["id"] - t["head"] >= 4:
                coordinated += 1
    assert attracted > 40 and coordinated > 20, (attracted, coordinated)


def test_same_seed_same_bytes_other_seed_other_text(tmp_path, synth):
    again = write_synthetic(tmp_path / "a", seed=7, sentences=400, corpus_tokens=20_000)
    assert again.treebank.read_bytes() == synth.treebank.read_bytes()
    assert again.corpus.read_bytes() == synth.corpus.read_bytes()
    other = write_synthetic(tmp_path / "b", seed=8, sentences=400, corpus_tokens=20_000)
    assert other.treebank.read_bytes() != synth.treebank.read_bytes()


def test_corpus_is_tokenised_and_disjoint_from_treebank(synth, sentences):
    lines = synth.corpus.read_text(encoding="utf-8").splitlines()
    assert len(lines) == synth.corpus_sentences
    assert sum(len(line.split(" ")) for line in lines) == synth.corpus_tokens >= 20_000
    assert all(line.endswith(" .") and "  " not in line for line in lines)
    treebank = {" ".join(t["form"] for t in s) for s in sentences}
    assert not treebank & set(lines)
    vocab = {w for line in lines for w in line.split()}
    forms = {t["form"] for s in sentences for t in s}
    assert len(forms - vocab) < 0.1 * len(forms)   # same language: few treebank words unseen
    assert len(vocab) > 300   # a few hundred word types, both numbers of most lemmas


def test_forms_are_unambiguous_and_paradigms_distinct():
    """Each surface form belongs to one lemma and POS; singular and plural differ."""
    owner = {}
    for key, lemmas in LEXICON.items():
        for lem in lemmas:
            assert lem.sing != lem.plur
            for form in (lem.sing, lem.plur):
                assert owner.setdefault(form, (lem.lemma, lem.upos)) == (lem.lemma, lem.upos)
    assert sum(len(v) for v in LEXICON.values()) >= 250


def test_grammar_config_controls_the_structure():
    """No modifiers and no coordination give short subject-verb sentences only."""
    cfg = GrammarConfig(p_subject_pp=0, p_subject_rc=0, p_coordination=0, p_transitive=0,
                        p_intransitive_pp=0, p_adverb=0, p_adjective=0)
    gen = Generator(random.Random(1), cfg)
    for _ in range(20):
        toks = gen.sentence()
        assert [t.upos for t in toks] == ["DET", "NOUN", "VERB", "PUNCT"]
        block = to_conllu(toks, "x")
        assert conllu.parse(block)[0][1]["deprel"] == "nsubj"


def test_sizes_must_be_positive(tmp_path):
    with pytest.raises(AgreeError, match="sizes must be positive"):
        write_synthetic(tmp_path, sentences=0)
