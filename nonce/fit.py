"""Which candidates fit a relation item's sentence: the narrowing steps of
:func:`nonce.generate.make_nonce` when the sentence's :class:`nonce.frames.Context`
is known (``agree extract-all``, which reads the treebanks).

For a word it replaces (:func:`fitting`), in order, each step counted where it
leaves nothing but the word itself (the word then stays):

- ``no_main_form``: only a cell's most frequent form (never a second spelling, nor
  Dutch 2sg *bent* for 3sg *is* where Alpino gives verbs no Person);
- ``cues_ambiguous``: a cue only by a word with no analysis of the wrong value
  (Czech *práce* is singular and plural: the wrong verb would agree with it);
- ``no_frame``: a verb only by a verb that takes its frame (:mod:`nonce.frames`);
- ``no_agreement``: a word whose own features lack what its agreeing words carry only
  by a word with those values (for Gender, only those);
- ``no_harmony``: a word before a harmonising clitic only by a word of its harmony class.

For a target (:func:`target_pairs`): an auxiliary or copula keeps its own pair (a
copula never becomes a perfect auxiliary: Spanish *ha el que* for *es el que*); a
German or Dutch article before an adjective too (it decides the adjective's ending:
*ein richtige Minister*); a pair whose wrong form has an analysis of its lemma with
the target's own value is no pair (Italian *applichi*, also the 3sg subjunctive); a
verb's pair takes its frame as its lemma's usual one, and a pair before a harmonising
clitic keeps both forms' harmony. Where nothing fits, the target keeps its own pair.
"""
from __future__ import annotations

from formats.items import Item
from nonce.frames import CONFLICT, FRAME_POS, Context, FrameFilter
from nonce.pool import CandidatePool, Choices, Key, Pair, _main_forms, subset
from nonce.vowels import ending_langs
from treebanks.features import parse_feats
from treebanks.sounds import harmony_class


def _same(form: str) -> str:
    return form


def _lemma(p: Pair) -> str:
    return p.lemma


def values_of(pool: CandidatePool, form: str, upos: str, feature: str) -> frozenset[str]:
    """The values of ``feature`` over ``form``'s analyses as ``upos`` (empty: none has it)."""
    if feature == "Gender":
        return pool.genders(form, upos)
    # a capitalised form is also read as its lower-case one (sentence-initial Množství)
    forms = {form, form.lower()}
    return pool.cached(("values", form, upos, feature), lambda: frozenset(
        v for f in forms for a, _ in pool.table.analyses(f) if a.upos == upos
        for v in parse_feats(a.feats).get(feature, "").split(",") if v))


def needs_fit(pool: CandidatePool, cands: Choices[str], key: Key, need: tuple) -> Choices[str] | None:
    """For a word whose own analysis lacks a feature the words agreeing with it carry
    (``need``: (feature, value) pairs, :func:`nonce.frames.agreeing`): the candidates
    that have that value in some analysis, and for Gender in every one (a noun has one
    gender: Spanish *persona* before *electa* never becomes a masculine noun)."""
    upos = key[0]

    def keep(f):
        for feature, value in need:
            got = values_of(pool, f, upos, feature)
            if value not in got or (feature == "Gender" and len(got) > 1):
                return False
        return True
    return subset(cands, keep, _same)


def harmony_fits(pool: CandidatePool, cands: Choices[str], key: Key, cls: str) -> Choices[str] | None:
    """The candidates of harmony class ``cls`` (:func:`treebanks.sounds.harmony_class`):
    a clitic after the word reads its last vowel (Turkish *Kıbrıs'ta da*)."""
    lang = pool.options.lang
    return subset(cands, lambda f: harmony_class(f, lang) == cls, _same)


def main_only(pool: CandidatePool, cands: Choices[str], key: Key) -> Choices[str] | None:
    """The candidates that are their cell's most frequent form."""
    main = pool.cached(("main", key[0], key[1]), lambda: set(_main_forms(pool.analyses_of(key[0], key[1])).values()))
    return subset(cands, lambda f: f in main, _same)


def unambiguous(pool: CandidatePool, cands: Choices[str], key: Key, feature: str, wrong: str) -> Choices[str] | None:
    """For a cue: the candidates with no analysis (same POS) whose ``feature`` is ``wrong``."""
    upos = key[0]
    return subset(cands, lambda f: wrong not in values_of(pool, f, upos, feature), _same)


def _present_participle(form: str) -> bool:
    return form.lower().endswith(("nd", "nde", "nden"))


def one_case(pool: CandidatePool, cands: Choices[str], key: Key, case: str) -> Choices[str] | None:
    """For a cue in ``case``: the candidates with no analysis (same POS) in another case."""
    upos = key[0]
    return subset(cands, lambda f: values_of(pool, f, upos, "Case") <= {case}, _same)


def fitting(item: Item, i: int, cands, key, pool: CandidatePool, framed: FrameFilter | None,
            ctx: Context, c):
    """The candidates for position ``i`` that fit its sentence (module doc); None
    (counted on ``c`` by reason) when none is left but the word itself."""
    word, upos = item.tokens[i], item.pos[i]
    if ctx.needs[i] == CONFLICT:
        c.no_agreement += 1
        return None
    steps = [("no_candidate_main", (), lambda cs: main_only(pool, cs, key))]
    if i == item.cue_index and item.relation:
        feature = item.feature.split("[")[0]
        steps.append(("cue_ambiguous", (feature, item.wrong_value),
                      lambda cs: unambiguous(pool, cs, key, feature, item.wrong_value)))
        case = parse_feats(item.feats[i]).get("Case", "") if item.relation == "subj-verb" else ""
        if case:
            # a cue whose replacement is also another case can read as the object of the
            # wrong verb (Turkish *suyu*, nominative with a possessor or accusative: *suyu dedim*)
            steps.append(("cue_ambiguous", ("Case", case), lambda cs: one_case(pool, cs, key, case)))
    if upos in FRAME_POS:
        steps.append(("no_frame", ctx.sigs[i], lambda cs: framed.words(cs, key, ctx.sigs[i])))
        if "VerbForm=Part" in key[1] and "Tense=" not in key[1]:
            # a participle without Tense (Alpino): a present one (-end) only for a present one
            present = _present_participle(word)
            steps.append(("no_frame", ("part", present),
                          lambda cs: subset(cs, lambda f: _present_participle(f) == present, _same)))
    if ctx.needs[i]:
        steps.append(("no_agreement", ctx.needs[i], lambda cs: needs_fit(pool, cs, key, ctx.needs[i])))
    if ctx.harmony[i]:
        cls = harmony_class(word, pool.options.lang)
        steps.append(("no_harmony", cls, lambda cs: harmony_fits(pool, cs, key, cls)))
    return _narrow(cands, word, ("w", key), steps, pool, c)


def _narrow(values, exclude, chain: tuple, steps, pool: CandidatePool, c):
    """``values`` through each (reason, what, narrow) step in turn, each result made once
    per chain of steps (the pool keeps it); None, counted under the reason, where a
    step leaves nothing but ``exclude``."""
    for why, what, narrow in steps:
        chain = chain + ((why, what),)
        current = values
        values = pool.cached(chain, lambda: narrow(current))
        if values is None or not values.available(exclude):
            setattr(c, why, getattr(c, why) + 1)
            return None
    return values


def target_pairs(item: Item, pool: CandidatePool, contrasts: dict, framed: FrameFilter | None,
                 ctx: Context | None, c):
    """The replacement pairs of ``item``'s target: a relation item's contrast its own
    feature towards its wrong value (pools made once per contrast, in ``contrasts``);
    with ``ctx`` (its sentence's context) narrowed as the module doc says. Returns
    (pairs, kept): ``kept`` when the target must keep its own pair."""
    contrast = ()
    if item.relation:
        contrast = (item.feature, item.wrong_value)
        if contrast not in contrasts:
            contrasts[contrast] = pool.for_contrast((item.feature,), (item.wrong_value,))
        pool = contrasts[contrast]
    t = item.target_index
    key = pool.key(item.tokens[t], item.pos[t], item.feats[t])
    pairs = pool.pairs(key)
    if pairs is None or ctx is None or not pairs.available(item.lemma):
        return pairs, False
    if item.pos[t] == "AUX" and item.relation:
        return None, True
    if item.pos[t] == "DET" and ending_langs(pool.options.lang) and _adjective_between(item):
        c.targets_before_adjective += 1
        return None, True
    value = parse_feats(item.feats[t]).get(item.feature, "")
    steps = [("targets_syncretic", value, lambda ps: _not_syncretic(item, pool, ps, value))]
    if item.pos[t] in FRAME_POS:
        steps.append(("targets_no_frame", ctx.sigs[t], lambda ps: framed.pairs(ps, key, ctx.sigs[t])))
    if ctx.harmony[t]:
        lang = pool.options.lang
        cls = (harmony_class(item.tokens[t], lang), harmony_class(item.wrong, lang))
        steps.append(("targets_no_harmony", cls, lambda ps: _same_harmony(pool, ps, cls)))
    pairs = _narrow(pairs, item.lemma, ("p", key, contrast), steps, pool, c)
    return pairs, pairs is None


def _not_syncretic(item: Item, pool: CandidatePool, pairs, value: str):
    """The ``pairs`` whose wrong form has no analysis of its lemma with the target's own
    ``value`` of the contrasted feature."""
    if not value:
        return pairs
    upos = item.pos[item.target_index]

    def clean(p: Pair) -> bool:
        return not any(a.lemma == p.lemma and a.upos == upos and parse_feats(a.feats).get(item.feature) == value
                       for a, _ in pool.table.analyses(p.alternative))
    return subset(pairs, clean, _lemma)


def _same_harmony(pool: CandidatePool, pairs, cls: tuple):
    """The ``pairs`` whose two forms have the harmony classes ``cls`` (the target's)."""
    lang = pool.options.lang
    return subset(pairs, lambda p: (harmony_class(p.form, lang), harmony_class(p.alternative, lang)) == cls, _lemma)


def _adjective_between(item: Item) -> bool:
    """Whether an adjective stands between the target (a determiner) and its noun (the cue)."""
    lo, hi = sorted((item.target_index, item.cue_index))
    return any(p == "ADJ" for p in item.pos[lo + 1:hi])
