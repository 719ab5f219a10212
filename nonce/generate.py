"""Colorless green nonce variants of agreement items (method.md section 3).

For each original item, ``n`` variants in which every content word of the whole
sentence (ADJ, NOUN, VERB, PROPN, NUM, ADV; the cue included) is replaced by
another treebank word with the same POS and the same full feature set, the same
capitalisation and, where the language's articles depend on it, the same
initial class (:mod:`nonce.vowels`; a German or Dutch adjective also its ending);
the target is replaced by another lemma's
(form, alternative form) pair with the same POS and features, the two forms
spelled differently. Function words and punctuation stay, so the grammar stays
and the meaning goes.

- An item whose target has no replacement pair keeps only its original (variant
  0) and is counted in ``targets_no_pair``.
- **Merged multiword tokens keep their function words**: a content position
  whose word is a merged token (*farlo* = fare + lo; a noun with a prefixed
  preposition and article) is replaced only by another merged token the treebank
  spells with the same function parts (*dirlo*, :meth:`CandidatePool.fused_candidates`);
  with none, it keeps its word in every variant, counted (once per item) in
  ``positions_fused_unchanged`` by reason. A merged *target* keeps its own
  correct/wrong pair in every variant (``targets_fused``): a bare replacement
  would drop its clitic or article.
- **Target pairs are spread**: the variants of an item draw their target pairs
  without replacement (seeded) until the item's candidates are exhausted, then
  start over; ``distinct_pairs`` counts items by how many different pairs their
  variants got.
- A content position with no other candidate keeps its word, in every variant,
  and is counted (once per item) in ``positions_no_candidate``.
- A variant keeps its original's POS, features, cue and target positions,
  number and attractor count (the attractors' POS and features do not change),
  and gets perturbation ``nonce``; ``correct``, ``wrong`` and ``lemma`` are the
  new target pair's.
- **Relation items** (``agree extract --mode relations``) draw target pairs that
  contrast the item's own feature towards its wrong value (a Gender item's pair
  differs in Gender; :meth:`CandidatePool.for_contrast`), and their variants say
  ``wrong_source`` ``paradigms``. A closed-class target (AUX, DET, PRON: a copula,
  an article) with no other lemma's pair keeps its own pair in every variant,
  counted in ``targets_own_pair``: a language often has one copula or one article,
  and its content words still change.

- **Fitting the sentence** (``frames``, :mod:`nonce.frames`, :mod:`nonce.fit`): for an
  item whose sentence is known, each replacement fits its frame, the features of the
  words agreeing with it and the harmony of a clitic after it; a word nothing fits keeps
  its form, a target nothing fits (and an auxiliary, a German article before an
  adjective) keeps its own pair; each counted in the manifest's ``frames``.
- **A noun without Gender** after a word with one (Spanish *la base* annotated
  ``Number=Sing``) is replaced only by a noun with that gender or none
  (:meth:`CandidatePool.gender_fits`; never *la cabo*); with none it keeps its word
  (``positions_no_gender``).
- **Unchanged prefix**: a target-scored variant whose words before the target are
  all the original's is written with perturbation :data:`SAME_PREFIX`, not counted in
  ``variants`` (``same_prefix``); ``with_variants`` counts originals with at least one
  other variant.

Sampling: **uniform over candidate word types** by default (the paper says only
"a random word of the treebank"; we read it as every candidate type equally
likely, so rare words appear as often as frequent ones); ``sampling="frequency"``
weights each type by its treebank count instead, which favours frequent words
that an LM is more likely to know. A draw
never returns the word being replaced (nor, for targets, the target's lemma)
when another candidate exists.

Seeds: the caller's ``random.Random`` gives one 64-bit base; each item then gets
its own ``random.Random("nonce:<base>:<item_id>")`` (string seeds are hashed with
SHA-512, so this is stable across runs and platforms), so an item's variants do
not depend on which other items are in the set or in what order.
"""
from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from typing import Iterable


from formats.errors import AgreeError
from formats.items import Item
from formats.vocab import vocab_path, vocab_words
from nonce.errors import NonceError
from nonce.fit import fitting, target_pairs
from nonce.frames import Context, FrameFilter, Frames
from treebanks.errors import literal
from nonce.pool import CONTENT_POS, GENDER_POS, CandidatePool, Pair, PoolOptions
from nonce.result import NonceCounts, NonceResult
from treebanks.features import parse_feats
from nonce.vowels import vowel_rule_on
from treebanks.paradigms import ParadigmTable
from treebanks.progress import track

log = logging.getLogger(__name__)

SAMPLING_CHOICES = ("uniform", "frequency")
PERTURBATION = "nonce"
#: relation items' targets that keep their own pair when no other lemma has one
OWN_PAIR_POS = ("AUX", "DET", "PRON")
#: a nonce variant's wrong_source: the extract directory's (pooled) paradigms.tsv
PAIR_SOURCE = "paradigms"
#: the perturbation of a target-scored variant whose words before the target are the
#: original's: it repeats the original's scored prefix, so it is not a nonce variant
SAME_PREFIX = "nonce_same_prefix"


@dataclass(frozen=True)
class NonceConfig:
    """Options of :func:`make_nonce`.

    n            variants per original item (the paper: 9)
    ambiguity    see :class:`nonce.pool.PoolOptions` (0 = the released code's one-POS rule)
    min_count    a candidate form must occur at least this often (2 = "more than once")
    vocab        LM vocabulary; candidates (and both target forms) must be in it
    lang         language code; picks the initial-class rule (:mod:`nonce.vowels`)
    vowel_rule   ``auto`` (by ``lang``), ``on`` or ``off``
    sampling     ``uniform`` over candidate types, or ``frequency``-weighted
    features     agreement features of the extract run (for the alternatives)
    alternative_mode  ``closest`` or ``exact``, as in the extract run
    content_pos  the POS that are replaced
    """
    n: int = 9
    ambiguity: float = 0.1
    min_count: int = 2
    vocab: frozenset[str] | None = None
    lang: str | None = None
    vowel_rule: str = "auto"
    sampling: str = "uniform"
    features: tuple[str, ...] = ("Number",)
    alternative_mode: str = "closest"
    content_pos: tuple[str, ...] = CONTENT_POS
    values: tuple[str, ...] = ("Sing", "Plur")

    def __post_init__(self):
        if self.n < 1:
            raise NonceError(f"{{n}} must be at least 1, not {self.n}", fields=True)
        if not 0 <= self.ambiguity < 1:
            raise NonceError(f"{{ambiguity}} must be in [0, 1), not {self.ambiguity}", fields=True)
        if self.sampling not in SAMPLING_CHOICES:
            raise NonceError(f"{{sampling}} must be one of {', '.join(SAMPLING_CHOICES)}, "
                             f"not {literal(repr(self.sampling))}", fields=True)
        vowel_rule_on(self.lang, self.vowel_rule)  # validates the option

    def pool_options(self) -> PoolOptions:
        return PoolOptions(ambiguity=self.ambiguity, min_count=self.min_count, vocab=self.vocab,
                           lang=self.lang, vowel_rule=vowel_rule_on(self.lang, self.vowel_rule),
                           features=tuple(self.features), alternative_mode=self.alternative_mode,
                           content_pos=tuple(self.content_pos), values=tuple(self.values))


def check_item(item: Item) -> None:
    """Items need aligned tokens/pos/feats and a target inside the sentence."""
    n = len(item.tokens)
    if len(item.pos) != n or len(item.feats) != n:
        raise NonceError(f"item {item.item_id}: {n} tokens but {len(item.pos)} POS tags and "
                         f"{len(item.feats)} feature sets (items.tsv from another version?)")
    if not (0 <= item.cue_index < n and 0 <= item.target_index < n):
        raise NonceError(f"item {item.item_id}: cue or target index outside the sentence")


def make_nonce(items: Iterable[Item], paradigms: ParadigmTable, config: NonceConfig, rng: random.Random, *,
               pool: CandidatePool | None = None, frames: Frames | None = None) -> NonceResult:
    """Nonce variants of the original items (variant 0) among ``items``.

    ``paradigms`` is the extract run's :class:`treebanks.paradigms.ParadigmTable`;
    ``pool`` a :class:`CandidatePool` built from it with ``config.pool_options()``
    (built here when None); ``frames`` (:func:`nonce.frames.frames_of`): when given,
    the words of an item it knows are replaced only by words that fit its sentence
    (:mod:`nonce.fit`). Items with
    variant > 0 in the input are ignored."""
    originals = [it for it in items if it.variant == 0]
    for it in originals:
        check_item(it)
    if pool is None:
        pool = CandidatePool(paradigms, config.pool_options())
    framed = FrameFilter(frames, pool) if frames is not None else None
    content = frozenset(config.content_pos)
    weighted = config.sampling == "frequency"
    base = rng.getrandbits(64)
    out: list[Item] = []
    c = NonceCounts(frames_used=framed is not None)
    contrasts: dict[tuple[str, str], CandidatePool] = {}
    for item in track(log, originals, desc="nonce", unit="item"):
        out.append(item)
        t = item.target_index
        c.targets[item.pos[t]] += 1
        ctx = frames.of_item(item) if frames is not None else None
        fused_target = "+" in item.lemma
        pairs, kept = (None, False) if fused_target else target_pairs(item, pool, contrasts, framed, ctx, c)
        own_pair = kept or (not fused_target and bool(item.relation) and item.pos[t] in OWN_PAIR_POS
                            and (pairs is None or not pairs.available(item.lemma)))
        if not fused_target and not own_pair and (pairs is None or not pairs.available(item.lemma)):
            c.no_pair[item.pos[t]] += 1
            continue
        c.targets_fused += fused_target
        c.own_pair[item.pos[t]] += own_pair
        slots = _slots(item, pool, content, c, framed, ctx)
        item_rng = random.Random(f"nonce:{base}:{item.item_id}")
        draws = _PairDraws(pairs, item_rng, weighted, item.lemma) if pairs is not None and not own_pair else None
        seen_pairs, made = set(), 0
        for v in range(1, config.n + 1):
            tokens = list(item.tokens)
            for i, cands in slots:
                tokens[i] = cands.draw(item_rng, weighted, item.tokens[i])
            extra = {}
            if draws is None:  # merged target or own pair: the item's own pair (function parts kept)
                pair = Pair(item.correct, item.wrong, item.lemma)
            else:
                pair = draws.next()
                tokens[t] = pair.form
                extra = {"wrong_source": PAIR_SOURCE} if item.relation else {}
            seen_pairs.add(pair)
            same = item.scoring != "sentence" and tokens[:t] == list(item.tokens[:t])
            c.same_prefix += same
            made += not same
            out.append(item.replace(variant=v, tokens=tuple(tokens), correct=pair.form, wrong=pair.alternative,
                                    lemma=pair.lemma, perturbation=SAME_PREFIX if same else PERTURBATION, **extra))
        c.with_variants += made > 0
        c.distinct[len(seen_pairs)] += 1
    return c.result(tuple(out), len(originals))


def _slots(item: Item, pool: CandidatePool, content: frozenset, c: NonceCounts, framed: FrameFilter | None,
           ctx: Context | None) -> list:
    """(position, candidates) for the content words of ``item`` to replace; counts
    the positions that keep their word (no candidate; merged token, by reason; no
    candidate that fits the sentence, :func:`_fitting`)."""
    slots = []
    for i, (word, upos, feats) in enumerate(zip(item.tokens, item.pos, item.feats)):
        if i == item.target_index or upos not in content:
            continue
        c.positions[upos] += 1
        merged = pool.merged_lemma(word, upos, feats)
        if merged is not None:
            c.fused[upos] += 1
            cands, why = pool.fused_candidates(word, merged, upos, feats)
            if cands is None:
                c.fused_unchanged[why] += 1
                continue
        else:
            key = pool.key(word, upos, feats)
            cands = pool.candidates(key)
            if cands is None or not cands.available(word):
                c.no_cand[upos] += 1
                continue
            if ctx is not None:
                cands = fitting(item, i, cands, key, pool, framed, ctx, c)
            else:
                gender = _gender_before(item, i, pool)
                cands = pool.gender_fits(cands, key, gender) if gender else cands
                if cands is None or not cands.available(word):
                    c.no_gender += 1
                    cands = None
            if cands is None:
                continue
        slots.append((i, cands))
    return slots


def _gender_before(item: Item, i: int, pool: CandidatePool) -> str:
    """The Gender a noun without one at ``i`` must fit: the word before it (an
    article, a preposition with one, an adjective), when it has a single one and
    the treebank gives nouns a Gender; else ``""``."""
    upos, feats = item.pos[i], item.feats[i]
    if i == 0 or upos not in GENDER_POS or "Gender=" in feats or not pool.gendered(upos):
        return ""
    if item.pos[i - 1] not in ("DET", "ADP", "ADJ"):
        return ""
    gender = parse_feats(item.feats[i - 1]).get("Gender", "")
    return "" if "," in gender else gender


class _PairDraws:
    """An item's target pairs, drawn without replacement until every pair has
    been used once, then again: the variants spread over the available lemmas."""

    #: weighted draws: redraws before accepting a pair already used
    RETRIES = 20

    def __init__(self, pairs, rng: random.Random, weighted: bool, exclude: str):
        self.pairs, self.rng, self.weighted, self.exclude = pairs, rng, weighted, exclude
        self.left = pairs.available(exclude)
        self.used: set = set()

    def next(self) -> Pair:
        if len(self.used) >= self.left:
            self.used.clear()
        pair = self.pairs.draw(self.rng, self.weighted, self.exclude)
        tries = 0
        while pair in self.used and tries < (self.RETRIES if self.weighted else 10 * self.left):
            pair = self.pairs.draw(self.rng, self.weighted, self.exclude)
            tries += 1
        self.used.add(pair)
        return pair


# --- a vocabulary for the treebank ---------------------------------------------------

def treebank_vocab(path, table=None) -> frozenset[str]:
    """The words of an LM vocabulary (:func:`formats.vocab.vocab_words`). With
    ``table``, also checks that some vocabulary word is a word of the treebank."""
    try:
        words = vocab_words(path)
    except AgreeError as e:
        raise NonceError(str(e)) from None
    if table is not None and not any(a.form in words for a in table.counts):
        raise NonceError(f"{vocab_path(path)}: the vocabulary has no usable words: none of its {len(words)} "
                         f"words occurs in the treebank's paradigms.tsv")
    return words