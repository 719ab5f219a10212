"""The ``agree`` command: a thin click group over the library verbs.

Each command lives in ``agreement/commands/<name>.py`` (about twenty lines that
parse options, call one library function and write files) and is imported only
when it runs, so ``agree extract`` never pays for importing torch. Domain errors
from any layer become one ``Error: ...`` line and exit code 1 here, at the edge.
"""
from __future__ import annotations

import importlib

import click

from agreement import __version__
from agreement.errors import DOMAIN_ERRORS

#: command name -> (module, function). Order is the order of ``agree --help``.
COMMANDS = {
    "extract": ("agreement.commands.extract", "extract"),
    "nonce": ("agreement.commands.nonce", "nonce"),
    "corpus": ("agreement.commands.corpus", "corpus"),
    "train-lm": ("agreement.commands.train", "train_lm"),
    "score": ("agreement.commands.score", "score"),
    "perturb": ("agreement.commands.perturb", "perturb"),
    "demo": ("agreement.commands.demo", "demo"),
    "setup": ("agreement.commands.setup_kenlm", "setup"),
    "doctor": ("agreement.commands.doctor", "doctor"),
}


class AgreeGroup(click.Group):
    """Loads commands lazily and turns domain errors into clean CLI errors."""

    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        module, attr = COMMANDS[name]
        return getattr(importlib.import_module(module), attr)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except DOMAIN_ERRORS as e:
            raise click.ClickException(str(e)) from None
        except UnicodeDecodeError as e:
            raise click.ClickException(f"input is not valid UTF-8 ({e.reason} at byte {e.start})") from None


@click.group(cls=AgreeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="agree")
def cli():
    """Long-distance agreement benchmarks for language models.

    \b
    The pipeline (Gulordava et al. 2018, "Colorless green recurrent networks
    dream hierarchically"):
      agree extract   UD treebank -> constructions and original test items
      agree nonce     original items -> colorless-green nonce variants
      agree corpus    Wikipedia dump -> tokenised corpus and vocabulary
      agree train-lm  corpus -> LSTM, transformer, 5-gram KN or unigram model
      agree score     test set + models (+ humans) -> tables and plots
      agree perturb   test set -> noisy variants for robustness curves
      agree demo      all of the above on a generated language, in minutes
      agree setup kenlm  build KenLM's lmplz/build_binary (for --arch kn5)
      agree doctor    what works in this installation

    \b
    Example:
      agree demo --out demo-out
    """


def main():
    cli(prog_name="agree")


if __name__ == "__main__":  # torchrun -m agreement.cli train-lm ...
    main()
