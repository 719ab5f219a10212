"""``agree score``: test sets + models (+ humans) -> scored items, tables and plots."""
from __future__ import annotations

import logging

import click

from agreement.options import CPUS, SIZE, WORKERS, device_option, out_option, pass_run, quiet_option, \
    seed_option
from agreement.score_dir import Execution, ModelLoading, Reporting, WhatToScore, score_to_dir
from formats.testsets import FORMATS
from agreement.scoring.normalize import NORMALIZATIONS, check_normalize, load_unigram
from lm.pieces import CONVENTIONS, DEFAULT, check_convention

log = logging.getLogger(__name__)


@click.command()
@click.argument("testsets", nargs=-1, required=True, metavar="TESTSET...")
@click.option("--model", "models", multiple=True, metavar="[GROUP=]SPEC",
              help="A model: DIR from `agree train-lm` or `agree import-model`, a Hugging Face "
                   "save_pretrained DIR (detected by config.json's model_type; or hf:DIR), or "
                   "gguf:FILE.gguf; local files only. Repeatable; DIR may be a glob. Models "
                   "sharing GROUP are averaged (default label: the directory or file name).")
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
                   "one_prefix_method) are skipped and counted; items whose own scoring column "
                   "says sentence (relation items whose target precedes its cue) are scored by "
                   "sentence, and items.tsv's method column says which each got. sentence: P(whole correct "
                   "sentence) > P(whole wrong sentence), summed over every word after the "
                   "model's sentence-start symbol (LSTM/transformer <eos>, KenLM <s>, unigram: "
                   "none), no end symbol, as BLiMP and lm-evaluation-harness.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Format of every TESTSET (auto: detected from each).")
@click.option("--curve", is_flag=True,
              help="Learning curves: each --model is a run directory of `agree train-lm "
                   "--snapshot-every` (its snapshots) or a model with a training position "
                   "(ours, a Trainer's trainer_state.json, checkpoint-N/stepN names, or given: "
                   "[SERIES=][step=N,tokens=M:]DIR); every point is scored as a model, and "
                   "learning_curve.tsv/png and a summary.md section (when each condition rises "
                   "above chance for good) are added.")
@click.option("--lang", default=None, metavar="CODE",
              help="Language of test sets whose files do not say it (CLAMS outside an xx_evalset "
                   "folder); it names their constructions (en obj_rel_across_anim).")
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
@click.option("--batch-size", type=SIZE, default=None,
              help="Sequences per forward pass (backend default; Hugging Face: 32 causal, 64 "
                   "masked); the same unit as train-lm's --batch-size.")
@device_option
@click.option("--dtype", type=click.Choice(["float32", "bfloat16", "float16"]), default=None,
              help="Weights of Hugging Face/GGUF models: transformers default float32; llama.cpp "
                   "default the file's own (quantized) weights, float16/float32 a copy made at load "
                   "(for small models on CPU faster, and nearer the weights' values; float32 exact). "
                   "Log-softmax is always fp32.")
@click.option("--engine", type=click.Choice(["auto", "llama.cpp", "transformers", "vllm"]), default=None,
              help="Engine for gguf: models. auto (default): with --dtype float16 on a CPU llama.cpp "
                   "(a float16 copy, several times torch's float16 there); else transformers when "
                   "parameters x 4 bytes is under half the available memory (fp32, exact), else "
                   "llama.cpp (quantized weights as stored); the choice is said on stderr. vllm: Hugging Face directories on vLLM "
                   "(GPUs; pip install 'agree-bench[vllm]').")
@click.option("--threads", type=CPUS, default=None,
              help="CPU threads of each model: llama.cpp's and torch's; a transformers model on CPU "
                   "reads its batches in N threads side by side, one torch thread each (default: "
                   "torch's and llama.cpp's own, every CPU this process may use; with --executor ray: "
                   "1 per worker).")
@click.option("--convention", type=click.Choice(list(CONVENTIONS)), default=DEFAULT, show_default=True,
              help="What subword (Hugging Face, GGUF) models read. agree: BOS + the text as written "
                   "(the items' spacing, e.g. 'herself.'), tokenized once, = minicons "
                   "sequence_score with bos_token=True. lm-eval: BOS + ' ' + the text "
                   "(lm-evaluation-harness's BLiMP string). minicons: minicons' default (no BOS; "
                   "the first token is not scored; --method sentence only). words: the "
                   "tokenized words, each encoded alone (agree before 0.2). Word-level models "
                   "(LSTM, KenLM, unigram) always read words.")
@click.option("--normalize", type=click.Choice(list(NORMALIZATIONS)), default="sum", show_default=True,
              help="With --method sentence, what each sentence's log-probability is divided by "
                   "before the two are compared: sum (none), token (the model's pieces), byte "
                   "(UTF-8 bytes of the text), char (characters: lm-evaluation-harness's acc_norm), "
                   "slor ((log P - log P_unigram) / words; needs --unigram). items.tsv then holds "
                   "the normalised values.")
@click.option("--unigram", type=click.Path(exists=True, file_okay=False), default=None, metavar="DIR",
              help="With --normalize slor: the word unigram model (agree train-lm --arch unigram).")
@click.option("--executor", type=click.Choice(["in-process", "ray"]), default="in-process", show_default=True,
              help="Where models score: in this process, or on Ray workers (pip install "
                   "'agree-bench[cluster]'). Either way finished shards are kept in OUT.partial and "
                   "rerunning the same command scores only the rest.")
@click.option("--workers", type=WORKERS, default=None,
              help="With --executor ray: Ray actors per model, each loading it once (default 2).")
@click.option("--ray-address", metavar="ADDR", default=None,
              help="With --executor ray: the Ray cluster to join (default: RAY_ADDRESS, else a "
                   "local cluster for this run).")
@out_option
@seed_option
@quiet_option
@pass_run("score")
def score(run, testsets, models, columns, humans, method, fmt, curve, lang, surprisal, units, reference,
          require_in_vocab, carry_state, batch_size, device, dtype, engine, threads, convention, normalize,
          unigram, executor, workers, ray_address):
    """Score test sets with language models.

    Score agreement test sets with language models and compare them with humans.

    TESTSET: an items.tsv (or its directory) from `agree extract`/`nonce`/`perturb`,
    the paper's generated.text/.gold/.eval set (with or without .tab; also the
    Linzen et al. 2016 subset with its 4-column .gold), a paper .tab file, BLiMP
    .jsonl paradigms, MultiBLiMP .tsv files, CLAMS suites, Marvin & Linzen's
    template pickles (read without running code), SyntaxGym suites (their own
    predictions evaluated too: predictions.tsv), RuBLiMP and the BLiMP family
    (--format lists them), each a file or a directory, as published. Writes to
    --out: items.tsv (one row per item and model; last column: the method),
    summary.json, summary.md, PNG plots, tokens.tsv with --surprisal, and
    manifest.json; prints the accuracy table (TSV, %) on stdout. All scores are
    natural logs. Accuracy is over the decidable items: a tie (both forms equally
    probable, e.g. both <unk>) is undecidable, counted apart (items.tsv column
    `undecidable`, summary tables), and summary.md warns when more than a tenth of a
    model's items are.

    Models score in shards of 1,024 items, each kept in OUT.partial as it finishes:
    after an interruption the same command scores only the missing shards (a changed
    model file or test set discards them, saying why). --executor ray scores the shards
    on Ray workers (RAY_ADDRESS or --ray-address, else a local cluster for the run);
    the outputs equal a one-process run's at the same --threads.

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
        --model gguf:SmolLM2-135M-Instruct.Q4_1.gguf --dtype float16 --threads 2 --out smol
      agree score ../shared/data/blimp/data --model gguf:SmolLM2-135M-Instruct.Q4_1.gguf \\
        --executor ray --workers 2 --threads 1 --out blimp-smol
      agree score ../shared/data/colorlessgreen/English/generated --model en-lstm --curve \\
        --out en-curve
      agree score ../shared/data/clams/en_evalset ../shared/data/lm_syneval/templates \\
        --model runs/kn5 --method sentence --out clams-ml
      agree score ../shared/data/syntaxgym/json --model runs/kn5 --out sg
      agree score ../shared/data/blimp/data --model gguf:gemma3-270m --method sentence \\
        --normalize char --out blimp-gemma-char

    \b
    Scoring conventions (every engine; each model's are in manifest.json "scoring"
    and one line per model in summary.md): natural log; a sentence is scored after
    the model's own BOS token, added once; every word including the first is
    scored; a subword model reads the text as written (--convention) and a word's
    value is the pieces it owns (character offsets), times, for the target method,
    the probability that the next piece cannot continue the word; a tie is never
    correct.
    """
    convention = check_convention(convention, method)   # checked in this order: the first error is said
    normalize = None if check_normalize(normalize, unigram, method) == "sum" else normalize
    what = WhatToScore(fmt=fmt, lang=lang, method=method, from_outputs=columns, require_in_vocab=require_in_vocab,
                       curve=curve, normalize=normalize, unigram=unigram)
    loading = ModelLoading(batch_size=batch_size, device=device, dtype=dtype, engine=engine, threads=threads,
                           carry_state=carry_state, convention=convention)
    reporting = Reporting(humans=humans, reference=reference, surprisal=surprisal, units=units)
    execution = Execution(executor=executor, workers=workers, ray_address=ray_address)
    if unigram:   # read before any model scores: a wrong directory is one line at once
        load_unigram(unigram).close()
    result = score_to_dir(run, testsets, models, what=what, loading=loading, execution=execution,
                          reporting=reporting)
    click.echo(result.table, nl=False)
    log.info(f"wrote {result.rows} scored rows and the summary to {run.out}")
