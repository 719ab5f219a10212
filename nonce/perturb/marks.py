"""``marks``: punctuation marks inserted and removed (WildNLP "marks").

Severity: a probability applied per gap between words (a random mark is inserted
there) and per existing punctuation mark in scope (it is deleted). Option
``mode``: ``both`` (default), ``insert`` or ``remove``. Inserted marks are
tokens of their own (UPOS ``PUNCT``, no features), never placed next to
another mark; a mark may land right before the target or right after the cue,
which never changes either. The token count changes by insertions minus
removals, and the item's ``punct`` flag follows its context.
"""
from __future__ import annotations

from nonce.perturb.base import Draft, ModeAspect, Option, register

#: marks that can be inserted
MARKS = (",", ".", ";", ":", "!", "?", "-", '"')


def _gaps(draft: Draft, scope: str) -> list[int]:
    """Positions ``g`` where a mark could be inserted (before token g)."""
    if scope == "prefix":
        span = range(1, draft.target + 1)
    elif scope == "context":
        lo, hi = sorted((draft.cue, draft.target))
        span = range(lo + 1, hi + 1)
    else:
        span = range(1, len(draft) + 1)
    return [g for g in span if draft.pos[g - 1] != "PUNCT" and (g == len(draft) or draft.pos[g] != "PUNCT")]


@register
class Marks(ModeAspect):
    name = "marks"
    summary = "punctuation marks inserted between words and removed"
    severity_meaning = "a per-gap (insertion) and per-mark (removal) probability"
    axis_label = "severity (per-gap / per-mark probability)"
    changes_length = True
    options_spec = {"mode": Option("both", "insert, remove or both", choices=("both", "insert", "remove"))}

    def perturb(self, draft: Draft, rng) -> int:
        mode, p = self.options["mode"], self.severity
        edits = []  # (position, 0 = delete the token there | 1 = insert a mark before it, mark)
        if mode in ("both", "remove"):
            draw = rng("remove")
            edits += [(i, 0, "") for i in draft.scope(self.options["scope"])
                      if draft.pos[i] == "PUNCT" and draw.random() < p]
        if mode in ("both", "insert"):
            draw, pick = rng("insert"), rng("mark")
            for g in _gaps(draft, self.options["scope"]):
                # one draw of each kind per gap, chosen or not, so that the same seed
                # at a higher severity keeps the marks placed at a lower one
                chosen, mark = draw.random() < p, pick.choice(MARKS)
                if chosen:
                    edits.append((g, 1, mark))
        # right to left, deletions before insertions at one position, so every
        # position still refers to the original sentence when it is used
        for pos, kind, mark in sorted(edits, key=lambda e: (-e[0], e[1])):
            if kind == 0:
                draft.delete(pos)
            else:
                draft.insert(pos, mark, "PUNCT", "_")
        return len(edits)
