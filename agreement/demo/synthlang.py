"""A seeded generator of a small language with real long-distance number agreement.

The demo (``agree demo``) needs a treebank and a training corpus that the project
makes itself, with nothing downloaded. This module writes both from one grammar:

* an English-like lexicon of a few hundred lemmas (``dog/dogs``, ``runs/run``),
  in which determiners (``this/these``) and adjectives also agree in number
  (plural adjectives add ``-s``: ``the bigs dogs``, a deliberate non-English trait
  so that every content POS has a Number paradigm for ``agree nonce``);
* subjects modified by prepositional phrases (``the dog near the old cats runs``),
  subject relatives (``the dog that chases the cats runs``) and object relatives
  (``the dog that the cats chase runs``), whose nouns are attractors when their
  number differs from the subject's; pre-verbal adverbs; coordinated verb phrases
  (``the dog chases the cats near the box and sleeps``).

Why this shape: the modifier's number is drawn independently of the head's, while
unmodified subjects sit right before their verb. So in the training text the noun
nearest to a verb agrees with it more often than chance, and a model that reads
only the last four words (a 5-gram) is pulled towards the attractor, whereas a
model that tracks the structure (an LSTM, ideally) is not. The attractor usually
lies within five words of the target and the cue farther away.

Outputs (:func:`write_synthetic`): ``treebank.conllu`` in UD format (ids, forms,
lemmas, UPOS, canonical features with ``Number`` on nouns, adjectives, determiners
and finite verbs, heads, deprels) and ``corpus.txt``, tokenised sentences from the
same grammar, one per line, none of which is a treebank sentence. Same seed ->
byte-identical files (one ``random.Random`` per output, seeded from a string).
"""
from __future__ import annotations

import itertools
import os
import random
from dataclasses import dataclass
from pathlib import Path

from agreement.errors import AgreeError

SING, PLUR = "Sing", "Plur"

# --- lexicon -----------------------------------------------------------------
# Lemmas in rough order of frequency (weights are Zipf-like over this order).
# Every surface form belongs to exactly one (lemma, POS): checked at import.
NOUNS = """dog cat bird horse cow pig goat duck frog fox wolf bear lion tiger rabbit
snake owl eagle hawk crow shark whale seal otter beaver camel zebra monkey donkey
parrot pigeon spider beetle ant bee wasp moth worm snail lizard turtle boy girl
teacher doctor farmer baker artist student pilot driver singer dancer writer lawyer
nurse soldier sailor king queen prince princess knight clerk chef poet painter
visitor neighbor stranger cousin uncle aunt sister brother box car house tree table
chair lamp book window bottle cup plate spoon ball toy hat bag basket bridge tower
garden river lake hill road street wall gate roof bench bell candle mirror ticket
coin button pencil stone flower apple cake cookie sandwich kettle blanket pillow
carpet barrel bucket ladder wagon rocket engine robot puppet statue castle village
island forest desert valley cloud planet""".split()
INTRANSITIVE = """sleep run walk swim laugh smile cry sing dance jump sit stand wait
arrive rest shout whisper fall grow shine glow float sink wander travel hide yawn
sneeze cough blink shiver tremble giggle snore kneel crawl hop drift vanish appear
sigh stumble hurry linger pause bounce glide""".split()
TRANSITIVE = """chase see watch like love hate help follow find visit push pull carry
hold touch kick bite greet admire fear trust blame praise ignore notice remember
forget call meet catch feed wash draw build lift throw hug tickle scare amuse annoy
please thank invite teach hire pay answer obey protect rescue tease punish approach
surprise""".split()
ADJECTIVES = """big small old young red blue green happy sad tall short quiet loud
brave clever lazy busy angry calm proud shy rich poor strong weak bright dark warm
cold soft hard heavy wild gentle kind cruel funny strange famous hungry sleepy noisy
tiny huge pretty ugly""".split()
ADVERBS = """often rarely always never sometimes quickly slowly quietly loudly happily
usually seldom gladly proudly suddenly eagerly calmly gently clearly surely""".split()
PREPOSITIONS = "near behind beside under above with without from among around beyond".split()

# Determiners: (form, features). "the" carries no number, the others agree.
DETERMINERS = {
    SING: [("the", "Definite=Def|PronType=Art"), ("this", "Number=Sing|PronType=Dem"),
           ("every", "Number=Sing|PronType=Tot")],
    PLUR: [("the", "Definite=Def|PronType=Art"), ("these", "Number=Plur|PronType=Dem"),
           ("some", "Number=Plur|PronType=Ind")],
}
DET_WEIGHTS = (6, 2, 1)


def _suffix_s(word: str) -> str:
    """English -s spelling: box->boxes, baby->babies, day->days, dog->dogs."""
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


@dataclass(frozen=True)
class Lemma:
    """One lemma: ``lemma`` (citation form), ``upos``, its singular and plural forms,
    and the features shared by both forms (``Number`` is added per form)."""
    lemma: str
    upos: str
    sing: str
    plur: str
    feats: str = ""   # without Number, canonical order (e.g. "Degree=Pos")
    transitive: bool = False

    def form(self, number: str) -> str:
        return self.sing if number == SING else self.plur

    def features(self, number: str) -> str:
        # Canonical UD order is alphabetical by feature name (case-insensitive).
        parts = ([self.feats] if self.feats else []) + [f"Number={number}"]
        items = sorted("|".join(parts).split("|"), key=lambda f: f.lower())
        return "|".join(items)


_VERB_FEATS = "Mood=Ind|Person=3|Tense=Pres|VerbForm=Fin"
LEXICON: dict[str, list[Lemma]] = {
    "NOUN": [Lemma(n, "NOUN", n, _suffix_s(n)) for n in NOUNS],
    "VERB_I": [Lemma(v, "VERB", _suffix_s(v), v, _VERB_FEATS) for v in INTRANSITIVE],
    "VERB_T": [Lemma(v, "VERB", _suffix_s(v), v, _VERB_FEATS, transitive=True) for v in TRANSITIVE],
    "ADJ": [Lemma(a, "ADJ", a, _suffix_s(a), "Degree=Pos") for a in ADJECTIVES],
}


def _check_lexicon() -> None:
    seen: dict[str, str] = {}
    for key, lemmas in LEXICON.items():
        for lem in lemmas:
            for form in {lem.sing, lem.plur}:
                if form in seen:
                    raise AssertionError(f"form {form!r} in {seen[form]} and {key}")
                seen[form] = key
    for form in ADVERBS + PREPOSITIONS + ["that", "and"]:
        if form in seen:
            raise AssertionError(f"function/adverb form {form!r} clashes with {seen[form]}")
        seen[form] = "closed"


_check_lexicon()


@dataclass(frozen=True)
class GrammarConfig:
    """Probabilities of the grammar's choices (all per opportunity)."""
    p_plural: float = 0.5          # number of a fresh noun phrase
    p_subject_pp: float = 0.35     # subject modified by a PP ...
    p_subject_rc: float = 0.35     # ... or by a relative clause (else unmodified)
    p_object_rc: float = 0.5       # a relative clause is an object relative
    p_nested_pp: float = 0.25      # a PP's noun takes another PP
    p_adjective: float = 0.35      # each of up to two adjective slots is filled
    p_adverb: float = 0.3          # an adverb before a verb
    p_transitive: float = 0.5      # a verb phrase has an object
    p_object_pp: float = 0.3       # an object is modified by a PP
    p_intransitive_pp: float = 0.4  # an intransitive verb takes a PP
    p_coordination: float = 0.3    # the main verb phrase is coordinated
    zipf: float = 0.7              # lemma weights 1/rank**zipf
    lexicon: float = 1.0           # share of each class's lemmas used (the most frequent first)


class _Tok:
    """A node while building; ``head`` is another _Tok or None (root)."""
    __slots__ = ("form", "lemma", "upos", "feats", "head", "deprel")

    def __init__(self, form, lemma, upos, feats="_", deprel="dep"):
        self.form, self.lemma, self.upos, self.feats = form, lemma, upos, feats or "_"
        self.head, self.deprel = None, deprel


class Generator:
    """Draws sentences (lists of :class:`_Tok`, in order) from the grammar."""

    def __init__(self, rng: random.Random, config: GrammarConfig = GrammarConfig()):
        self.rng, self.c = rng, config
        if not 0 < config.lexicon <= 1:
            raise AgreeError(f"synthetic language: lexicon share must be in (0, 1], not {config.lexicon}")
        # A smaller lexicon lets a small model learn every word's number from less text.
        self._lemmas = {k: v[:max(4, round(len(v) * config.lexicon))] for k, v in LEXICON.items()}
        self._weights = {k: list(itertools.accumulate(1 / (r + 1) ** config.zipf for r in range(len(v))))
                         for k, v in self._lemmas.items()}

    def _lemma(self, key: str) -> Lemma:
        return self.rng.choices(self._lemmas[key], cum_weights=self._weights[key])[0]

    def _number(self) -> str:
        return PLUR if self.rng.random() < self.c.p_plural else SING

    def _word(self, key: str, number: str, deprel: str) -> _Tok:
        lem = self._lemma(key)
        return _Tok(lem.form(number), lem.lemma, lem.upos, lem.features(number), deprel)

    def noun_phrase(self, number: str, deprel: str, depth: int, modifiers: bool) -> tuple[list[_Tok], _Tok]:
        """``det (adj){0,2} noun [pp | rc]``; returns the tokens and the noun."""
        det_form, det_feats = self.rng.choices(DETERMINERS[number], weights=DET_WEIGHTS)[0]
        det = _Tok(det_form, det_form, "DET", det_feats, "det")
        adjs = [self._word("ADJ", number, "amod") for _ in range(2) if self.rng.random() < self.c.p_adjective]
        noun = self._word("NOUN", number, deprel)
        for t in [det] + adjs:
            t.head = noun
        toks = [det] + adjs + [noun]
        if modifiers and depth < 3:
            r = self.rng.random()
            if r < self.c.p_subject_pp:
                toks += self.prep_phrase(noun, "nmod", depth + 1)
            elif r < self.c.p_subject_pp + self.c.p_subject_rc:
                toks += self.relative_clause(noun, number, depth + 1)
        return toks, noun

    def prep_phrase(self, head: _Tok, deprel: str, depth: int) -> list[_Tok]:
        """``prep det (adj) noun [pp]`` attached to ``head``; the noun's number is free,
        so it is an attractor whenever it differs from the subject's."""
        prep = self.rng.choice(PREPOSITIONS)
        case = _Tok(prep, prep, "ADP", "_", "case")
        toks, noun = self.noun_phrase(self._number(), deprel, depth, modifiers=False)
        case.head, noun.head = noun, head
        toks = [case] + toks
        if depth < 3 and self.rng.random() < self.c.p_nested_pp:
            toks += self.prep_phrase(noun, "nmod", depth + 1)
        return toks

    def relative_clause(self, head: _Tok, number: str, depth: int) -> list[_Tok]:
        """``that [adv] verb ...`` (subject relative) or ``that NP [adv] verb`` (object
        relative), the verb attached to ``head`` as acl:relcl."""
        rel = _Tok("that", "that", "PRON", "PronType=Rel")
        if self.rng.random() < self.c.p_object_rc:
            rel.deprel = "obj"
            subj_number = self._number()
            subj, subj_noun = self.noun_phrase(subj_number, "nsubj", depth, modifiers=False)
            adv = self._adverb()
            verb = self._word("VERB_T", subj_number, "acl:relcl")
            subj_noun.head = verb
            toks = [rel] + subj + adv + [verb]
        else:
            rel.deprel = "nsubj"
            adv = self._adverb()
            verb, tail = self.verb_phrase(number, depth, deprel="acl:relcl")
            toks = [rel] + adv + [verb] + tail
        for t in [rel] + adv:
            t.head = verb
        verb.head = head
        return toks

    def _adverb(self) -> list[_Tok]:
        if self.rng.random() >= self.c.p_adverb:
            return []
        a = self.rng.choice(ADVERBS)
        return [_Tok(a, a, "ADV", "_", "advmod")]

    def verb_phrase(self, number: str, depth: int, deprel: str) -> tuple[_Tok, list[_Tok]]:
        """A finite verb agreeing with ``number`` and what follows it (object or PP)."""
        if self.rng.random() < self.c.p_transitive:
            verb = self._word("VERB_T", number, deprel)
            obj, noun = self.noun_phrase(self._number(), "obj", depth + 1, modifiers=False)
            noun.head = verb
            if self.rng.random() < self.c.p_object_pp and depth < 3:
                obj += self.prep_phrase(noun, "nmod", depth + 1)
            return verb, obj
        verb = self._word("VERB_I", number, deprel)
        if self.rng.random() < self.c.p_intransitive_pp and depth < 3:
            return verb, self.prep_phrase(verb, "obl", depth + 1)
        return verb, []

    def sentence(self) -> list[_Tok]:
        number = self._number()
        subj, noun = self.noun_phrase(number, "nsubj", 0, modifiers=True)
        adv = self._adverb()
        verb, tail = self.verb_phrase(number, 0, deprel="root")
        noun.head = verb
        for t in adv:
            t.head = verb
        toks = subj + adv + [verb] + tail
        if self.rng.random() < self.c.p_coordination:
            cc = _Tok("and", "and", "CCONJ", "_", "cc")
            adv2 = self._adverb()
            verb2, tail2 = self.verb_phrase(number, 0, deprel="conj")
            cc.head, verb2.head = verb2, verb
            for t in adv2:
                t.head = verb2
            toks += [cc] + adv2 + [verb2] + tail2
        punct = _Tok(".", ".", "PUNCT", "_", "punct")
        punct.head = verb
        toks.append(punct)
        # Sentence-initial capital, as in real text (the first word is always a determiner).
        toks[0].form = toks[0].form.capitalize()
        return toks


def to_conllu(toks: list[_Tok], sent_id: str) -> str:
    """One sentence block in CoNLL-U (10 columns, 1-based ids, head 0 = root)."""
    ids = {id(t): i + 1 for i, t in enumerate(toks)}
    text = " ".join(t.form for t in toks[:-1]) + toks[-1].form   # no space before the final "."
    lines = [f"# sent_id = {sent_id}", f"# text = {text}"]
    for i, t in enumerate(toks):
        head = ids[id(t.head)] if t.head is not None else 0
        misc = "SpaceAfter=No" if i == len(toks) - 2 else "_"
        lines.append("\t".join([str(i + 1), t.form, t.lemma, t.upos, "_", t.feats,
                                str(head), t.deprel, "_", misc]))
    return "\n".join(lines) + "\n\n"


@dataclass(frozen=True)
class SynthResult:
    """What :func:`write_synthetic` wrote.

    treebank: the CoNLL-U file; corpus: the plain training text (one tokenised
    sentence per line); sentences: treebank sentences; corpus_sentences and
    corpus_tokens: size of the training text (tokens counted without <eos>)."""
    treebank: Path
    corpus: Path
    sentences: int
    corpus_sentences: int
    corpus_tokens: int


def write_synthetic(out_dir: str | os.PathLike, *, seed: int = 1111, sentences: int = 3000,
                    corpus_tokens: int = 300_000, config: GrammarConfig = GrammarConfig()) -> SynthResult:
    """Write ``treebank.conllu`` (``sentences`` sentences) and ``corpus.txt`` (at least
    ``corpus_tokens`` tokens, disjoint from the treebank's sentences) into ``out_dir``."""
    if sentences < 1 or corpus_tokens < 1:
        raise AgreeError("synthetic language: sizes must be positive")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tb_gen = Generator(random.Random(f"synthlang-treebank-{seed}"), config)
    seen: set[str] = set()
    treebank = out / "treebank.conllu"
    with open(treebank, "w", encoding="utf-8", newline="\n") as fh:
        for i in range(sentences):
            toks = tb_gen.sentence()
            seen.add(" ".join(t.form for t in toks))
            fh.write(to_conllu(toks, f"synth-{i + 1:05d}"))
    corpus_gen = Generator(random.Random(f"synthlang-corpus-{seed}"), config)
    corpus = out / "corpus.txt"
    n_tok = n_sent = 0
    with open(corpus, "w", encoding="utf-8", newline="\n") as fh:
        while n_tok < corpus_tokens:
            line = " ".join(t.form for t in corpus_gen.sentence())
            if line in seen:   # short sentences recur; keep train and test disjoint
                continue
            fh.write(line + "\n")
            n_tok += line.count(" ") + 1
            n_sent += 1
    return SynthResult(treebank, corpus, sentences, n_sent, n_tok)
