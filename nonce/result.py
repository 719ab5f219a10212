"""What a nonce run made (:class:`NonceResult`, its manifest's counts) and the tallies
that :func:`nonce.generate.make_nonce` and :mod:`nonce.fit` keep while making it."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from formats.items import Item


@dataclass(frozen=True)
class NonceResult:
    """What :func:`make_nonce` made.

    items                  per original item, in input order: variant 0, then 1..n
    originals              original items read
    with_variants          originals that got variants (the others: no target pair)
    positions              content positions (target excluded) per POS, once per item with variants
    positions_no_candidate those of them that kept their word (no other candidate)
    targets                targets per POS, once per original item
    targets_no_pair        those with no replacement pair (item kept as original only)
    positions_no_frame     verb positions that kept their word: no candidate with their frame
                           (and positions_no_agreement, _no_harmony, _no_main_form, cues_ambiguous:
                           :mod:`nonce.fit`)
    positions_no_gender    nouns without Gender that kept their word: no candidate fits the word before
    targets_no_frame       verb targets with pairs, none with their frame: they keep their own pair
                           (and targets_no_harmony, targets_before_adjective, targets_syncretic)
    same_prefix            variants flagged SAME_PREFIX (not in ``variants``)
    """
    items: tuple[Item, ...]
    originals: int
    with_variants: int
    positions: dict[str, int] = field(default_factory=dict)
    positions_no_candidate: dict[str, int] = field(default_factory=dict)
    targets: dict[str, int] = field(default_factory=dict)
    targets_no_pair: dict[str, int] = field(default_factory=dict)
    positions_fused: dict[str, int] = field(default_factory=dict)
    positions_fused_unchanged: dict[str, int] = field(default_factory=dict)
    targets_fused: int = 0
    distinct_pairs: dict[int, int] = field(default_factory=dict)
    targets_own_pair: dict[str, int] = field(default_factory=dict)
    positions_no_frame: int = 0
    targets_no_frame: int = 0
    positions_no_gender: int = 0
    positions_no_agreement: int = 0
    positions_no_harmony: int = 0
    positions_no_main_form: int = 0
    cues_ambiguous: int = 0
    targets_no_harmony: int = 0
    targets_before_adjective: int = 0
    targets_syncretic: int = 0
    same_prefix: int = 0
    frames_used: bool = False

    @property
    def variants(self) -> int:
        """Nonce variants: every item made but the originals and the SAME_PREFIX ones."""
        return len(self.items) - self.originals - self.same_prefix

    def counts(self) -> dict:
        """The manifest's counts (POS keys sorted)."""
        srt = lambda d: dict(sorted(d.items()))  # noqa: E731
        return {"originals": self.originals, "with_variants": self.with_variants,
                "variants": self.variants,
                "targets": srt(self.targets), "targets_no_pair": srt(self.targets_no_pair),
                "positions": srt(self.positions), "positions_no_candidate": srt(self.positions_no_candidate),
                "positions_fused": srt(self.positions_fused),
                "positions_fused_unchanged": srt(self.positions_fused_unchanged),
                "targets_fused": self.targets_fused,
                "distinct_pairs": {str(k): v for k, v in sorted(self.distinct_pairs.items())},
                **({"targets_own_pair": srt(self.targets_own_pair)} if self.targets_own_pair else {}),
                **({"frames": {"positions_no_frame": self.positions_no_frame,
                               "positions_no_agreement": self.positions_no_agreement,
                               "positions_no_harmony": self.positions_no_harmony,
                               "positions_no_main_form": self.positions_no_main_form,
                               "cues_ambiguous": self.cues_ambiguous,
                               "targets_no_frame": self.targets_no_frame,
                               "targets_no_harmony": self.targets_no_harmony,
                               "targets_before_adjective": self.targets_before_adjective,
                               "targets_syncretic": self.targets_syncretic}}
                   if self.frames_used else {}),
                **({"positions_no_gender": self.positions_no_gender} if self.positions_no_gender else {}),
                **({"same_prefix": self.same_prefix} if self.same_prefix else {})}


@dataclass
class NonceCounts:
    """The tallies of one :func:`make_nonce` run."""
    positions: Counter = field(default_factory=Counter)
    no_cand: Counter = field(default_factory=Counter)
    targets: Counter = field(default_factory=Counter)
    no_pair: Counter = field(default_factory=Counter)
    fused: Counter = field(default_factory=Counter)
    fused_unchanged: Counter = field(default_factory=Counter)
    distinct: Counter = field(default_factory=Counter)
    own_pair: Counter = field(default_factory=Counter)
    with_variants: int = 0
    targets_fused: int = 0
    frames_used: bool = False
    no_frame: int = 0
    no_gender: int = 0
    no_agreement: int = 0
    no_harmony: int = 0
    no_candidate_main: int = 0
    cue_ambiguous: int = 0
    targets_no_frame: int = 0
    targets_no_harmony: int = 0
    targets_before_adjective: int = 0
    targets_syncretic: int = 0
    same_prefix: int = 0

    def result(self, items: tuple, originals: int) -> NonceResult:
        return NonceResult(items=items, originals=originals, with_variants=self.with_variants,
                           positions=dict(self.positions), positions_no_candidate=dict(self.no_cand),
                           targets=dict(self.targets), targets_no_pair=dict(self.no_pair),
                           positions_fused=dict(self.fused), positions_fused_unchanged=dict(self.fused_unchanged),
                           targets_fused=self.targets_fused, distinct_pairs=dict(self.distinct),
                           targets_own_pair={k: v for k, v in self.own_pair.items() if v},
                           positions_no_frame=self.no_frame, targets_no_frame=self.targets_no_frame,
                           positions_no_gender=self.no_gender, positions_no_agreement=self.no_agreement,
                           positions_no_harmony=self.no_harmony, targets_no_harmony=self.targets_no_harmony,
                           positions_no_main_form=self.no_candidate_main, cues_ambiguous=self.cue_ambiguous,
                           targets_before_adjective=self.targets_before_adjective,
                           targets_syncretic=self.targets_syncretic,
                           same_prefix=self.same_prefix, frames_used=self.frames_used)
