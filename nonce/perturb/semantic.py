"""``semantic``: verbs replaced by verbs at a chosen cosine similarity (after Ng et al.).

Severity: the **target cosine similarity** s in [-1, 1] between the original
verb and its replacement in a word-vector space; 1 leaves the item as it is and
lower values drift the meaning further, towards the nonce extreme. Each ``VERB``
in scope (cue and target excluded) is replaced, with probability ``rate``
(default 1), by the form of another verb lemma whose vector has cosine in
[s - band, s + band] (``band`` default 0.05) to the original form's vector,
chosen uniformly among those. The replacement is re-inflected: it is that
lemma's most frequent form with exactly the original token's features in the
treebank's paradigm table, spelled in lower case where the vectors know that
spelling (so ``thinks`` is replaced by a 3rd-singular present
form). Verbs without a vector, or with no candidate in the band, stay as they
are and are counted (``missed`` in the manifest). Capitalisation follows the
original. The token count never changes.

Resources (options): ``vectors`` (:class:`nonce.vectors.WordVectors`, or a path
given to :func:`nonce.vectors.load_vectors`) and ``paradigms`` (a
``treebanks.paradigms.ParadigmTable`` or the path of a ``paradigms.tsv``).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from nonce.errors import NonceError
from nonce.perturb.base import Aspect, Draft, Option, register
from nonce.vectors import WordVectors, load_vectors
from treebanks.errors import TreebankError
from treebanks.paradigms import ParadigmTable

UPOS = "VERB"


def _load_paradigms(path):
    try:
        return ParadigmTable.load(path)
    except TreebankError as e:
        raise NonceError(str(e)) from None


def _recase(new: str, old: str) -> str:
    return new[:1].upper() + new[1:] if old[:1].isupper() and not new[:1].isupper() else new


@register
class Semantic(Aspect):
    name = "semantic"
    summary = "context verbs replaced by verbs at a target cosine similarity"
    severity_range = (-1.0, 1.0)
    severity_meaning = "the target cosine similarity of replacement verbs"
    identity_severity = 1.0
    axis_label = "cosine similarity of replaced verbs (1 = original)"
    options_spec = {
        "vectors": Option(None, "word vectors (word2vec text file or model directory)", type=load_vectors),
        "paradigms": Option(None, "paradigm table (paradigms.tsv) for re-inflection", type=_load_paradigms),
        "band": Option(0.05, "half-width of the similarity band", type=float),
        "rate": Option(1.0, "probability that each verb in scope is replaced", type=float),
    }

    def __init__(self, severity, options=None):
        super().__init__(severity, options)
        if self.options["vectors"] is None:
            raise NonceError("semantic perturbation needs word vectors ({vectors} FILE|MODEL_DIR: "
                             "a word2vec text file or a trained model directory)", fields=True)
        if not isinstance(self.options["vectors"], WordVectors):
            raise NonceError("semantic: option vectors must be WordVectors or a path")
        if self.options["paradigms"] is None:
            raise NonceError("semantic perturbation needs the treebank's paradigm table "
                             "(paradigms.tsv in the test set directory, or {paradigms} FILE)",
                             fields=True)
        if not 0 < self.options["band"] <= 2:
            raise NonceError(f"semantic: band {self.options['band']:g} out of range (0, 2]")
        if not 0 <= self.options["rate"] <= 1:
            raise NonceError(f"semantic: rate {self.options['rate']:g} out of range [0, 1]")
        self.stats = {"verbs": 0, "replaced": 0, "missed": 0, "no_vector": 0}

    def condition(self) -> str:
        band = self.options["band"]
        return "" if band == self.options_spec["band"].default else f"band{band:g}"

    def prepare(self, items) -> None:
        vectors: WordVectors = self.options["vectors"]
        best: dict[tuple[str, str], str] = {}   # (lemma, feats) -> its form with a vector
        self.lemma_of: dict[tuple[str, str], str] = {}  # (form, feats) -> lemma
        # most frequent analysis first (ties: alphabetical), so setdefault keeps the
        # most frequent spelling of each inflection and the most frequent lemma of a form
        rows = sorted(((a, n) for a, n in self.options["paradigms"].counts.items() if a.upos == UPOS),
                      key=lambda r: (-r[1], r[0].lemma, r[0].form, r[0].feats))
        for a, _ in rows:
            self.lemma_of.setdefault((a.form, a.feats), a.lemma)
            # candidates are spelled in lower case where the vectors know it (an imperative's
            # most frequent spelling is often sentence-initial "Take"); _recase restores case
            spelling = a.form.lower() if a.form.lower() in vectors.index else a.form
            if spelling in vectors.index:
                best.setdefault((a.lemma, a.feats), spelling)
        by_feats = defaultdict(list)
        for (lemma, feats), form in sorted(best.items()):
            by_feats[feats].append((lemma, form))
        # per feature bundle: candidate lemmas, their forms and unit vectors (rows)
        self.candidates = {
            feats: ([l for l, _ in rows], [f for _, f in rows],
                    vectors.unit[[vectors.index[f] for _, f in rows]])
            for feats, rows in by_feats.items()}

    def _vector_word(self, form: str) -> str | None:
        vectors = self.options["vectors"]
        if form in vectors.index:
            return form
        return form.lower() if form.lower() in vectors.index else None

    def perturb(self, draft: Draft, rng) -> int:
        vectors: WordVectors = self.options["vectors"]
        lo, hi = self.severity - self.options["band"], self.severity + self.options["band"]
        draw, pick = rng("rate"), rng("semantic")
        changes = 0
        for i in draft.scope(self.options["scope"]):
            if draft.pos[i] != UPOS or not draw.random() < self.options["rate"]:
                continue
            self.stats["verbs"] += 1
            form, feats = draft.tokens[i], draft.feats[i]
            word = self._vector_word(form)
            if word is None:
                self.stats["no_vector"] += 1
                continue
            lemma = self.lemma_of.get((form, feats)) or self.lemma_of.get((form.lower(), feats)) or form.lower()
            lemmas, forms, unit = self.candidates.get(feats, ([], [], None))
            choice = None
            if forms:
                sims = unit @ vectors.unit[vectors.index[word]]  # cosines, (n_candidates,)
                ok = [j for j in np.flatnonzero((sims >= lo) & (sims <= hi))
                      if lemmas[j] != lemma and forms[j].lower() != form.lower()]
                if ok:
                    choice = forms[ok[pick.randrange(len(ok))]]
            if choice is None:
                self.stats["missed"] += 1
                continue
            draft.replace(i, _recase(choice, form))
            self.stats["replaced"] += 1
            changes += 1
        return changes
