"""Perturbations (nonce/perturb/, nonce/vectors.py): every aspect keeps cue and target,
changes the token count only where it says so, and is reproducible from its seed."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from formats.items import Item
from nonce.errors import NonceError
from nonce.perturb import aspect_names, get_aspect, perturb, perturb_items
from nonce.perturb.qwerty import NEIGHBOURS
from nonce.perturb.select import POS_GROUPS
from nonce.vectors import find_embedding_key, load_model_embeddings, load_vectors, load_word2vec_text
from treebanks.paradigms import ParadigmTable
from conftest import raises_as_cli

ART = "Definite=Def|PronType=Art"
IND = "Definite=Ind|PronType=Art"
SG, PL = "Number=Sing", "Number=Plur"
V3SG = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
VPL = "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin"
VPAST = "Mood=Ind|Tense=Past|VerbForm=Fin"
NUM = "NumForm=Digit|NumType=Card"


def item(item_id, words, cue, target, wrong="x", number="Sing"):
    """``words``: 'form/UPOS/feats' strings (feats default ``_``)."""
    rows = [(w.split("/") + ["_"])[:3] for w in words]
    forms, pos, feats = (tuple(col) for col in zip(*rows))
    return Item(item_id=item_id, variant=0, construction="NOUN VERB VERB", direction="L",
                tokens=forms, pos=pos, feats=feats, correct=forms[target], wrong=wrong, lemma="x",
                number=number, cue_index=cue, target_index=target, attractors=0,
                punct="PUNCT" in pos[cue + 1:target])


EN = [
    item("en_ewt-ud-test:s1:1",
         ["The/DET/" + ART, "girl/NOUN/" + SG, "the/DET/" + ART, "boys/NOUN/" + PL, "like/VERB/" + VPL,
          "in/ADP", "3/NUM/" + NUM, "big/ADJ/Degree=Pos", "rooms/NOUN/" + PL, ",/PUNCT", "often/ADV",
          "thinks/VERB/" + V3SG, "that/SCONJ", "it/PRON", "rains/VERB/" + V3SG, "./PUNCT"], 1, 11, "think"),
    item("en_ewt-ud-test:s2:4",
         ["Yesterday/NOUN/" + SG, ",/PUNCT", "the/DET/" + ART, "keys/NOUN/" + PL, "to/ADP", "an/DET/" + IND,
          "old/ADJ/Degree=Pos", "cabinet/NOUN/" + SG, "that/PRON", "Mary/PROPN/" + SG, "saw/VERB/" + VPAST,
          "in/ADP", "2500/NUM/" + NUM, "rooms/NOUN/" + PL, "are/AUX/" + VPL, "on/ADP", "the/DET/" + ART,
          "table/NOUN/" + SG, "./PUNCT"], 3, 14, "is", "Plur"),
    item("en_ewt-ud-test:s3:2",
         ["A/DET/" + IND, "dog/NOUN/" + SG, "that/PRON", "the/DET/" + ART, "cats/NOUN/" + PL,
          "chase/VERB/" + VPL, "quickly/ADV", "barks/VERB/" + V3SG, "at/ADP", "night/NOUN/" + SG, "./PUNCT"],
         1, 7, "bark"),
]
IT = [
    item("it_isdt-ud-test:s9:1",
         ["Il/DET/Definite=Def|Gender=Masc|Number=Sing|PronType=Art", "ragazzo/NOUN/Gender=Masc|" + SG,
          "che/PRON", "le/DET/Definite=Def|Gender=Fem|Number=Plur|PronType=Art", "ragazze/NOUN/Gender=Fem|" + PL,
          "vedono/VERB/" + VPL, "in/ADP", "l'/DET/Definite=Def|Gender=Fem|Number=Sing|PronType=Art",
          "aula/NOUN/Gender=Fem|" + SG, "21/NUM/" + NUM, "volte/NOUN/" + PL, "gli/DET/Definite=Def|Gender=Masc|Number=Plur|PronType=Art",
          "amici/NOUN/" + PL, "pensa/VERB/" + V3SG, "./PUNCT"], 1, 13, "pensano"),
]

# a tiny vector space: 'like' and 'chase' at angle 0; candidate verbs at known cosines
ANGLES = {"like": 0.0, "chase": 0.0, "love": 25.8, "want": 53.1, "sell": 72.5, "eat": 90.0,
          "likes": 0.0, "loves": 25.8, "wants": 53.1, "sells": 72.5, "thinks": 10.0, "rains": 40.0,
          "saw": 0.0, "wanted": 53.1, "sold": 72.5}


def write_vectors(path, words=ANGLES, header=True):
    lines = [f"{len(words)} 2"] if header else []
    for w, deg in words.items():
        r = np.deg2rad(deg)
        lines.append(f"{w} {np.cos(r):.6f} {np.sin(r):.6f}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def paradigms() -> ParadigmTable:
    table = ParadigmTable()
    for lemma in ("like", "chase", "love", "want", "sell", "eat"):
        table.add(lemma, lemma, "VERB", VPL, 3)
        table.add(lemma + "s", lemma, "VERB", V3SG, 2)
    table.add("Love", "love", "VERB", VPL, 1)  # a rarer capitalised spelling: never chosen
    for past, lemma in (("saw", "see"), ("wanted", "want"), ("sold", "sell")):
        table.add(past, lemma, "VERB", VPAST, 2)
    return table


@pytest.fixture
def resources(tmp_path):
    return {"vectors": load_vectors(write_vectors(tmp_path / "v.txt")), "paradigms": paradigms()}


LANGUAGE_ASPECTS = ("articles", "digits", "marks")


def setup(aspect, resources):
    """(test sets, one per language; options; a strong severity) for each aspect."""
    if aspect == "semantic":
        return [EN], dict(resources), 0.6
    return ([EN, IT] if aspect in LANGUAGE_ASPECTS else [EN]), {}, 1.0


def run(aspect, severity, options=None, seed=7, items=EN):
    return perturb(items, aspect, severity, options or {}, seed)


# -- every aspect -------------------------------------------------------------

def test_every_aspect_is_registered():
    assert aspect_names() == ["articles", "digits", "drop-char", "drop-space", "marks", "qwerty",
                              "semantic", "swap"]


@pytest.mark.parametrize("aspect", aspect_names())
def test_cue_target_intact_and_lengths_as_declared(aspect, resources):
    """Cue and target keep form, POS and features; pos/feats stay aligned; the token
    count changes only for aspects that declare it (and does for those at severity 1)."""
    testsets, options, severity = setup(aspect, resources)
    lengths_changed = 0
    for lang_items in testsets:
        result = perturb(lang_items, aspect, severity, options, seed=3)
        assert result.stats["changes"] > 0
        for before, after in zip(lang_items, result.items):
            for old, new in ((before.cue_index, after.cue_index), (before.target_index, after.target_index)):
                assert (after.tokens[new], after.pos[new], after.feats[new]) == \
                       (before.tokens[old], before.pos[old], before.feats[old])
            assert after.tokens[after.target_index] == after.correct == before.correct
            assert (after.wrong, after.number, after.item_id, after.variant) == \
                   (before.wrong, before.number, before.item_id, before.variant)
            assert len(after.tokens) == len(after.pos) == len(after.feats)
            assert after.prefix == after.tokens[:after.target_index]
            assert after.perturbation == result.label
            lengths_changed += len(after.tokens) != len(before.tokens)
    assert (lengths_changed > 0) == get_aspect(aspect).changes_length


@pytest.mark.parametrize("aspect", aspect_names())
def test_same_seed_same_output(aspect, resources):
    testsets, options, severity = setup(aspect, resources)
    severity = 0.5 if aspect != "semantic" else severity
    for items in testsets:
        a = perturb_items(items, aspect, severity, options, seed=11)
        b = perturb_items(list(reversed(items)), aspect, severity, options, seed=11)
        assert a == list(reversed(b))  # a row's output does not depend on the other rows
        assert a == perturb_items(items, aspect, severity, options, seed=11)


@pytest.mark.parametrize("aspect", [a for a in aspect_names() if a != "semantic"])
def test_identity_severity_changes_nothing(aspect):
    for items in setup(aspect, {})[0]:
        out = perturb_items(items, aspect, 0.0)
        assert [o.tokens for o in out] == [i.tokens for i in items]
        assert all(o.extra["changes"] == 0 for o in out)


def test_different_seeds_differ():
    a = perturb_items(EN, "qwerty", 0.5, seed=1)
    b = perturb_items(EN, "qwerty", 0.5, seed=2)
    assert [x.tokens for x in a] != [x.tokens for x in b]


# -- qwerty and the word selection -------------------------------------------

def changed_positions(before: Item, after: Item) -> list[int]:
    assert len(before.tokens) == len(after.tokens)
    return [i for i, (x, y) in enumerate(zip(before.tokens, after.tokens)) if x != y]


def test_qwerty_replaces_one_letter_by_a_neighbour():
    for before, after in zip(EN, perturb_items(EN, "qwerty", 1.0)):
        changed = changed_positions(before, after)
        assert changed and all(i < before.target_index for i in changed)  # default scope: the prefix
        for i in changed:
            diffs = [(a, b) for a, b in zip(before.tokens[i], after.tokens[i]) if a != b]
            assert len(diffs) == 1 and diffs[0][1].lower() in NEIGHBOURS[diffs[0][0].lower()]


@pytest.mark.parametrize("group", ["function", "mid", "nouns", "verbs", "content"])
def test_pos_group_noises_only_its_words(group):
    out = perturb_items(EN, "qwerty", 1.0, {"pos_group": group})
    seen = set()
    for before, after in zip(EN, out):
        for i in changed_positions(before, after):
            assert before.pos[i] in POS_GROUPS[group]
            seen.add(before.pos[i])
    assert seen and out[0].perturbation == f"qwerty@{group}:1"


def test_random_control_matches_the_group_count_per_sentence():
    items = EN * 1  # same ids: counts must match item by item
    for severity in (0.3, 0.6):
        nouns = perturb_items(items, "qwerty", severity, {"pos_group": "nouns"}, seed=5)
        control = perturb_items(items, "qwerty", severity, {"pos_group": "random", "match_group": "nouns"},
                                seed=5)
        assert [o.extra["changes"] for o in nouns] == [o.extra["changes"] for o in control]
        assert [len(changed_positions(i, o)) for i, o in zip(items, control)] == \
               [o.extra["changes"] for o in control]
        assert control[0].perturbation == f"qwerty@random~nouns:{severity:g}"
    many = perturb_items(EN, "qwerty", 1.0, {"pos_group": "random", "match_group": "nouns"}, seed=5)
    assert any(before.pos[i] not in POS_GROUPS["nouns"]
               for before, after in zip(EN, many) for i in changed_positions(before, after))


def test_direction_picks_words_from_the_start_or_the_end():
    for direction in ("start", "end"):
        out = perturb_items(EN, "qwerty", 1.0, {"direction": direction, "max_words": 2})
        for before, after in zip(EN, out):
            words = [i for i in range(before.target_index) if i != before.cue_index
                     and any(c.isascii() and c.isalpha() for c in before.tokens[i])]
            expected = words[:2] if direction == "start" else words[-2:]
            assert changed_positions(before, after) == expected
        assert out[0].perturbation == f"qwerty@random/{direction}:1"


def test_noised_words_are_nested_across_severities():
    low = perturb_items(EN, "qwerty", 0.3, {"pos_group": "content"}, seed=9)
    high = perturb_items(EN, "qwerty", 0.7, {"pos_group": "content"}, seed=9)
    for before, a, b in zip(EN, low, high):
        assert set(changed_positions(before, a)) <= set(changed_positions(before, b))


def test_scope_context_and_sentence():
    ctx = perturb_items(EN, "swap", 1.0, {"scope": "context"})
    for before, after in zip(EN, ctx):
        assert all(before.cue_index < i < before.target_index for i in changed_positions(before, after))
    whole = perturb_items(EN, "swap", 1.0, {"scope": "sentence"})
    assert any(i > before.target_index for before, after in zip(EN, whole)
               for i in changed_positions(before, after))


def test_swap_and_drop_char_edit_letters_only():
    swapped = perturb_items(EN, "swap", 1.0)
    for before, after in zip(EN, swapped):
        for i in changed_positions(before, after):
            assert sorted(before.tokens[i]) == sorted(after.tokens[i])
    assert "3" in swapped[0].tokens and "2500" in swapped[1].tokens  # numbers are not swapped
    for before, after in zip(EN, perturb_items(EN, "drop-char", 1.0)):
        for i in changed_positions(before, after):
            assert len(after.tokens[i]) == len(before.tokens[i]) - 1
        assert all(t for t in after.tokens)


# -- aspects that change the token count ---------------------------------------

def test_drop_space_merges_words_and_keeps_characters():
    out = run("drop-space", 1.0)
    for before, after in zip(EN, out.items):
        assert "".join(after.tokens) == "".join(before.tokens)
        assert len(before.tokens) - len(after.tokens) == after.extra["changes"] > 0
        assert "".join(after.tokens[:after.cue_index]) == "".join(before.tokens[:before.cue_index])
        assert "".join(after.tokens[:after.target_index]) == "".join(before.tokens[:before.target_index])
    first = out.items[0]  # "the boys like in 3 big rooms" -> one token with the POS of "rooms"
    assert "theboyslikein3bigrooms" in first.tokens
    assert first.pos[first.tokens.index("theboyslikein3bigrooms")] == "NOUN"


def test_articles_remove_and_swap():
    removed = run("articles", 1.0).items
    assert removed[1].tokens[:5] == ("Yesterday", ",", "keys", "to", "old")
    assert (removed[1].cue_index, removed[1].target_index) == (2, 12)
    swapped = run("articles", 1.0, {"mode": "swap"}).items
    assert swapped[0].tokens[:4] == ("A", "girl", "the", "boys")   # "the boys": plural, kept
    assert swapped[1].tokens[5] == "the" and swapped[1].feats[5] == ART
    assert swapped[2].tokens[:5] == ("The", "dog", "that", "the", "cats")
    assert [len(b.tokens) for b in EN] == [len(s.tokens) for s in swapped]
    it = run("articles", 1.0, {"mode": "swap"}, items=IT).items[0]
    assert [it.tokens[i] for i in (0, 3, 7, 11)] == ["Un", "le", "un'", "i"]


def test_articles_need_a_known_language():
    odd = [EN[0].replace(item_id="zz-corpus:s1:1")]
    with raises_as_cli(NonceError, "perturb", r"^articles: language zz not supported \(pass --lang with one of: en, it\)$"):
        perturb_items(odd, "articles", 0.5)
    assert perturb_items(odd, "articles", 1.0, {"lang": "en"})[0].tokens[0] == "girl"


def test_marks_insert_and_remove_update_punct():
    removed = run("marks", 1.0, {"mode": "remove"}).items
    assert all("PUNCT" not in after.pos[:after.target_index] for after in removed)
    assert removed[0].punct is False and EN[0].punct is True
    inserted = run("marks", 1.0, {"mode": "insert"}).items
    for before, after in zip(EN, inserted):
        assert after.pos.count("PUNCT") > before.pos.count("PUNCT")
        assert after.punct is True
        assert not any(a == b == "PUNCT" for a, b in zip(after.pos, after.pos[1:after.target_index]))


def test_digits_spell_numbers_aligned():
    en = run("digits", 1.0).items
    assert en[0].tokens[6] == "three" and en[0].feats[6] == "NumForm=Word|NumType=Card"
    i = en[1].tokens.index("two")
    assert en[1].tokens[i:i + 4] == ("two", "thousand", "five", "hundred")
    assert en[1].pos[i:i + 4] == ("NUM",) * 4
    assert en[1].target_index == EN[1].target_index + 3
    it = run("digits", 1.0, items=IT).items[0]
    assert it.tokens[9] == "ventuno" and len(it.tokens) == len(IT[0].tokens)


# -- semantic -------------------------------------------------------------------

def test_semantic_replaces_verbs_at_the_chosen_similarity(resources):
    for severity, plural, singular, past in ((0.9, "love", "loves", None), (0.6, "want", "wants", "wanted"),
                                             (0.3, "sell", "sells", "sold")):
        out = perturb(EN, "semantic", severity, resources, seed=1)
        assert out.items[0].tokens[4] == plural            # like (Plur) -> same features
        assert out.items[2].tokens[5] == plural            # chase -> the same candidate
        assert out.items[1].tokens[10] == (past or "saw")  # saw (Past): 'see' has no vector
        assert out.items[0].tokens[11] == "thinks" and out.items[0].tokens[14] == "rains"  # target; after it
        assert out.label == f"semantic:{severity:g}"
    assert out.stats["verbs"] == 3 and out.stats["replaced"] == 3


def test_semantic_counts_misses_and_keeps_identity(resources):
    out = perturb(EN, "semantic", -0.9, resources)
    assert out.stats["missed"] == out.stats["verbs"] and out.stats["changes"] == 0
    assert [o.tokens for o in out.items] == [i.tokens for i in EN]


def test_semantic_needs_vectors_and_paradigms(resources):
    with raises_as_cli(NonceError, "perturb", r"^semantic perturbation needs word vectors \(--vectors"):
        perturb_items(EN, "semantic", 0.5, {"paradigms": resources["paradigms"]})
    with pytest.raises(NonceError, match="needs the treebank's paradigm table"):
        perturb_items(EN, "semantic", 0.5, {"vectors": resources["vectors"]})


# -- errors -----------------------------------------------------------------------

def test_errors_are_clear():
    with pytest.raises(NonceError, match=r"^unknown aspect 'typo' \(aspects: articles, digits, drop-char, "):
        perturb_items(EN, "typo", 0.1)
    with pytest.raises(NonceError, match=r"^qwerty: severity 1\.5 out of range; it is a per-word "
                                         r"probability in \[0, 1\]$"):
        perturb_items(EN, "qwerty", 1.5)
    with pytest.raises(NonceError, match=r"semantic: severity -2 out of range; .* in \[-1, 1\]"):
        perturb_items(EN, "semantic", -2)
    with pytest.raises(NonceError, match=r"^swap: unknown option\(s\) mode \(options: "):
        perturb_items(EN, "swap", 0.1, {"mode": "x"})
    with pytest.raises(NonceError, match=r"qwerty: option pos_group='adverbs' not allowed"):
        perturb_items(EN, "qwerty", 0.1, {"pos_group": "adverbs"})
    with pytest.raises(NonceError, match=r"^qwerty: option max_words='two' is not a whole number$"):
        perturb_items(EN, "qwerty", 0.1, {"max_words": "two"})
    with pytest.raises(NonceError, match=r"^semantic: option band='wide' is not a number$"):
        perturb_items(EN, "semantic", 0.1, {"band": "wide"})
    with raises_as_cli(NonceError, "perturb", "--match-group needs --pos-group random"):
        perturb_items(EN, "qwerty", 0.1, {"pos_group": "nouns", "match_group": "verbs"})


# -- word vectors -------------------------------------------------------------------

def test_word2vec_text_with_and_without_header(tmp_path):
    a = load_word2vec_text(write_vectors(tmp_path / "a.txt"))
    b = load_vectors(write_vectors(tmp_path / "b.vec", header=False))
    assert a.words == b.words and a.dim == 2 and np.allclose(a.matrix, b.matrix)
    assert a.cosine("like", "want") == pytest.approx(0.6, abs=1e-3)


def test_word2vec_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("2 3\nfoo 1 2 3\nbar 1 2\n", encoding="utf-8")
    with pytest.raises(NonceError, match=r"bad\.txt:3: expected a word and 3 numbers, found 3 fields"):
        load_vectors(bad)
    binary = tmp_path / "bin.bin"
    binary.write_bytes(b"2 2\nfoo \xff\xfe\x00\x01")
    with pytest.raises(NonceError, match="binary word2vec files are not supported"):
        load_vectors(binary)


def model_dir(tmp_path, state, vocab):
    d = tmp_path / "model"
    d.mkdir()
    (d / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    (d / "config.json").write_text(json.dumps({"kind": "lstm"}), encoding="utf-8")
    torch.save({"state_dict": state, "config": {"kind": "lstm"}}, d / "model.pt")
    return d


@pytest.mark.parametrize("key", ["encoder.weight", "embedding.weight", "tok_emb.weight"])
def test_model_embeddings(tmp_path, key):
    vocab = ["<eos>", "<unk>", "like", "want"]
    emb = torch.tensor([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.6, 0.8]])
    state = {key: emb, "decoder.weight": torch.zeros(4, 2), "rnn.weight_ih_l0": torch.zeros(8, 2),
             "pos_emb.weight": torch.zeros(4, 2)}
    vectors = load_vectors(model_dir(tmp_path, state, vocab))
    assert vectors.words == tuple(vocab) and vectors.source.endswith(key)
    assert vectors.cosine("like", "want") == pytest.approx(0.6)


def test_model_without_embedding_is_an_error(tmp_path):
    d = model_dir(tmp_path, {"decoder.weight": torch.zeros(3, 2)}, ["<eos>", "<unk>", "a"])
    with pytest.raises(NonceError, match=r"no input embedding with 3 rows .* decoder\.weight \(3, 2\)"):
        load_model_embeddings(d)
    assert find_embedding_key({"encoder.weight": torch.zeros(5, 2)}, 3) is None
    assert find_embedding_key({"lookup.weight": torch.zeros(3, 2), "decoder.weight": torch.zeros(3, 2)},
                              3) == "lookup.weight"


def test_number_words():
    from nonce.perturb.digits import english, italian, value
    assert [" ".join(english(n)) for n in (0, 13, 42, 101, 2023, 50000)] == [
        "zero", "thirteen", "forty-two", "one hundred one", "two thousand twenty-three", "fifty thousand"]
    assert [italian(n) for n in (21, 23, 38, 180, 1001, 2500)] == [
        "ventuno", "ventitré", "trentotto", "centottanta", "milleuno", "duemilacinquecento"]
    assert (value("50,000", "en"), value("50.000", "it"), value("2:00", "en"), value("1,5", "en")) == \
           (50000, 50000, None, None)


# -- real sentences ------------------------------------------------------------------

def ewt_items(shared, limit=400):
    """Items made from real EWT test sentences: cue = the first NOUN, target = the
    last VERB at least 4 words after it (the invariants hold for any such pair)."""
    from treebanks.reader import read_treebanks
    sentences = list(read_treebanks([shared("ud", "en_ewt", "en_ewt-ud-test.conllu")]))
    items = []
    for s in sentences:
        pos = [t.upos for t in s.tokens]
        if "NOUN" not in pos:
            continue
        cue = pos.index("NOUN")
        verbs = [i for i, p in enumerate(pos) if p == "VERB" and i >= cue + 4]
        if verbs:
            items.append(Item(item_id=f"en_ewt-{s.sent_id}", variant=0, construction="x", direction="L",
                              tokens=s.forms, pos=tuple(pos), feats=tuple(t.feats for t in s.tokens),
                              correct=s.forms[verbs[-1]], wrong="x", lemma="x", number="Sing",
                              cue_index=cue, target_index=verbs[-1], attractors=0, punct=False))
        if len(items) == limit:
            break
    return sentences, items


@pytest.mark.integration
def test_every_aspect_on_real_sentences(shared):
    sentences, items = ewt_items(shared)
    table = ParadigmTable.from_sentences(sentences)
    words = sorted({a.form for a in table.counts})
    rng = np.random.default_rng(0)  # random vectors: the machinery, not the semantics, is tested
    from nonce.vectors import WordVectors
    vectors = WordVectors(tuple(words), rng.normal(size=(len(words), 16)).astype(np.float32))
    for aspect in aspect_names():
        options = {"vectors": vectors, "paradigms": table, "band": 0.1} if aspect == "semantic" else {}
        severity = 0.2 if aspect == "semantic" else 0.5
        result = perturb(items, aspect, severity, options, seed=1)
        assert result.stats["changes"] > 0, aspect
        for before, after in zip(items, result.items):
            assert after.tokens[after.cue_index] == before.tokens[before.cue_index]
            assert after.tokens[after.target_index] == before.correct
            assert len(after.tokens) == len(after.pos) == len(after.feats)
            assert all(after.tokens) and all(" " not in t for t in after.tokens), aspect
            if not get_aspect(aspect).changes_length:
                assert len(after.tokens) == len(before.tokens)
        if aspect == "semantic":
            changed = [(b.tokens[i], a.tokens[i], b.feats[i]) for b, a in zip(items, result.items)
                       for i in range(len(b.tokens)) if b.tokens[i] != a.tokens[i]]
            assert changed
            for old, new, feats in changed:  # re-inflected: the new form has the old features
                new = new.lower() if new.lower() in vectors.index else new  # as the aspect spells it
                assert any(a.feats == feats and a.upos == "VERB"
                           for a, _ in table.analyses(new) + table.analyses(new.capitalize()))
                old = old if old in vectors.index else old.lower()
                assert abs(vectors.cosine(new, old) - 0.2) <= 0.1 + 1e-6


def test_subword_model_keeps_whole_word_pieces(tmp_path):
    vocab = ["<eos>", "<unk>", "\u2581like", "s", "\u2581want"]
    emb = torch.tensor([[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [5.0, 5.0], [0.6, 0.8]])
    d = model_dir(tmp_path, {"encoder.weight": emb}, vocab)
    (d / "spm.model").write_bytes(b"not read here")
    vectors = load_vectors(d)
    assert vectors.words == ("like", "want") and vectors.cosine("like", "want") == pytest.approx(0.6)


@pytest.mark.parametrize("kind, tied, max_len", [("lstm", False, 128), ("lstm", True, 128),
                                                 ("transformer", False, 7)])
def test_embeddings_of_the_project_models(tmp_path, kind, tied, max_len):
    """lm.neural.models networks, saved as `agree train-lm` saves them: the vectors are the
    input embedding (``embedding.weight``), not the decoder nor the positions."""
    from dataclasses import asdict

    from lm.neural.models import LMConfig, build_model
    vocab = ["<eos>", "<unk>", "a", "b", "c", "d", "e"]
    config = LMConfig(kind=kind, vocab_size=len(vocab), emb_size=8, hidden_size=8, layers=1,
                      tied=tied, heads=2, max_len=max_len)
    torch.manual_seed(0)
    net = build_model(config)
    d = model_dir(tmp_path, net.state_dict(), vocab)
    torch.save({"state_dict": net.state_dict(), "config": asdict(config)}, d / "model.pt")
    vectors = load_vectors(d)
    assert vectors.source.endswith("model.pt:embedding.weight")
    assert np.allclose(vectors.matrix, net.embedding.weight.detach().numpy())
