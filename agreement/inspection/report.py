"""``inspect.md``: what ``agree inspect`` found, in a few tables a reader can check against
the TSV files and the PNGs beside it (their columns: :mod:`agreement.inspection.tables`)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from agreement.inspection.cases import POSITIONS

REPORT_FILE = "inspect.md"


def _pct(x: float) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{100 * x:.1f}"


def _ci(lo: float, hi: float) -> str:
    return f"[{_pct(lo)}, {_pct(hi)}]"


def _skips(counts) -> list[str]:
    return [f"- {n}: {why}" for why, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def write_report(found, out: Path, options) -> None:
    drawn = "" if found.sampled is None else f"{found.sampled} drawn at random (whole items, by the seed); "
    lines = [f"# agree inspect: {found.model} on {found.testset}", "",
             f"Model kind {found.kind}. {found.items} items in the test set; {found.cases} with a known "
             f"subject number; {drawn}{found.inspected} read by the model and inspected. Clean accuracy of "
             f"the inspected items (log P(correct) > log P(wrong), one piece per form): "
             f"{_pct(found.clean_accuracy)}%.", ""]
    if found.skipped:
        lines += ["Left out:", *_skips(found.skipped), ""]
    lines += [f"- {note}" for note in found.notes] + ([""] if found.notes else [])
    if found.ablation is not None:
        lines += _ablation(found.ablation)
    if found.trajectories:
        units = sorted({(r.site, r.layer, r.unit) for r in found.trajectories})
        lines += ["## Trajectories", "",
                  "Mean state of the top units word by word (`trajectories.tsv`, `trajectories.png`), "
                  "singular and plural subjects, with and without an attractor: "
                  + ", ".join(f"{s} {l}:{u}" for s, l, u in units) + ".", ""]
    if found.probes:
        lines += _probes(found)
    if found.patching is not None:
        lines += _patching(found)
    (out / "inspect.md").write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")


def _ablation(ab) -> list[str]:
    lines = ["## Unit ablation", "",
             f"Every unit of `{ab.site}` fixed to {ab.fill} at every position, one at a time "
             f"(`units.tsv`, `ablation.png`). Units ranked on the selection half "
             f"({ab.halves[0]} items) by the mean change of log P(correct) - log P(wrong) on "
             f"{ab.rank_condition} items; sets measured on the evaluation half ({ab.halves[1]} items).", "",
             "| rank | layer:unit | change on the ranking items (nats) |", "|---|---|---|"]
    lines += [f"| {i + 1} | {l}:{u} | {e:+.3f} |" for i, (l, u, e) in enumerate(ab.ranked[:10])]
    if ab.sets:
        lines += ["", f"Top {len(ab.top)} ablated together against {sum(1 for r in ab.sets if r.kind == 'random' and r.condition == 'all')} "
                  "random sets of as many units (same count per layer), evaluation half:", "",
                  "| condition | items | clean | top | random: mean [2.5%, 97.5% of draws] | top: change (nats) [95% cluster bootstrap] |",
                  "|---|---|---|---|---|---|"]
        for cond in dict.fromkeys(r.condition for r in ab.sets):
            rows = [r for r in ab.sets if r.condition == cond]
            clean = next(r for r in rows if r.kind == "clean")
            top = next(r for r in rows if r.kind == "top")
            rand = np.array([r.accuracy for r in rows if r.kind == "random"])
            spread = (f"{_pct(rand.mean())} [{_pct(np.percentile(rand, 2.5))}, {_pct(np.percentile(rand, 97.5))}]"
                      if rand.size else "n/a")
            lines.append(f"| {cond} | {top.items} | {_pct(clean.accuracy)} | {_pct(top.accuracy)} "
                         f"{_ci(top.accuracy_lo, top.accuracy_hi)} | {spread} | {top.effect:+.3f} "
                         f"[{top.effect_lo:+.3f}, {top.effect_hi:+.3f}] |")
    return lines + [""]


def _probes(found) -> list[str]:
    lines = ["## Diagnostic probes", "",
             f"Logistic regression (L2, standardised states) on {found.probed} items, "
             f"cross-validated (`probes.tsv`, `probes.png`): the best layer per position, with the "
             "shuffled-label control of that layer. Accuracy in %, 95% cluster-bootstrap intervals over items.", "",
             "| site | position | best layer | accuracy | shuffled labels | majority | items |",
             "|---|---|---|---|---|---|---|"]
    for site in dict.fromkeys(r.site for r in found.probes):
        for pos in POSITIONS:
            mine = [r for r in found.probes if r.site == site and r.position == pos]
            if not mine:
                continue
            best = max(mine, key=lambda r: (r.accuracy, -r.layer))
            lines.append(f"| {site} | {pos} | {best.layer} | {_pct(best.accuracy)} "
                         f"{_ci(best.accuracy_lo, best.accuracy_hi)} | {_pct(best.shuffled)} | "
                         f"{_pct(best.majority)} | {best.items} |")
    return lines + [""]


def _patching(found) -> list[str]:
    p = found.patching
    lines = ["## Activation patching", "",
             f"{found.patched} items have a twin with the cue in the other number (`patching.tsv`, "
             f"`patching.png`). The twin's own accuracy (it prefers the original's wrong form): "
             f"{_pct(float(np.mean(p.twin < 0)))}%."]
    if found.twin_skipped:
        lines += ["", "Without a twin:", *_skips(found.twin_skipped)]
    rows = [r for r in p.rows if r.condition == "all"]
    lines += ["", "The places whose patch flips the most choices (items right both ways), condition all:", "",
              "| site | layer | head | flipped | share [95% cluster bootstrap] | restored | change (nats) |", "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (-r.share if np.isfinite(r.share) else 1, r.site, r.layer, r.head or 0))[:12]:
        lines.append(f"| {r.site} | {'all' if r.layer == -1 else r.layer} | {'' if r.head is None else r.head} | "
                     f"{r.flipped}/{r.both_right} | {_pct(r.share)} {_ci(r.share_lo, r.share_hi)} | "
                     f"{r.restored:.2f} | {r.effect:+.3f} |")
    return lines + [""]
