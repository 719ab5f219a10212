"""``drop-space``: the space between two words removed, merging them (WildNLP "remove space").

Severity: the probability that each eligible gap is closed. A gap is eligible
when both words around it are in scope (so never next to the cue or the target)
and both contain a letter or digit: the space before a comma is an artefact of
tokenisation, not a space a writer could drop. Closed gaps in a row merge three
or more words. The token count falls by the number of closed gaps; the merged
token keeps the POS and features of its last word (:meth:`Draft.merge`).
"""
from __future__ import annotations

from nonce.perturb.base import Aspect, Draft, register


def _wordlike(token: str) -> bool:
    return any(ch.isalnum() for ch in token)


@register
class DropSpace(Aspect):
    name = "drop-space"
    summary = "spaces between words removed (words merged)"
    severity_meaning = "a per-space probability"
    axis_label = "severity (per-space probability)"
    changes_length = True

    def perturb(self, draft: Draft, rng) -> int:
        inside = set(draft.scope(self.options["scope"]))
        gaps = [i for i in sorted(inside) if i + 1 in inside
                and _wordlike(draft.tokens[i]) and _wordlike(draft.tokens[i + 1])]
        draw = rng("gaps")
        closed = [i for i in gaps if draw.random() < self.severity]
        for i in reversed(closed):  # right to left: earlier indices stay valid
            draft.merge(i)
        return len(closed)
