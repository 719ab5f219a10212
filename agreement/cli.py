"""The ``agree`` command: a thin click group over the library verbs.

Each command lives in ``agreement/commands/<name>.py`` (about twenty lines that
parse options, call one library function and write files) and is imported only
when it runs, so ``agree extract`` never pays for importing torch. Domain errors
from any layer become one ``Error: ...`` line and exit code 1 here, at the edge.
SIGTERM is handled as Ctrl-C is (temporary directories and locks cleaned up on the
way out), with one ``Terminated`` line and exit code 143.
"""
from __future__ import annotations

import contextlib
import errno
import gc
import importlib
import os
import signal
import sys
import threading

import click

from agreement.errors import DomainError
from formats.distribution import DISTRIBUTION
from formats.run import configure_logging
# the version from formats, not agreement/__init__.py: a clashing `agreement`
# distribution installed over ours replaces that file, and `agree doctor` must still run
from formats.manifest import AGREE_VERSION
from lm import heavy_import
from lm.errors import Terminated, TrainingInterrupted

#: command name -> (module, function). Order is the order of ``agree --help``.
COMMANDS = {
    "extract": ("agreement.commands.extract", "extract"),
    "extract-all": ("agreement.commands.extract_all", "extract_all"),
    "nonce": ("agreement.commands.nonce", "nonce"),
    "corpus": ("agreement.commands.corpus", "corpus"),
    "train-lm": ("agreement.commands.train", "train_lm"),
    "score": ("agreement.commands.score", "score"),
    "perturb": ("agreement.commands.perturb", "perturb"),
    "export": ("agreement.commands.export", "export"),
    "import-model": ("agreement.commands.import_model", "import_model"),
    "demo": ("agreement.commands.demo", "demo"),
    "analyze": ("agreement.commands.analyze", "analyze"),
    "browse": ("agreement.commands.browse", "browse"),
    "inspect": ("agreement.commands.inspect", "inspect"),
    "swap-targets": ("agreement.commands.swap_targets", "swap_targets"),
    "audit": ("agreement.commands.audit", "audit"),
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

    def main(self, args=None, *rest, **extra):
        # The command line is recorded here, the one place that sees it whole, and
        # handed to manifests through the context (no global sys.argv below the edge).
        args = list(sys.argv[1:] if args is None else args)
        extra.setdefault("obj", {"argv": args})
        try:
            with sigterm_raises():
                return super().main(args, *rest, **extra)
        finally:
            forget_unhandled_interrupt()

    def invoke(self, ctx):
        # The one edge: every fault becomes one ``Error: ...`` line (exit 1), an
        # interrupt one ``Interrupted`` line (exit 130), SIGTERM ``Terminated`` (143).
        configure_logging()   # stderr, INFO; a command's --quiet / -v sets its level (options.pass_run)
        try:
            return super().invoke(ctx)
        except Terminated:
            click.echo("Terminated", err=True)
            raise click.exceptions.Exit(128 + signal.SIGTERM) from None
        except (KeyboardInterrupt, click.exceptions.Abort, RuntimeError) as e:
            if not is_interrupt(e):
                raise
            click.echo("Interrupted", err=True)
            raise click.exceptions.Exit(130) from None
        except DomainError as e:
            message = spell_fields(e, self.get_command(ctx, ctx.invoked_subcommand or ""))
            if isinstance(e, TrainingInterrupted):  # Ctrl-C or SIGTERM in train-lm, checkpoint saved
                what = "Terminated" if e.signum == signal.SIGTERM else "Interrupted"
                click.echo(f"{what}: {message}", err=True)
                raise click.exceptions.Exit(128 + e.signum) from None
            raise click.ClickException(message) from None
        except UnicodeDecodeError as e:
            raise click.ClickException(f"input is not valid UTF-8 ({e.reason} at byte {e.start})") from None
        except OSError as e:
            raise click.ClickException(describe_os_error(e)) from None


def is_interrupt(e: BaseException) -> bool:
    """A Ctrl-C: itself, click's Abort at a prompt (its context), or wrapped in a
    RuntimeError by a class body's ``__set_name__`` (its cause: a dataclass being
    imported when the Ctrl-C came)."""
    if isinstance(e, KeyboardInterrupt):
        return True
    inner = e.__context__ if isinstance(e, click.exceptions.Abort) else e.__cause__
    return isinstance(inner, KeyboardInterrupt)


def forget_unhandled_interrupt() -> None:
    """Keep the exit code we chose after a Ctrl-C that landed inside ``exec`` of a
    source string (dataclasses build their methods so, at import time).

    CPython (3.11) then sets a process-wide "unhandled KeyboardInterrupt" flag that
    our ``except`` never clears, and at exit it kills the process with SIGINT
    instead of exiting 130. Any later ``exec`` of a string resets that flag."""
    exec("None")


@contextlib.contextmanager
def sigterm_raises():
    """While a command runs, SIGTERM raises :class:`lm.errors.Terminated` (a
    KeyboardInterrupt) where it lands, so the clean-up that Ctrl-C gets runs for it
    too; the former handler comes back afterwards (tests run commands in-process)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum, frame):
        raise Terminated()

    old = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def spell_fields(e: DomainError, command: click.Command | None) -> str:
    """The error's message; a template message's fields (:mod:`treebanks.errors`: the
    library's names, ``vocab_size``) written as the running command's options
    (``--vocab-size``), found by the parameter names the options carry (``--emb`` sets
    ``emb_size``) or by the options' own names; a field the running command has no
    option for is spelled as the option of another command that has one (a message
    may point to ``agree train-lm --snapshot-every``)."""
    if not e.fields:
        return str(e)
    flags = _option_flags(command)
    if any(name not in flags for name in e.fields):
        flags = {**_option_flags(cli), **flags}
    return e.spelled(lambda name: flags.get(name, name))


def _option_flags(command: click.Command | None) -> dict[str, str]:
    """parameter name (and each long option's own name, ``from_outputs``) -> first flag,
    of a command and (a group: ``agree setup``, ``agree`` itself) its subcommands."""
    options = [p for p in getattr(command, "params", ()) if isinstance(p, click.Option)]
    flags = {o[2:].replace("-", "_"): p.opts[0] for p in options for o in p.opts if o.startswith("--")}
    flags.update({p.name: p.opts[0] for p in options})
    if isinstance(command, click.Group):
        for name in command.list_commands(None):
            flags.update(_option_flags(command.get_command(None, name)))
    return flags


def describe_os_error(e: OSError) -> str:
    """``PATH: reason`` for an OSError (permissions, full disk, missing directory ...)."""
    reason = e.strerror or (os.strerror(e.errno) if e.errno else None) or str(e) or type(e).__name__
    if e.errno == errno.ENOSPC:
        reason += " (free some space, or choose another --out)"
    path = e.filename if e.filename is not None else e.filename2
    return f"{os.fsdecode(path)}: {reason}" if path is not None else reason


@click.group(cls=AgreeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(AGREE_VERSION, prog_name="agree",
                      message=f"%(prog)s, version %(version)s (distribution {DISTRIBUTION})")
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
      agree export    test set -> BLiMP jsonl / MultiBLiMP TSV minimal pairs
      agree import-model  a released model (the paper's LSTMs) -> model directory
      agree analyze   scored results -> noise ceiling, mixed effects, EW/MW, challenge sets
      agree browse    scored results -> a static results page (opens from file://)
      agree inspect   test set + one model -> unit ablation, probes, activation patching
      agree swap-targets  items -> K other target lemmas each (systematicity)
      agree demo      all of the above on a generated language, in minutes
      agree setup kenlm  build KenLM's lmplz/build_binary (for --arch kn5)
      agree doctor    what works in this installation

    \b
    Example:
      agree demo --out demo-out
    """


def main():
    heavy_import.FREEZE_AFTER_HEAVY_IMPORT = True   # this process ends with its command
    try:
        cli(prog_name="agree")
    finally:
        # The process ends next. The interpreter's last collections would walk every
        # object still alive, again and again as it clears the modules (after torch's
        # import 170,000 objects: 0.4 s of every score run), for garbage that exit
        # frees anyway: frozen, they are skipped.
        # (Here, not in AgreeGroup.main: a test's CliRunner goes on after a command.)
        gc.freeze()


if __name__ == "__main__":  # torchrun -m agreement.cli train-lm ...
    main()
