"""Options shared by several commands, as decorators (one definition each), and the
one table of numeric ranges every command's numeric options are checked against.

A value out of range is a usage error (exit 2, one ``Error: Invalid value for
'--lr': ...`` line) before any work starts; NaN and infinity are never accepted.
"""
from __future__ import annotations

import functools
import math

import click

from formats.resources import cpu_count
from formats.run import DEFAULT_SEED, RunContext, log_level
from lm.device import DEVICE_NAMES, check_device_name
from lm.errors import LMError


def invocation_argv() -> list[str]:
    """The command line after ``agree`` that is running (manifests record it), as
    :meth:`agreement.cli.AgreeGroup.main` received it; empty outside the CLI."""
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    return list(obj.get("argv", ())) if isinstance(obj, dict) else []


_out = click.option(
    # a plain path: an existing file there is refused by the --out policy (formats.files),
    # one Error line and exit 1 like its other rules, not click's usage error
    "--out", "out", required=True, type=click.Path(),
    help="Output directory, written atomically (it appears whole or not at all). An existing "
         "one is replaced only when it is empty or an output of the same command; it may not "
         "be, contain or lie inside an input.")
_force = click.option(
    "--force", is_flag=True,
    help="Replace an existing --out even when it is not an output of this command.")


def out_option(f):
    """``--out`` and ``--force``: the command receives ``out`` and ``force``."""
    return _out(_force(f))


_quiet = click.option(
    "--quiet", "-q", is_flag=True, help="No progress bars or log lines on stderr.")
_verbose = click.option(
    "--verbose", "-v", is_flag=True, help="Also the detail lines (debug) on stderr.")


def quiet_option(f):
    """``--quiet`` and ``-v/--verbose``: the verbosity of stderr, which :func:`pass_run`
    (or the command) turns into the logging level."""
    return _quiet(_verbose(f))


def pass_run(command: str):
    """Decorator of a command function (below its option decorators): the options
    ``out``, ``force``, ``seed``, ``quiet`` and ``verbose`` become one :class:`RunContext`
    (``run=``), built and started (logging set up) here, once; the library verbs read
    the seed from it."""
    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kw):
            run = RunContext(command, out=kw.pop("out", None), force=kw.pop("force", False),
                             argv=tuple(invocation_argv()), seed=kw.pop("seed", DEFAULT_SEED),
                             level=log_level(kw.pop("quiet", False), kw.pop("verbose", False)))
            return f(*args, run=run.start(), **kw)
        return wrapper
    return decorate


class Number(click.ParamType):
    """An int or a finite float within [min, max] (an end excluded when ``*_open``);
    ``why`` says where a bound comes from (shown with the range when a value is refused)."""

    def __init__(self, kind: type = float, min: float | None = None, max: float | None = None,
                 min_open: bool = False, max_open: bool = False, why: str = ""):
        self.kind, self.min, self.max = kind, min, max
        self.min_open, self.max_open = min_open, max_open
        self.why = why
        self.name = "integer" if kind is int else "float"

    def describe(self) -> str:
        low = "" if self.min is None else f"{_shown(self.min)} {'<' if self.min_open else '<='} "
        high = "" if self.max is None else f" {'<' if self.max_open else '<='} {_shown(self.max)}"
        return f"{low}x{high}" + (f" ({self.why})" if self.why else "")

    def get_metavar(self, param, ctx=None) -> str:
        return "INTEGER" if self.kind is int else "FLOAT"

    def convert(self, value, param, ctx):
        try:
            x = self.kind(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a valid {self.name}", param, ctx)
        if not math.isfinite(x):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if (self.min is not None and (x < self.min or (self.min_open and x == self.min))) or \
                (self.max is not None and (x > self.max or (self.max_open and x == self.max))):
            self.fail(f"{_shown(x)} is not in the range {self.describe()}", param, ctx)
        return x


def _shown(x: float) -> str:
    """An int as written (4294967295, not 4.29497e+09), a float in %g."""
    return str(x) if isinstance(x, int) else f"{x:g}"


#: The ranges, by meaning: each option takes only values the code below it can
#: honour. Commands use these, never a bare ``type=int``/``float``. Sizes whose
#: product is what costs (model sizes, nonce variants) are checked once more against
#: the machine by the library, with the estimate in the message (formats.resources).
INT64_MAX = 2 ** 63 - 1        # torch and numpy take counts and sizes as 64-bit ints
INT32_MAX = 2 ** 31 - 1        # C++ libraries below (sentencepiece, KenLM) take 32-bit ints
POSITIVE_INT = Number(int, min=1, max=INT64_MAX)     # counts of things: epochs, steps
COUNT = Number(int, min=0, max=INT64_MAX)            # may be zero
SIZE = Number(int, min=1, max=INT32_MAX)             # model and batch sizes, vocabularies
POSITIVE = Number(float, min=0, min_open=True, max=1e9)   # minutes
NON_NEGATIVE = Number(float, min=0, max=1e9)         # clip
LEARNING_RATE = Number(float, min=0, min_open=True, max=1e4,
                       why="a larger step diverges at once; the paper's SGD uses 20")
PROBABILITY = Number(float, min=0, max=1)            # shares, severities
DROPOUT = Number(float, min=0, max=1, max_open=True)
FINITE = Number(float)
#: numpy's RandomState and sentencepiece take unsigned 32-bit seeds (torch takes more)
SEED = Number(int, min=0, max=2 ** 32 - 1, why="the seeds numpy and sentencepiece accept")
#: threads and worker processes: more than the CPUs there are only waits
CPUS = Number(int, min=1, max=cpu_count(), why="the CPUs this machine gives agree")
#: Ray actors per model: a cluster may have more CPUs than this machine, so no CPU bound
WORKERS = Number(int, min=1, max=100_000, why="Ray actors per model")
#: tasks run at once (agree extract-all): processes here, or Ray tasks on a cluster of any size
PARALLEL = Number(int, min=1, max=100_000, why="processes here or Ray tasks on a cluster")

seed_option = click.option(
    "--seed", type=SEED, default=DEFAULT_SEED, show_default=True,
    help="Random seed (0 to 4294967295); the same seed gives byte-identical output.")


class Lang(click.ParamType):
    """A language code (en, it, pt-BR, synth): letters first, then letters, digits, _ or -."""
    name = "lang"

    def get_metavar(self, param, ctx=None) -> str:
        return "LANG"

    def convert(self, value, param, ctx):
        text = str(value)
        if not text.strip():
            self.fail("an empty language code; give one such as en or it", param, ctx)
        if not (text[0].isalpha() and all(c.isalnum() or c in "_-" for c in text)):
            self.fail(f"{text!r} is not a language code (such as en, it or pt-BR)", param, ctx)
        return text


LANG = Lang()


class Device(click.ParamType):
    """A device name of :mod:`lm.device` (auto, cpu, cuda, cuda:N), checked without
    loading torch; the one type of every command's ``--device``."""
    name = "device"

    def get_metavar(self, param, ctx=None) -> str:
        return "[" + "|".join(DEVICE_NAMES) + "]"

    def convert(self, value, param, ctx):
        try:
            return check_device_name(value)
        except LMError as e:
            self.fail(str(e), param, ctx)


device_option = click.option(
    "--device", type=Device(), default=None,
    help="Where torch models run: auto (the default: CUDA when present, else the CPU), cpu, "
         "cuda (this process's GPU; under torchrun, its local rank's) or cuda:N.")

