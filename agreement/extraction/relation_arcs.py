"""The relation miner's whole-treebank step, on NumPy arrays: every agreement
arc of every relation, the exclusions and the value checks at once
(:mod:`agreement.extraction.relations` builds the items).

Rules (method.md section 2b), each on the treebank's own annotation:

* **subj-verb**: an ``nsubj`` / ``nsubj:pass`` child -> its head when that is a
  VERB or AUX, finite (``VerbForm=Fin``, or no VerbForm at all: many treebanks
  leave it out on finite verbs) or carrying a subject layer (``Number[subj]``...:
  such a verb marks its subject whatever its form); and -> every finite AUX
  child (``aux``, ``cop`` and their subtypes) of the subject's head when that
  head is not itself the target (a participle, an adjective, a noun: *the keys
  **are** lost*, *she **has** left*).
* **subj-pred**: an ``nsubj`` / ``nsubj:pass`` child -> its head when that is an
  ADJ or a participle (``VerbForm=Part``, ``PartRes``, ``PartPres``,
  ``PartPast``: Slavic l-participles, Romance participles after *essere*).
* **det-noun**: a NOUN -> its ``det`` (or ``det:poss``, ``det:def``, ``det:art``,
  ``det:predet``) DET child.
* **adj-noun**: a NOUN -> its ``amod`` (with subtypes) ADJ child.

Exclusions, counted per relation, each arc under the first that applies:
``coordinated`` (a subject with ``conj`` children: resolved agreement),
``relative_or_interrogative`` (a subject with ``PronType=Rel``/``Int``: its
features come from its antecedent or answer), ``expletive`` (the subject's head
has an ``expl``/``expl:subj``/``expl:impers`` child: the verb may agree with the
expletive), ``fixed`` (either end heads a ``fixed`` expression), ``quantified``
(a subject with a ``nummod:gov`` / ``det:numgov`` child: the verb agrees with
the quantifier), ``noncontrolling_case`` (a subject in a case that does not
control the verb, ergative or dative, read from its own ``Case`` or from a
``case`` child's: Hindi PUD puts ``Case=Erg`` on the postposition ने and the
noun has ``Case=Acc``; the dative-subject markers को / کو carry ``Case=Acc``
and are named in :data:`NONCONTROLLING_MARKERS`; Hindi-Urdu perfective verbs agree
with the object; kept where the target has a subject layer), and, for a finite
auxiliary whose head has several subjects, ``several_subjects``.

Then, per contrasted feature: both ends must carry it (``missing_feature``); a
subject relation's target carries it as the subject layer when it has one
(``Number[subj]``), else plain; both values must be two-way values
(:data:`VALUES`; Dual, Count, Ptan, Coll, ``Person=0``, multi-valued
``Gender=Fem,Masc`` ... are counted per value in ``excluded_value``); they must
be equal (``disagreeing`` otherwise); a relation x feature whose agreeing
share (agreeing / (agreeing + disagreeing)) in the treebank is under
:data:`MIN_AGREEMENT` does not control agreement (MultiBLiMP's criterion): its
arcs are all dropped (``low_agreement_rate``); and ``min_distance <= |target - cue| <=
max_distance`` (``distance``).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from agreement.extraction.tree_arrays import global_heads, within_distance
from treebanks.columns import TreebankColumns
from treebanks.features import parse_feats

RELATIONS = ("subj-verb", "subj-pred", "det-noun", "adj-noun")
#: the features each relation can contrast (Person: subject-verb only)
RELATION_FEATURES = {"subj-verb": ("Number", "Person", "Gender"), "subj-pred": ("Number", "Gender"),
                     "det-noun": ("Number", "Gender"), "adj-noun": ("Number", "Gender")}
#: the values that enter a two-way contrast (Com: the common gender of Scandinavian
#: and Dutch, which contrasts with Neut)
VALUES = {"Number": ("Sing", "Plur"), "Person": ("1", "2", "3"), "Gender": ("Masc", "Fem", "Neut", "Com")}
FEATURES = tuple(VALUES)
EXCLUSIONS = ("coordinated", "relative_or_interrogative", "expletive", "fixed", "quantified",
              "noncontrolling_case", "several_subjects", "nominalised")
#: the share of a relation x feature's arcs that must agree for it to give items
MIN_AGREEMENT = 0.9
#: a target lemma with at least this many arcs of a relation x feature is held to
#: :data:`MIN_AGREEMENT` on its own (Romanian's genitive article *al*, a DET attached to the
#: genitive noun, agrees with the possessed noun: 66% of its arcs agree in Number)
MIN_LEMMA_ARCS = 20
#: case markers (lemmas of ``case`` children) whose subject does not control the verb although their
#: ``Case`` does not say so: the Hindi and Urdu dative को / کو (annotated ``Case=Acc``) and ergative ने / نے
NONCONTROLLING_MARKERS = frozenset({"को", "ने", "کو", "نے"})
_NONCONTROLLING_CASES = frozenset({"Erg", "Dat"})
SUBJECT_RELATIONS = ("subj-verb", "subj-pred")

_SUBJ = {"nsubj", "nsubj:pass"}
_DET = {"det", "det:poss", "det:def", "det:art", "det:predet"}
_EXPL = {"expl", "expl:subj", "expl:impers"}
_QUANT = {"nummod:gov", "det:numgov"}
_PARTICIPLE = {"Part", "PartRes", "PartPres", "PartPast"}


@dataclass(frozen=True)
class Candidates:
    """Agreeing arcs that passed every rule, one row per (arc, feature)."""
    cue: np.ndarray        #: token index over the treebank
    target: np.ndarray
    relation: np.ndarray   #: index into RELATIONS
    feature: list[str]     #: the base feature (Number, Person, Gender)
    carried: list[str]     #: the feature as the target carries it (``Number[subj]``)
    value: list[str]       #: the shared value


class _Feats:
    """Per FEATS id: what the rules read (finite, participle, PronType, Case,
    subject layers) and each feature's value id into :attr:`values`."""

    def __init__(self, names: list[str]):
        parsed = [parse_feats(f) for f in names]
        self.values: list[str] = []
        index: dict[str, int] = {}
        self._ids: dict[str, np.ndarray] = {}
        for name in FEATURES + tuple(f"{f}[subj]" for f in FEATURES):
            self._ids[name] = np.array([index.setdefault(d[name], len(index)) if name in d else -1
                                        for d in parsed], dtype=np.int64)
        index.setdefault("3", len(index))  # a noun subject's Person (third)
        self.values = list(index)
        vf = [set(d.get("VerbForm", "").split(",")) - {""} for d in parsed]
        self.finite = np.array([not v or "Fin" in v for v in vf], dtype=bool)
        self.participle = np.array([bool(v & _PARTICIPLE) for v in vf], dtype=bool)
        self.relint = np.array([bool({"Rel", "Int"} & set(d.get("PronType", "").split(","))) for d in parsed],
                               dtype=bool)
        self.noncontrolling = np.array([d.get("Case") in _NONCONTROLLING_CASES for d in parsed], dtype=bool)
        self.layered = np.array([any(f"{f}[subj]" in d for f in FEATURES) for d in parsed], dtype=bool)

    def ids(self, name: str) -> np.ndarray:
        return self._ids[name]


def _mask(names: list[str], ids: np.ndarray, wanted) -> np.ndarray:
    """Which words' DEPREL (``ids`` into ``names``) satisfies ``wanted(name)``."""
    table = np.array([bool(wanted(n)) for n in names] + [False], dtype=bool)
    return table[ids]


def _has_child(mask: np.ndarray, gh: np.ndarray) -> np.ndarray:
    out = np.zeros(len(gh), dtype=bool)
    out[gh[mask & (gh >= 0)]] = True
    return out


def find_candidates(tb: TreebankColumns, relations, features, min_distance: int, max_distance: int | None,
                    counts: dict, excluded_values: Counter) -> Candidates:
    """Every agreeing (arc, feature) of ``relations`` x ``features`` (module
    docstring), the drops counted into ``counts[(relation, feature)]`` (relation-level
    drops under feature ``""``) and ``excluded_values`` (``Number=Dual`` -> arcs)."""
    _, _, gh = global_heads(tb)
    dep_names, dep = tb.deprels()
    fe = _Feats(tb.feats_names)
    u = {name: tb.upos_names.index(name) if name in tb.upos_names else -1
         for name in ("VERB", "AUX", "ADJ", "NOUN", "DET", "PROPN")}
    f = tb.feats
    is_subj = _mask(dep_names, dep, _SUBJ.__contains__)
    child = {
        "conj": _has_child(_mask(dep_names, dep, lambda n: n.split(":")[0] == "conj"), gh),
        "fixed": _has_child(_mask(dep_names, dep, lambda n: n.split(":")[0] == "fixed"), gh),
        "expl": _has_child(_mask(dep_names, dep, _EXPL.__contains__), gh),
        "quant": _has_child(_mask(dep_names, dep, _QUANT.__contains__), gh),
        "case": _has_child(_noncontrolling_markers(tb, dep_names, dep, fe), gh),
        "det": _has_child(_mask(dep_names, dep, _DET.__contains__), gh),
    }
    nominal = np.isin(tb.upos, [u[p] for p in ("NOUN", "PROPN") if u[p] >= 0])
    _, lemmas = tb._shared("lemma")
    arcs = _arcs(tb, gh, dep_names, dep, fe, u, is_subj)
    out = ([], [], [], [], [], [])
    for r, (cue, target, pred, several) in arcs.items():
        if r not in relations:
            continue
        rel = RELATIONS.index(r)
        c = counts[(r, "")]
        c["arcs"] += len(cue)
        drops = {"fixed": child["fixed"][cue] | child["fixed"][target]}
        if r in SUBJECT_RELATIONS:
            drops = {"coordinated": child["conj"][cue], "relative_or_interrogative": fe.relint[f[cue]],
                     "expletive": child["expl"][pred], **drops, "quantified": child["quant"][cue],
                     "noncontrolling_case": (fe.noncontrolling[f[cue]] | child["case"][cue]) & ~fe.layered[f[target]],
                     "several_subjects": several}
            if r == "subj-pred":
                # a predicate with its own determiner is a nominalised adjective (German
                # `ist das beste`): it agrees with its determiner, not with the subject
                drops["nominalised"] = child["det"][target]
        keep = np.ones(len(cue), dtype=bool)
        for name in EXCLUSIONS:
            if name in drops:
                hit = keep & drops[name]
                c[name] += int(hit.sum())
                keep &= ~hit
        cue, target = cue[keep], target[keep]
        near = within_distance(np.abs(target - cue), min_distance, max_distance or None)
        c["distance"] += int((~near).sum())
        cue, target = cue[near], target[near]
        for feature in RELATION_FEATURES[r]:
            if feature in features:
                _feature_rows(fe, f, r, feature, cue, target, rel, counts[(r, feature)], excluded_values, out,
                              nominal, lemmas)
    cue, target, rel, feat, carried, value = out
    return Candidates(np.concatenate(cue or [np.zeros(0, np.int64)]), np.concatenate(target or [np.zeros(0, np.int64)]),
                      np.concatenate(rel or [np.zeros(0, np.int64)]), [x for part in feat for x in part],
                      [x for part in carried for x in part], [x for part in value for x in part])


def _arcs(tb, gh, dep_names, dep, fe: _Feats, u: dict, is_subj) -> dict:
    """relation -> (cue, target, the subject's head, several subjects) arrays."""
    upos, f = tb.upos, tb.feats
    n = len(upos)
    subj = np.flatnonzero(is_subj & (gh >= 0))
    pred = gh[subj]
    verbal = (upos == u["VERB"]) | (upos == u["AUX"])
    finite_or_layered = fe.finite[f] | fe.layered[f]
    is_target = verbal[pred] & finite_or_layered[pred] & ~fe.participle[f[pred]]
    arcs = {"subj-verb": (subj[is_target], pred[is_target], pred[is_target], np.zeros(int(is_target.sum()), bool))}
    # finite auxiliaries and copulas of a subject's head that is not a verbal target itself
    n_subj = np.bincount(pred, minlength=n)
    subject_of = np.full(n, -1, dtype=np.int64)
    subject_of[pred] = subj
    is_aux = _mask(dep_names, dep, lambda d: d.split(":")[0] in ("aux", "cop"))
    aux = np.flatnonzero(is_aux & (upos == u["AUX"]) & finite_or_layered & ~fe.participle[f] & (gh >= 0))
    head = gh[aux]
    has = subject_of[head] >= 0
    aux, head = aux[has], head[has]
    has = ~(verbal[head] & finite_or_layered[head] & ~fe.participle[f[head]])
    aux, head = aux[has], head[has]
    s = subject_of[head]
    arcs["subj-verb"] = tuple(np.concatenate([a, b]) for a, b in zip(
        arcs["subj-verb"], (s, aux, head, n_subj[head] > 1)))
    pred_target = (upos[pred] == u["ADJ"]) | fe.participle[f[pred]]
    arcs["subj-pred"] = (subj[pred_target], pred[pred_target], pred[pred_target],
                         np.zeros(int(pred_target.sum()), bool))
    for r, rel_mask, child_pos in (("det-noun", _mask(dep_names, dep, _DET.__contains__), u["DET"]),
                                   ("adj-noun", _mask(dep_names, dep, lambda d: d.split(":")[0] == "amod"), u["ADJ"])):
        t = np.flatnonzero(rel_mask & (upos == child_pos) & (gh >= 0))
        t = t[upos[gh[t]] == u["NOUN"]]
        arcs[r] = (gh[t], t, gh[t], np.zeros(len(t), bool))
    return arcs


def _noncontrolling_markers(tb: TreebankColumns, dep_names, dep, fe: _Feats) -> np.ndarray:
    """``case`` words marking an ergative or dative subject (their Case, or :data:`NONCONTROLLING_MARKERS`)."""
    lemma_names, lemmas = tb._shared("lemma")
    marker = np.array([n in NONCONTROLLING_MARKERS for n in lemma_names] + [False], dtype=bool)
    return _mask(dep_names, dep, lambda d: d.split(":")[0] == "case") & (fe.noncontrolling[tb.feats] | marker[lemmas])


def _drop_low_agreement_lemmas(same: np.ndarray, lemma: np.ndarray, c: Counter) -> np.ndarray:
    """``same`` without the arcs of target lemmas (``lemma``: each arc's) that have at least
    :data:`MIN_LEMMA_ARCS` arcs and agree in under :data:`MIN_AGREEMENT` of them; those
    agreeing arcs are counted as ``low_agreement_rate``."""
    ids, inverse, arcs = np.unique(lemma, return_inverse=True, return_counts=True)
    agreeing = np.bincount(inverse, weights=same, minlength=len(ids))
    low = (arcs >= MIN_LEMMA_ARCS) & (agreeing < MIN_AGREEMENT * arcs)
    drop = same & low[inverse]
    c["low_agreement_rate"] += int(drop.sum())
    return same & ~drop


def _feature_rows(fe: _Feats, f, relation: str, feature: str, cue, target, rel: int, c: Counter,
                  excluded_values: Counter, out, nominal, lemmas) -> None:
    """The agreeing rows of one relation and feature, the others counted. A noun or
    proper-noun subject without Person is third person (UD puts no Person on nouns)."""
    cv = fe.ids(feature)[f[cue]]
    if feature == "Person" and relation == "subj-verb":
        cv = np.where((cv < 0) & nominal[cue], fe.values.index("3"), cv)
    plain = fe.ids(feature)[f[target]]
    if relation in SUBJECT_RELATIONS:
        layer = fe.ids(f"{feature}[subj]")[f[target]]
        tv = np.where(layer >= 0, layer, plain)
        carried = np.where(layer >= 0, f"{feature}[subj]", feature)
    else:
        tv, carried = plain, np.full(len(target), feature, dtype=object)
    both = (cv >= 0) & (tv >= 0)
    c["missing_feature"] += int((~both).sum())
    cue, target, cv, tv, carried = cue[both], target[both], cv[both], tv[both], carried[both]
    two_way = np.array([v in VALUES[feature] for v in fe.values] + [False], dtype=bool)
    ok = two_way[cv] & two_way[tv]
    for k in np.flatnonzero(~ok).tolist():
        for v in {int(cv[k]), int(tv[k])}:
            if not two_way[v]:
                excluded_values[f"{feature}={fe.values[v]}"] += 1
    c["excluded_value"] += int((~ok).sum())
    cue, target, cv, tv, carried = cue[ok], target[ok], cv[ok], tv[ok], carried[ok]
    same = cv == tv
    c["disagreeing"] += int((~same).sum())
    c["agreeing"] += int(same.sum())
    if len(same) and same.mean() < MIN_AGREEMENT:
        c["low_agreement_rate"] += int(same.sum())
        same = np.zeros(len(same), dtype=bool)
    else:
        same = _drop_low_agreement_lemmas(same, lemmas[target], c)
    out[0].append(cue[same])
    out[1].append(target[same])
    out[2].append(np.full(int(same.sum()), rel, dtype=np.int64))
    out[3].append([feature] * int(same.sum()))
    out[4].append([str(x) for x in carried[same].tolist()])
    out[5].append([fe.values[v] for v in cv[same].tolist()])
