"""``agree inspect``: a test set and one model -> unit ablation, trajectories, probes, patching."""
from __future__ import annotations

import logging

import click

from agreement.inspection.run import ANALYSES, FILLS, InspectOptions, inspect_to_dir
from agreement.options import CPUS, LANG, POSITIVE_INT, SIZE, Number, device_option, out_option, pass_run, \
    quiet_option, seed_option
from formats.testsets import FORMATS

log = logging.getLogger(__name__)

FOLDS = Number(int, min=2, max=100, why="cross-validation folds")
#: each random set is a pass over the items: beyond this a run would not end in a day
DRAWS = Number(int, min=0, max=10_000, why="random sets, each a pass over the items")


def _layers(ctx, param, value):
    if value is None:
        return None
    try:
        out = tuple(int(x) for x in value.split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of layer numbers") from None
    if not out:
        raise click.BadParameter("no layer given")
    twice = sorted({x for x in out if out.count(x) > 1})
    if twice:   # the same layer swept twice would rank each of its units twice
        raise click.BadParameter(f"layer {twice[0]} is given twice")
    return out


@click.command()
@click.argument("testset", metavar="TESTSET")
@click.option("--model", required=True, metavar="SPEC",
              help="The model: DIR from `agree train-lm` (lstm, transformer), a Hugging Face causal "
                   "save_pretrained DIR (or hf:DIR), or gguf:FILE.gguf (read on the transformers engine). "
                   "KenLM, unigram, masked and llama.cpp models cannot be opened.")
@click.option("--analysis", "analyses", multiple=True, type=click.Choice(ANALYSES),
              help="Run only these (repeatable; default: all four). Trajectories use the ablation's "
                   "ranking (it runs too). One asked for by name that has no usable item is an error.")
@click.option("--paradigms", type=click.Path(exists=True),
              help="A paradigms.tsv (or an extract directory holding one): the cue's other-number form "
                   "for patching, and BLiMP subject-verb pairs' subject number.")
@click.option("--site", default=None, metavar="NAME",
              help="Site whose units are ablated: hidden (LSTM, the default there), mlp (transformers' "
                   "default), resid, heads.")
@click.option("--layers", callback=_layers, default=None, metavar="L,L,...",
              help="Layers whose units are swept (default: all), 0-based.")
@click.option("--fill", type=click.Choice(FILLS), default="zero", show_default=True,
              help="What an ablated unit is fixed to: zero, or its mean state over the items.")
@click.option("--top", type=POSITIVE_INT, default=2, show_default=True,
              help="Top-ranked units ablated together (against random sets of as many).")
@click.option("--draws", type=DRAWS, default=20, show_default=True, help="Random sets drawn as the control.")
@click.option("--folds", type=FOLDS, default=5, show_default=True, help="Probe cross-validation folds.")
@click.option("--probe-items", type=POSITIVE_INT, default=2000, show_default=True,
              help="Items probed at most (whole items drawn by --seed).")
@click.option("--max-items", type=POSITIVE_INT, default=None,
              help="Items inspected at most (whole items drawn by --seed; default: all).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Format of TESTSET (auto: detected).")
@click.option("--lang", type=LANG, default=None, metavar="CODE", help="Language of a test set whose files do not say it.")
@click.option("--batch-size", type=SIZE, default=None,
              help="Rows per forward pass (several per item when interventions share a pass; default 4096).")
@device_option
@click.option("--dtype", type=click.Choice(["float32", "bfloat16", "float16"]), default=None,
              help="Weights of Hugging Face/GGUF models (default float32).")
@click.option("--engine", type=click.Choice(["transformers", "llama.cpp"]), default=None,
              help="Engine of a gguf: model (default transformers: llama.cpp cannot be opened).")
@click.option("--threads", type=CPUS, default=None, help="torch's CPU threads (default: torch's own).")
@out_option
@seed_option
@quiet_option
@pass_run("inspect")
def inspect(run, testset, model, analyses, paradigms, site, layers, fill, top, draws, folds, probe_items,
            max_items, fmt, lang, batch_size, device, dtype, engine, threads):
    """Look inside a model: where number lives.

    Look inside a language model at how it does agreement (docs/inspect.md):
    unit ablation (every unit of a layer zeroed, one at a time, at every
    position; the top units together against random units of the same count),
    activation trajectories of the top units (singular/plural subject, with and
    without an attractor), diagnostic probes (a cross-validated logistic
    regression reading the subject's number at the cue, the nearest attractor,
    the word before the target and the target, per layer, with majority and
    shuffled-label controls) and activation patching (the state at the cue
    replaced by the state of the same sentence with the cue in the other number,
    per layer and, for Hugging Face models, per attention head). Writes to --out:
    units.tsv, topk.tsv, trajectories.tsv, probes.tsv, patching.tsv, PNGs,
    inspect.md and manifest.json; prints inspect.md's headline lines on stdout.

    \b
    Example:
      agree demo --scale tiny --out demo
      agree inspect demo/nonce --model demo/models/lstm --paradigms demo/nonce --out demo-inspect
      agree extract ../shared/data/ud/en_ewt --lang en --out ewt
      agree inspect ../shared/data/colorlessgreen/English/generated \\
        --model gguf:SmolLM2-135M-Instruct.Q4_1.gguf --paradigms ewt \\
        --analysis probes --analysis patching --out smol-inspect
    """
    options = InspectOptions(analyses=tuple(analyses) or ANALYSES, named=bool(analyses), site=site, layers=layers,
                             fill=fill, top=top, draws=draws, folds=folds, probe_items=probe_items,
                             max_items=max_items, paradigms=paradigms, fmt=fmt, lang=lang, device=device,
                             dtype=dtype, batch_size=batch_size, threads=threads, engine=engine)
    found = inspect_to_dir(run, testset, model, options)
    click.echo(f"model\t{found.model}\nitems inspected\t{found.inspected}\nclean accuracy\t{found.clean_accuracy:.4f}")
    if found.ablation is not None:
        click.echo("top units\t" + " ".join(f"{l}:{u}" for l, u in found.ablation.top))
    log.info(f"wrote the inspection to {run.out}")
