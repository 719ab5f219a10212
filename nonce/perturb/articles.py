"""``articles``: articles removed or swapped for the other definiteness (WildNLP "articles").

Severity: the probability that each article in scope is changed. An article is a
``DET`` token whose form is in the language's article set (en: a, an, the; it:
il, lo, la, i, gli, le, l', un, uno, una, un'). Modes (option ``mode``):

- ``remove`` (default): the article is deleted (the token count falls);
- ``swap``: it is replaced by the article of the other definiteness with the same
  number (and, in Italian, gender): en the <-> a/an (``an`` before a vowel letter;
  ``the`` is swapped only when the next noun is not plural, so no number cue is
  added), it il<->un, lo<->uno, la<->una, l'<->un/un', and the plural definites
  with no indefinite counterpart swap among themselves (i<->gli; ``le`` has none
  and stays). Number is never changed, so an article can never act as an attractor;
- ``mixed``: each changed article is removed or swapped with equal chance
  (removed when it has no swap).
"""
from __future__ import annotations

from nonce.perturb.base import Draft, ModeAspect, Option, register

ARTICLES = {
    "en": frozenset({"a", "an", "the"}),
    "it": frozenset({"il", "lo", "la", "i", "gli", "le", "l'", "un", "uno", "una", "un'"}),
}
_IT_SWAP = {"il": "un", "lo": "uno", "la": "una", "un": "il", "uno": "lo", "una": "la",
            "un'": "l'", "i": "gli", "gli": "i"}
_VOWELS = set("aeiouAEIOU")


def _key(form: str) -> str:
    return form.lower().replace("\u2019", "'")


def _recase(new: str, old: str) -> str:
    if "\u2019" in old:
        new = new.replace("'", "\u2019")
    if old.isupper() and len(old) > 1:
        return new.upper()
    return new[:1].upper() + new[1:] if old[:1].isupper() else new


def _next_noun(draft: Draft, i: int, window: int = 4) -> int | None:
    for j in range(i + 1, min(len(draft), i + 1 + window)):
        if draft.pos[j] in ("NOUN", "PROPN"):
            return j
    return None


def swap_article(draft: Draft, i: int, lang: str) -> str | None:
    """The other-definiteness article for token i, or None when there is none."""
    form = _key(draft.tokens[i])
    following = draft.tokens[i + 1] if i + 1 < len(draft) else ""
    if lang == "en":
        if form in ("a", "an"):
            new = "the"
        else:
            noun = _next_noun(draft, i)
            if noun is None or "Number=Plur" in draft.feats[noun]:
                return None
            new = "an" if following[:1] in _VOWELS else "a"
    elif form == "l'":
        new = "un'" if "Gender=Fem" in draft.feats[i] else "un"
    else:
        new = _IT_SWAP.get(form)
        if new is None:
            return None
    return _recase(new, draft.tokens[i])


def _definiteness(feats: str, new: str, lang: str) -> str:
    """The article's features with Definite set for its new form."""
    value = "Ind" if _key(new) in ("a", "an", "un", "uno", "una", "un'") else "Def"
    if "Definite=" not in feats:
        return feats
    return "|".join(f"Definite={value}" if f.startswith("Definite=") else f for f in feats.split("|"))


@register
class Articles(ModeAspect):
    name = "articles"
    summary = "articles removed or swapped (definite <-> indefinite, same number)"
    severity_meaning = "a per-article probability"
    axis_label = "severity (per-article probability)"
    changes_length = True
    options_spec = {"mode": Option("remove", "remove, swap or mixed", choices=("remove", "swap", "mixed"))}

    def prepare(self, items) -> None:
        self.lang = self.language(items, sorted(ARTICLES))

    def perturb(self, draft: Draft, rng) -> int:
        articles = ARTICLES[self.lang]
        found = [i for i in draft.scope(self.options["scope"])
                 if draft.pos[i] == "DET" and _key(draft.tokens[i]) in articles]
        draw, how = rng("articles"), rng("mode")
        chosen = [i for i in found if draw.random() < self.severity]
        changes = 0
        for i in reversed(chosen):  # right to left: deletions keep earlier indices valid
            mode = self.options["mode"]
            if mode == "mixed":
                mode = "remove" if how.random() < 0.5 else "swap"
            new = swap_article(draft, i, self.lang)
            if mode == "swap" and new is None:
                if self.options["mode"] == "swap":
                    continue
                mode = "remove"
            if mode == "remove":
                draft.delete(i)
            else:
                draft.replace(i, new, feats=_definiteness(draft.feats[i], new, self.lang))
            changes += 1
        return changes
