"""``agree score``: test sets + models (+ humans) -> scored items, tables and plots."""
from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from agreement.errors import AgreeError
from agreement.options import invocation_argv
from agreement.options import (POSITIVE_INT, device_option, log, out_option, quiet_option,
                                seed_option)


@click.command()
@click.argument("testsets", nargs=-1, required=True, metavar="TESTSET...")
@click.option("--model", "models", multiple=True, metavar="[GROUP=]SPEC",
              help="A model: DIR from `agree train-lm` or `agree import-model`, a Hugging Face "
                   "save_pretrained DIR (detected by config.json's model_type; or hf:DIR), or "
                   "gguf:FILE.gguf; local files only. Repeatable; DIR may be a glob. Models "
                   "sharing GROUP are averaged (default group: kind + architecture; Hugging "
                   "Face and GGUF: the directory/file name).")
@click.option("--from-outputs", "columns", multiple=True, metavar="COLUMN",
              help="Use this model column of a paper .tab TESTSET instead of running a model.")
@click.option("--humans", type=click.Path(exists=True, dir_okay=False),
              help="Human judgments: the paper's best_model_mturk.tab, a TSV with columns "
                   "item_id, variant, votes_correct, votes_wrong, or BLiMP's "
                   "human_validation_summary.csv (per-paradigm share, beside the models).")
@click.option("--method", type=click.Choice(["target", "sentence"]), default="target",
              show_default=True,
              help="target: P(correct form | prefix) > P(wrong form | prefix), the paper's; "
                   "pairs differing in more than one word (and BLiMP pairs without "
                   "one_prefix_method) are skipped and counted. sentence: P(whole correct "
                   "sentence) > P(whole wrong sentence), summed over every word after the "
                   "model's sentence-start symbol (LSTM/transformer <eos>, KenLM <s>, unigram: "
                   "none), no end symbol, as BLiMP and lm-evaluation-harness.")
@click.option("--format", "fmt", type=click.Choice(["auto", "items", "colorlessgreen", "paper-tab",
                                                    "blimp", "multiblimp"]),
              default="auto", show_default=True,
              help="Format of every TESTSET (auto: detected from each).")
@click.option("--surprisal", is_flag=True,
              help="Also write tokens.tsv: per-word surprisal of both sentences of every item.")
@click.option("--units", type=click.Choice(["nats", "bits"]), default="nats", show_default=True,
              help="Units of tokens.tsv's surprisal.")
@click.option("--reference", type=click.Path(exists=True, dir_okay=False),
              help="Published per-paradigm accuracies (BLiMP's models_summary.jsonl), shown "
                   "beside ours as columns labelled (published).")
@click.option("--require-in-vocab", is_flag=True,
              help="Score only items whose words every model has in its vocabulary.")
@click.option("--carry-state", is_flag=True,
              help="Carry the hidden state across sentences, as the released code does.")
@click.option("--batch-size", type=POSITIVE_INT, default=None,
              help="Sequences per forward pass (backend default; Hugging Face: 32 causal, 64 "
                   "masked); the same unit as train-lm's --batch-size.")
@device_option
@click.option("--dtype", type=click.Choice(["float32", "bfloat16", "float16"]), default=None,
              help="Weights of Hugging Face/GGUF models (default float32); log-softmax is always fp32.")
@click.option("--engine", type=click.Choice(["auto", "llama.cpp", "transformers"]), default=None,
              help="Engine for gguf: models. auto (default): transformers when parameters x 4 bytes "
                   "is under half the available memory, else llama.cpp (quantized weights as stored); "
                   "the choice is said on stderr.")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="CPU threads for the llama.cpp engine (default: every CPU this process may use).")
@out_option
@seed_option
@quiet_option
def score(testsets, models, columns, humans, method, fmt, surprisal, units, reference,
          require_in_vocab, carry_state, batch_size, device, dtype, engine, threads, out, force,
          seed, quiet):
    """Score agreement test sets with language models and compare them with humans.

    TESTSET: an items.tsv (or its directory) from `agree extract`/`nonce`/`perturb`,
    the paper's generated.text/.gold/.eval set (with or without .tab; also the
    Linzen et al. 2016 subset with its 4-column .gold), a paper .tab file, BLiMP
    .jsonl paradigms or MultiBLiMP .tsv files (a file or a directory). Writes to
    --out: items.tsv (one row per item and model; last column: the method),
    summary.json, summary.md, PNG plots, tokens.tsv with --surprisal, and
    manifest.json; prints the accuracy table (TSV, %) on stdout. All scores are
    natural logs. Accuracy is over the decidable items: a tie (both forms equally
    probable, e.g. both <unk>) is undecidable, counted apart (items.tsv column
    `undecidable`, summary tables), and summary.md warns when more than a tenth of a
    model's items are.

    \b
    Example:
      agree score ../shared/data/colorlessgreen/Italian/best_model_mturk.tab \\
        --from-outputs hidden650_batch64_dropout0.2_lr10.0 \\
        --humans ../shared/data/colorlessgreen/Italian/best_model_mturk.tab --out it-paper
      agree score extract-it/ --model 'lstm=runs/lstm-seed*' --model runs/kn5 --out scores
      agree score ../shared/data/blimp/data --model runs/kn5 --method sentence \\
        --humans ../shared/data/blimp/human_validation_summary.csv \\
        --reference ../shared/data/blimp/models_summary.jsonl --surprisal --out blimp
      agree score ../shared/data/colorlessgreen/English/generated \\
        --model gguf:SmolLM2-135M-Instruct.Q4_1.gguf --model hf:models/gpt2 --out en-hf
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
    from formats.manifest import atomic_output_dir, write_manifest
    from formats.published import is_blimp_humans
    from formats.scored import write_scored
    from agreement.score import parse_model_specs, split_model_value
    from agreement.summary import main_table, write_report

    model_dirs = [d for m in models for d in split_model_value(m)[2]]
    with atomic_output_dir(out, "score", [*testsets, humans, reference, *model_dirs], force,
                           quiet) as tmp:
        sets, notes = _load_sets(testsets, fmt, method, quiet)
        if not any(ts.items for ts in sets):
            raise AgreeError(f"nothing to score: {', '.join(ts.label for ts in sets)} "
                             f"{'has' if len(sets) == 1 else 'have'} no items (an empty test set: "
                             f"did agree extract find no constructions?)")
        index = None
        if humans and is_blimp_humans(humans):
            pass  # per-paradigm shares, joined after scoring (formats.published)
        elif humans:
            index = HumanIndex(read_humans(humans))
            n = check_coverage(index, [it for ts in sets for it in ts.items], humans)
            log(f"{humans}: {len(index)} judged items, {n} test items matched", quiet)
        specs = parse_model_specs(models)
        options = {k: v for k, v in (("batch_size", batch_size), ("device", device), ("dtype", dtype),
                                     ("engine", engine), ("threads", threads)) if v is not None}
        scoring: dict = {}
        scored, tokens_rows = _score(tmp, sets, specs, surprisal, units, from_outputs=columns,
                                     require_in_vocab=require_in_vocab, quiet=quiet, method=method,
                                     carry_state=carry_state, scoring=scoring, **options)
        rows = write_scored(tmp / "items.tsv", scored)
        extra = _published(humans if index is None else None, reference, scored)
        summary = write_report(tmp, scored, humans=index, rng=np.random.default_rng(seed),
                               testsets=testsets, quiet=quiet, method=method, notes=notes,
                               scoring=scoring, **extra)
        write_manifest(tmp, "score", _inputs(testsets, fmt, specs, humans, reference), {
            "testsets": testsets, "models": [f"{s.group}={s.directory}" for s in specs],
            "from_outputs": columns, "humans": humans, "require_in_vocab": require_in_vocab,
            "carry_state": carry_state, "batch_size": batch_size, "device": device, "dtype": dtype,
            "engine": engine, "threads": threads, "seed": seed,
            "method": method, "format": fmt, "surprisal": surprisal, "units": units,
            "reference": reference},
            counts={"items": {s.label: len(s.items) for s in sets}, "scored_rows": rows,
                    "models": {m["name"]: {"items": m["items"], "oov_items": m["oov_items"]}
                               for m in summary["models"]},
                    "human_matched_items": (summary["humans"] or {}).get("matched_items"),
                    "skipped": notes, "tokens_rows": tokens_rows},
            scoring=scoring, argv=invocation_argv())
    click.echo(main_table(summary), nl=False)
    log(f"wrote {rows} scored rows and the summary to {out}", quiet)


def _load_sets(testsets, fmt: str, method: str, quiet: bool):
    """Load every TESTSET; with --method target drop the pairs it cannot score, and
    count them. Returns (sets, notes for stderr / summary.md / manifest)."""
    import dataclasses

    from agreement.errors import AgreeError
    from formats.papertab import load_testset
    from agreement.score import split_for_method

    sets, notes = [], []
    for t in testsets:
        ts = load_testset(t, fmt)
        notes += list(ts.notes)
        kept, skipped = split_for_method(ts.items, method)
        if skipped:
            notes.append(f"{ts.label}: {skipped} of {len(ts.items)} pairs skipped by --method target "
                         "(they differ in more than one word, or BLiMP marks them not one-prefix; "
                         "--method sentence scores them)")
            if not kept:
                raise AgreeError(f"{ts.label}: no pair can be scored with --method target "
                                 f"({skipped} skipped); use --method sentence")
            ts = dataclasses.replace(ts, items=tuple(kept))
        log(f"{ts.label}: {ts.kind} test set, {len(ts.items)} items", quiet)
        sets.append(ts)
    for n in notes:
        log(n, quiet)
    return sets, notes


def _score(tmp: Path, sets, specs, surprisal: bool, units: str, **options):
    """score_testsets, writing tokens.tsv into ``tmp`` with --surprisal; returns
    (scored items, tokens.tsv rows or None)."""
    from agreement.score import score_testsets
    from agreement.surprisal import TOKENS_FILE, SurprisalWriter

    if not surprisal:
        return score_testsets(sets, specs, **options), None
    with SurprisalWriter(tmp / TOKENS_FILE, units) as writer:
        scored = score_testsets(sets, specs, on_words=writer.add, **options)
    return scored, writer.rows


def _inputs(testsets, fmt: str, specs, humans, reference) -> list[str]:
    """Every input file or directory, once, for the manifest."""
    from formats.papertab import detect_testset, testset_files

    inputs = [p for t in testsets for p in testset_files(detect_testset(t, fmt)[1])]
    inputs += [s.directory for s in specs] + ([humans] if humans else [])
    inputs += [reference] if reference else []
    return list(dict.fromkeys(str(p) for p in inputs))


def _published(humans, reference, scored) -> dict:
    """BLiMP per-paradigm humans and published accuracies as summary parts."""
    from formats.published import (humans_summary, read_blimp_humans, read_reference,
                                      reference_summary)

    out = {}
    if humans:
        out["paradigm_humans"] = humans_summary(read_blimp_humans(humans), scored, humans)
    if reference:
        out["reference"] = reference_summary(read_reference(reference), scored, reference)
    return out
