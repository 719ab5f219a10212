"""``agree import-model``: a model released in another format -> our model directory."""
from __future__ import annotations

import logging

import click

from agreement.options import out_option, pass_run, quiet_option
from formats.manifest import describe_outputs

log = logging.getLogger(__name__)


@click.command("import-model")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(["colorlessgreen"]))
@click.argument("checkpoint", type=click.Path(exists=True, dir_okay=False))
@click.option("--vocab", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The vocabulary released with the checkpoint (vocab.txt, line i = word id i).")
@out_option
@quiet_option
@pass_run("import-model")
def import_model(run, fmt, checkpoint, vocab):
    """Convert a released model for agree score.

    Convert a released language model into a model directory for `agree score`.

    FORMAT colorlessgreen: the paper's LSTMs (hidden650_batch128_dropout0.2_lr20.0.pt
    and siblings), whole pickled `model.RNNModel` modules of torch 0.3-1.0. The pickle
    is read by a restricted unpickler that loads only the classes this format needs
    (RNNModel, Embedding, LSTM, Linear, Dropout, tensors, OrderedDict) and refuses any
    other, so no pickled code runs. Writes config.json (kind lstm), model.pt (a
    state_dict) and vocab.txt (whose size must equal the embedding's rows), and
    manifest.json.

    \b
    Example:
      agree import-model colorlessgreen hidden650_batch128_dropout0.2_lr20.0.pt \\
        --vocab vocab.txt --out runs/gulordava-en
      agree score ../shared/data/colorlessgreen/English/generated --model runs/gulordava-en --out s
    """
    from lm.neural.released import import_released  # lazy: heavy (torch), loaded only when this command runs

    with run.output_dir([checkpoint, vocab]) as tmp:
        config = import_released(checkpoint, vocab, tmp)
        run.write_manifest(tmp, [checkpoint, vocab], {"format": fmt, "checkpoint": checkpoint, "vocab": vocab},
                           counts={"vocab_size": config["vocab_size"], "layers": config["layers"],
                                   "hidden_size": config["hidden_size"]},
                           files=describe_outputs(tmp))
    log.info(f"wrote an LSTM ({config['layers']} x {config['hidden_size']}, "
             f"{config['vocab_size']} words) to {run.out}")
