"""The fast path of ``agree extract`` against the plain one it replaces:
treebanks as compact columns (treebanks.cache), big files parsed in pieces, and
mining on whole arrays (ConstructionMiner.add_columns) must give exactly what
read_treebanks + ConstructionMiner.add_sentence give, arc for arc, count for
count, in the same order."""
from __future__ import annotations

from collections import Counter

import pytest

from agreement.extraction.constructions import _infer_number
from agreement.extraction.construction_miner import ConstructionMiner, MiningConfig
from test_extract import toy_conllu
from test_languages import DUAL, ITALIAN
from treebanks import cache
from treebanks.cache import load_columns
from treebanks.errors import TreebankError
from treebanks.features import infer_verb_number
from treebanks.reader import read_treebanks


def _write(tmp_path, text, name="tb.conllu"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _mined(miner: ConstructionMiner):
    """Everything the miner holds; joint pairs in insertion order (the entropy sums in it)."""
    arcs = {k: [(a.order, a.sentence.sent_id, a.sentence.line, a.cue, a.target, a.value, a.sentence.tokens)
                for a in miner.agreeing[k]] for k in miner.joint}
    return (dict(miner.drops), miner.sentences, miner.tokens, {k: list(v.items()) for k, v in miner.joint.items()},
            arcs, miner.constructions())


def _both_ways(paths, config: MiningConfig):
    plain = ConstructionMiner(config)
    for s in read_treebanks(paths):
        plain.add_sentence(s)
    fast = ConstructionMiner(config)
    fast.add_columns(load_columns(paths, workers=1)[0])
    return _mined(plain), _mined(fast)


CONFIGS = [MiningConfig(), MiningConfig(min_distance=1, max_distance=40),
           MiningConfig(features=("Gender", "Number"), min_count=2), MiningConfig(values=("Sing", "Plur")),
           MiningConfig(features=("Gender",), min_distance=2, max_distance=6)]


@pytest.mark.parametrize("config", CONFIGS, ids=["default", "distance-1-40", "gender-number", "values", "gender-2-6"])
def test_columns_mine_like_sentences(tmp_path, config):
    paths = [_write(tmp_path, toy_conllu(gender=True), "toy.conllu"), _write(tmp_path, ITALIAN, "it.conllu"),
             _write(tmp_path, DUAL, "ar.conllu")]
    plain, fast = _both_ways(paths, config)
    assert plain == fast
    assert plain[0]["candidates"] > 0 and any(plain[4].values())  # something was mined and kept


def test_columns_mine_like_sentences_on_a_real_treebank(shared):
    path = shared("ud", "en_ewt") / "en_ewt-ud-dev.conllu"
    plain, fast = _both_ways([path], MiningConfig())
    assert plain == fast
    assert plain[0]["non_projective"] > 0  # the climbing fallback was used


def _sentences(tb):
    return [(s.sent_id, s.tokens, s.source, s.line) for s in map(tb.sentence, range(len(tb)))]


def _plain(paths):
    return [(s.sent_id, s.tokens, s.source, s.line) for s in read_treebanks(paths)]


def _numbered_toy():
    # every third sentence without a sent_id: numbered in the file, across pieces
    lines = toy_conllu().splitlines(keepends=True)
    starts = [k for k, line in enumerate(lines) if line.startswith("# sent_id")]
    return "".join(line for k, line in enumerate(lines) if k not in starts[::3]) + "\n" + ITALIAN


def test_pieces_parse_like_the_whole_file(tmp_path, monkeypatch):
    path = _write(tmp_path, _numbered_toy())
    monkeypatch.setattr(cache, "MIN_PIECE", 1)
    assert len(cache._pieces(path, path.stat().st_size, path.stat().st_size // 4)) >= 4
    tb, reading = load_columns([path], workers=2, cache_dir=tmp_path / "c")
    assert reading == {"cached": 0, "parsed": 1}
    assert _sentences(tb) == _plain([path])
    assert "" not in [s[0] for s in _sentences(tb)] and "4" in [s[0] for s in _sentences(tb)]
    again, reading = load_columns([path], cache_dir=tmp_path / "c")  # the joined pieces, cached
    assert reading == {"cached": 1, "parsed": 0} and _sentences(again) == _sentences(tb)


def test_error_in_a_later_piece_names_its_line(tmp_path, monkeypatch):
    text = _numbered_toy()
    bad = text[:text.rindex("\t2\tdet")] + "\ttwo\tdet" + text[text.rindex("\t2\tdet") + 6:]
    path = _write(tmp_path, bad)
    with pytest.raises(TreebankError) as plain:
        list(read_treebanks([path]))
    monkeypatch.setattr(cache, "MIN_PIECE", 1)
    with pytest.raises(TreebankError) as fast:
        load_columns([path], workers=2)
    assert str(fast.value) == str(plain.value) and f"{path}:{bad.count(chr(10), 0, bad.index('two')) + 1}:" in str(plain.value)


def test_file_of_blank_lines_is_empty_in_pieces_too(tmp_path, monkeypatch):
    path = _write(tmp_path, "\n" * 5000)
    monkeypatch.setattr(cache, "MIN_PIECE", 1)
    with pytest.raises(TreebankError, match="empty treebank"):
        load_columns([path], workers=2)


def test_analyses_count_every_token(tmp_path):
    paths = [_write(tmp_path, toy_conllu(), "a.conllu"), _write(tmp_path, ITALIAN + "\n" + ITALIAN, "b.conllu")]
    tb, _ = load_columns(paths, workers=1)
    expected = Counter((t.form, t.lemma, t.upos, t.feats) for s in read_treebanks(paths) for t in s.tokens)
    assert tb.analyses() == expected and len(expected) > 20


def test_inferred_verb_number_word_by_word(tmp_path):
    path = _write(tmp_path, toy_conllu(english_2_0=True))
    tb = _infer_number(load_columns([path], workers=1)[0])
    words = [t for s in read_treebanks([path]) for t in s.tokens]
    inferred = [(t.form, t.lemma, t.upos, infer_verb_number(t.upos, t.feats)) for t in words]
    assert [t.feats for s in map(tb.sentence, range(len(tb))) for t in s.tokens] == [a[3] for a in inferred]
    assert tb.analyses() == Counter(inferred) and any(a[3] != t.feats for a, t in zip(inferred, words))


def test_head_cycle_is_met_before_a_later_malformed_line(tmp_path):
    from test_extract import _rows_to_conllu
    cycle = [("a", "a", "NOUN", "Number=Sing", 5, "dep"), ("b", "b", "X", "_", 3, "dep"), ("c", "c", "X", "_", 2, "dep"),
             ("d", "d", "X", "_", 0, "root"), ("e", "e", "VERB", "Number=Sing", 4, "dep")]
    first = toy_conllu()
    text = first + "\n" + _rows_to_conllu("c", cycle) + "\n" + first.replace("\t2\tdet", "\ttwo\tdet", 1)
    path = _write(tmp_path, text)
    line = first.count("\n") + 2  # the cycle sentence's comment line
    with pytest.raises(TreebankError, match=rf"tb.conllu:{line}: the heads do not form a tree \(word 2 is in a cycle\)"):
        load_columns([path], workers=1)
    with pytest.raises(TreebankError, match="HEAD: 'two' is not a number"):  # no cycle before it: the line's error
        load_columns([_write(tmp_path, first.replace("\t2\tdet", "\ttwo\tdet", 1), "b.conllu")], workers=1)


def test_judge_when_every_pair_is_seen_once():
    from agreement.extraction.construction_miner import judge
    joint = Counter({(("Sing",), ("Plur",)): 1, (("Plur",), ("Plur",)): 1})
    c = judge(("L", ("NOUN", "VERB")), joint, MiningConfig(features=("Number",), min_count=3))
    assert (c.pairs, c.entropy, c.cue_counts, c.kept, c.arcs) == ((("Plur", "Plur", 1), ("Sing", "Plur", 1)), 0.0, (),
                                                                  False, 2)
    assert c.reason == ("no (cue, target) value pair seen more than once; "
                        "fewer than two Number values on >= 3 cues (none)")
