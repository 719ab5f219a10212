"""``agree score``: test sets + models (+ humans) -> scored items, tables and plots."""
from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from agreement.options import log, out_option, quiet_option, seed_option


@click.command()
@click.argument("testsets", nargs=-1, required=True, metavar="TESTSET...")
@click.option("--model", "models", multiple=True, metavar="[GROUP=]DIR",
              help="Model directory from `agree train-lm` (repeatable; DIR may be a glob). "
                   "Models sharing GROUP are averaged (default group: kind + architecture).")
@click.option("--from-outputs", "columns", multiple=True, metavar="COLUMN",
              help="Use this model column of a paper .tab TESTSET instead of running a model.")
@click.option("--humans", type=click.Path(exists=True, dir_okay=False),
              help="Human judgments: the paper's best_model_mturk.tab, or a TSV with columns "
                   "item_id, variant, votes_correct, votes_wrong.")
@click.option("--require-in-vocab", is_flag=True,
              help="Score only items whose words every model has in its vocabulary.")
@click.option("--carry-state", is_flag=True,
              help="Carry the hidden state across sentences, as the released code does.")
@click.option("--batch-size", type=int, default=None, help="Sentences per batch (backend default).")
@click.option("--device", default=None, help="cpu, cuda, cuda:1 ... (default: CUDA when present).")
@click.option("--engine", type=click.Choice(["auto", "llama.cpp", "transformers"]), default=None,
              help="Engine for gguf: models. auto (default): transformers when parameters x 4 bytes "
                   "is under half the available memory, else llama.cpp (quantized weights as stored); "
                   "the choice is said on stderr.")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="CPU threads for the llama.cpp engine (default: every CPU this process may use).")
@out_option
@seed_option
@quiet_option
def score(testsets, models, columns, humans, require_in_vocab, carry_state, batch_size, device,
          engine, threads, out, seed, quiet):
    """Score agreement test sets with language models and compare them with humans.

    TESTSET: an items.tsv (or its directory) from `agree extract`/`nonce`/`perturb`,
    the paper's generated.text/.gold/.eval set, or a paper .tab file. Writes to --out:
    items.tsv (one row per item and model), summary.json, summary.md, PNG plots and
    manifest.json; prints the accuracy table (TSV, %) on stdout.

    \b
    Example:
      agree score ../shared/data/colorlessgreen/Italian/best_model_mturk.tab \\
        --from-outputs hidden650_batch64_dropout0.2_lr10.0 \\
        --humans ../shared/data/colorlessgreen/Italian/best_model_mturk.tab --out it-paper
      agree score extract-it/ --model 'lstm=runs/lstm-seed*' --model runs/kn5 --out scores
      agree score ../shared/data/colorlessgreen/English/generated \\
        --model gguf:SmolLM2-135M-Instruct.Q4_1.gguf --engine llama.cpp --threads 2 --out smol

    \b
    Scoring conventions (every engine; each model's are in manifest.json "scoring"
    and one line per model in summary.md): natural log; a sentence is scored after
    the model's own BOS token, added once; every word including the first is
    scored; a subword word is its own pieces (" " + word after the first) times the
    probability that the next piece starts a new word; a tie is never correct.
    """
    from agreement.humans import HumanIndex, check_coverage, read_humans
    from agreement.outdir import atomic_output_dir, write_manifest
    from agreement.papertab import detect_testset, load_testset
    from agreement.score import parse_model_specs, score_testsets, write_scored
    from agreement.summary import main_table, write_report

    sets = [load_testset(t) for t in testsets]
    for ts in sets:
        log(f"{ts.label}: {ts.kind} test set, {len(ts.items)} items", quiet)
    index = None
    if humans:
        index = HumanIndex(read_humans(humans))
        n = check_coverage(index, [it for ts in sets for it in ts.items], humans)
        log(f"{humans}: {len(index)} judged items, {n} test items matched", quiet)
    specs = parse_model_specs(models)
    options = {k: v for k, v in (("batch_size", batch_size), ("device", device), ("engine", engine),
                                 ("threads", threads)) if v is not None}
    scoring: dict = {}
    scored = score_testsets(sets, specs, from_outputs=columns, require_in_vocab=require_in_vocab,
                            quiet=quiet, carry_state=carry_state, scoring=scoring, **options)
    with atomic_output_dir(out) as tmp:
        rows = write_scored(tmp / "items.tsv", scored)
        summary = write_report(tmp, scored, humans=index, rng=np.random.default_rng(seed),
                               testsets=testsets, quiet=quiet, scoring=scoring)
        inputs = [p for t in testsets for p in _input_files(detect_testset(t)[1])]
        inputs += [s.directory for s in specs] + ([humans] if humans else [])
        inputs = list(dict.fromkeys(str(p) for p in inputs))
        write_manifest(tmp, "score", inputs, {
            "testsets": testsets, "models": [f"{s.group}={s.directory}" for s in specs],
            "from_outputs": columns, "humans": humans, "require_in_vocab": require_in_vocab,
            "carry_state": carry_state, "batch_size": batch_size, "device": device,
            "engine": engine, "threads": threads, "seed": seed},
            counts={"items": {s.label: len(s.items) for s in sets}, "scored_rows": rows,
                    "models": {m["name"]: {"items": m["items"], "oov_items": m["oov_items"]}
                               for m in summary["models"]},
                    "human_matched_items": (summary["humans"] or {}).get("matched_items")},
            scoring=scoring)
    click.echo(main_table(summary), nl=False)
    log(f"wrote {rows} scored rows and the summary to {out}", quiet)


def _input_files(path: Path) -> list[Path]:
    """The files a test set was read from (a path prefix stands for generated.*)."""
    return [path] if path.exists() else sorted(path.parent.glob(path.name + ".*"))
