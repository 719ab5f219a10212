"""``agree perturb``: a noisier copy of a test set, for robustness curves."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

from agreement.options import invocation_argv
from agreement.options import FINITE, log, out_option, quiet_option, seed_option, warn
from formats.manifest import atomic_output_dir, write_manifest
from formats.items import read_items, write_items
from nonce.errors import NonceError


def _options(pairs) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise NonceError(f"--option {pair!r}: expected KEY=VALUE")
        out[key.replace("-", "_")] = value
    return out


@click.command()
@click.argument("testset", type=click.Path(exists=True))
@click.option("--aspect", required=True, help="qwerty, swap, drop-char, drop-space, articles, marks, "
              "digits or semantic.")
@click.option("--severity", required=True, type=FINITE, help="Per-word (per-space, per-article ...) "
              "probability in [0, 1]; for semantic the target cosine similarity in [-1, 1].")
@click.option("--pos-group", help="qwerty/swap/drop-char: noise only function, mid, nouns, verbs, "
              "content or random words.")
@click.option("--match-group", help="With --pos-group random: as many words per sentence as this group.")
@click.option("--direction", type=click.Choice(["start", "end"]),
              help="Noise the first (start) or last (end) candidate words instead of a random subset.")
@click.option("--vectors", type=click.Path(exists=True), help="semantic: word2vec text file or model directory.")
@click.option("--paradigms", type=click.Path(exists=True, dir_okay=False),
              help="semantic: paradigms.tsv (default: the one in TESTSET).")
@click.option("--lang", help="Language of the items (default: from the test set's manifest).")
@click.option("--option", "-o", "extra", multiple=True, metavar="KEY=VALUE",
              help="Aspect option, e.g. mode=swap (articles), band=0.1 (semantic), scope=context.")
@seed_option
@out_option
@quiet_option
def perturb(testset, aspect, severity, pos_group, match_group, direction, vectors, paradigms, lang,
            extra, seed, out, force, quiet):
    """Perturb every item of a test set, keeping cue, target and their number intact.
    Writes items.tsv (same schema; `perturbation` says what was done, e.g.
    qwerty@nouns:0.2), manifest.json (counts) and a copy of paradigms.tsv.
    Score several severities with `agree score` to draw robustness curves.

    \b
    Aspects and what --severity means:
      qwerty, swap,   per-word probability in [0, 1] (a letter -> keyboard neighbour,
      drop-char       two letters swapped, a letter dropped); --pos-group, --direction
      drop-space      per-space probability (words merged)
      articles        per-article probability; -o mode=remove|swap|mixed
      marks           per-gap / per-mark probability; -o mode=both|insert|remove
      digits          per-number probability (digits -> words)
      semantic        target cosine similarity in [-1, 1] of replacement verbs;
                      --vectors; -o band=0.05
    Every aspect: -o scope=prefix|context|sentence (default prefix).

    \b
    Example:
      agree perturb en-items --aspect qwerty --severity 0.2 --pos-group nouns --seed 1 --out en-q-nouns-0.2
      agree perturb en-items --aspect qwerty --severity 0.2 --pos-group random --match-group nouns \\
          --seed 1 --out en-q-random-0.2
      agree perturb en-items --aspect semantic --severity 0.4 --vectors lstm-en --seed 1 --out en-sem-0.4
    """
    from nonce.perturb import get_aspect, perturb as run_perturb

    cls = get_aspect(aspect)
    src = Path(testset)
    directory = src if src.is_dir() else src.parent
    with atomic_output_dir(out, "perturb", [directory, vectors, paradigms], force, quiet) as tmp:
        items = list(read_items(src))
        if not items:
            warn(f"{testset}: the test set has no items, so there is nothing to perturb")
        manifest_file = directory / "manifest.json"
        params = _source_parameters(manifest_file)
        options = {"pos_group": pos_group, "match_group": match_group, "direction": direction,
                   "lang": lang or params.get("lang"), **_options(extra)}
        if "paradigms" in cls.all_options():  # the semantic aspect: file paths, loaded by the aspect
            own = directory / "paradigms.tsv"
            options.update(vectors=vectors, paradigms=paradigms or (str(own) if own.is_file() else None))
        elif vectors or paradigms:
            raise NonceError(f"{aspect}: --vectors and --paradigms are for the semantic aspect only")
        options = {k: v for k, v in options.items() if v is not None}
        result = run_perturb(items, aspect, severity, options, seed)
        inputs = [p for p in (src, options.get("vectors"), options.get("paradigms")) if p]
        write_items(tmp / "items.tsv", result.items)
        if (directory / "paradigms.tsv").is_file():
            shutil.copyfile(directory / "paradigms.tsv", tmp / "paradigms.tsv")
        write_manifest(tmp, "perturb", inputs, {"aspect": aspect, "severity": severity, "seed": seed,
                                                "label": result.label, **options, "source": params},
                       counts=result.stats, argv=invocation_argv())
    s = result.stats
    log(f"{result.label}: {s['items_changed']} of {s['items']} items changed, "
        f"{s['changes']} edits -> {out}", quiet)


def _source_parameters(manifest_file: Path) -> dict:
    """The test set's own parameters (its manifest.json), {} when it has none."""
    if not manifest_file.is_file():
        return {}
    try:
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise NonceError(f"{manifest_file}: not a valid manifest.json ({e})") from None
    params = manifest.get("parameters") if isinstance(manifest, dict) else None
    return params if isinstance(params, dict) else {}
