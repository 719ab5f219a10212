"""One run of an ``agree`` command: its context, and the one logging setup.

A :class:`RunContext` is built once, at the CLI edge (``agreement.options.pass_run``),
or by a caller that runs a library verb itself (``agree demo`` runs each step in its
own directory). It carries what every verb that writes a directory needs: the
command's name, ``--out``, ``root`` (where relative paths are read and written),
``--force``, the command line the manifest records, the seed where the verb has
one, and the verbosity. The verb claims ``--out`` and writes its manifest through
it (:meth:`RunContext.output_dir`, :meth:`RunContext.write_manifest`), so the
``--out`` policy and the manifest's ``argv`` and ``root`` are spelled once.

Logging: library modules log through ``logging.getLogger(__name__)`` (``info`` for
lines people read on stderr, ``warning`` for what they should know even with
``--quiet``, ``debug`` for ``-v``). :func:`configure_logging` points the loggers of
agree's packages at stderr with the plain message (no level or time prefix: the
lines read as they always did). Progress goes through the same loggers
(:func:`treebanks.progress.progress`: a bar on a terminal, a line every few seconds in a
file), so ``--quiet`` silences bars and lines together and no ``quiet`` flag is
threaded through the library.
"""
from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from formats.files import as_given, atomic_output_dir, check_out, rooted
from formats.manifest import describe_inputs, write_manifest

#: agree's top-level packages: their loggers are the ones configured (a library
#: below, such as ray or transformers, keeps its own logging)
PACKAGES = ("treebanks", "formats", "lm", "nonce", "agreement")
log = logging.getLogger(__name__)
#: the seed of a run that names none (``--seed``'s default)
DEFAULT_SEED = 1111


class CurrentStderr(logging.StreamHandler):
    """A handler writing to ``sys.stderr`` as it is when a record is emitted, not as
    it was when the handler was made (click's CliRunner and pytest swap it)."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):   # StreamHandler.__init__ assigns one; sys.stderr is always read
        pass


_HANDLER = CurrentStderr()
_HANDLER.setFormatter(logging.Formatter("%(message)s"))


def log_level(quiet: bool = False, verbose: bool = False) -> int:
    """The level of ``--quiet`` (WARNING), ``-v``/``--verbose`` (DEBUG), or neither (INFO)."""
    return logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO


def configure_logging(level: int = logging.INFO) -> None:
    """Send agree's log records at ``level`` and above to stderr, one plain line each
    (called at the CLI edge; calling it again only changes the level)."""
    for name in PACKAGES:
        logger = logging.getLogger(name)
        logger.setLevel(level)
        if _HANDLER not in logger.handlers:
            logger.addHandler(_HANDLER)
        logger.propagate = False   # the root logger's handlers (a user's, pytest's) do not print them twice


@dataclass(frozen=True)
class RunContext:
    """One invocation: ``command`` (as manifests name it), ``out`` (the output
    directory, read from ``root``), ``root`` (where relative paths are read and
    written, recorded as given: :func:`formats.files.rooted`; None: the working
    directory), ``force`` (replace an ``out`` that is not this command's output),
    ``argv`` (the command line after ``agree`` that the manifest records), ``seed`` (the
    one seed every random draw of the run comes from: the verbs that draw read it) and
    ``level`` (the logging level of its stderr lines)."""
    command: str
    out: str | os.PathLike | None = None
    root: str | os.PathLike | None = None
    force: bool = False
    argv: tuple[str, ...] = ()
    seed: int = DEFAULT_SEED
    level: int = logging.INFO

    @property
    def quiet(self) -> bool:
        """Whether the run's lines for people (and its progress bars) are silenced."""
        return self.level > logging.INFO

    def start(self) -> RunContext:
        """Set up logging for this run (the CLI edge calls it once); returns self."""
        configure_logging(self.level)
        return self

    def step(self, command: str, out: str | os.PathLike, argv: Sequence[str],
             root: str | os.PathLike | None) -> RunContext:
        """The context of a verb run inside this one (a demo step, in the directory
        ``root``): its own command, ``out`` and recorded command line; the same seed
        and verbosity."""
        return replace(self, command=command, out=out, argv=tuple(argv), root=root, force=False)

    def path(self, path: str | os.PathLike | None) -> str | os.PathLike | None:
        """``path`` as this run reads it (inside ``root`` when relative)."""
        return rooted(self.root, path)

    def given(self, path: str | os.PathLike) -> str | os.PathLike:
        """A path found under ``root`` as the user named it (:func:`formats.files.as_given`)."""
        return as_given(path, self.root)

    @contextmanager
    def output_dir(self, inputs: Iterable[str | os.PathLike | None] = ()) -> Iterator[Path]:
        """Claim ``out`` under the ``--out`` policy (it may not be, contain or lie inside
        one of ``inputs``, read from ``root``) and yield a temporary directory that
        replaces it when the block succeeds (:func:`formats.files.atomic_output_dir`)."""
        if self.out is None:
            raise ValueError(f"{self.command}: this run has no output directory")
        with atomic_output_dir(self.path(self.out), self.command, [self.path(p) for p in inputs],
                               self.force) as tmp:
            log.debug(f"{self.command}: writing {tmp}, renamed to {self.path(self.out)} when complete")
            yield tmp

    def check_out(self, inputs: Iterable[str | os.PathLike | None] = ()) -> None:
        """Refuse ``out`` now, before any work, where :meth:`output_dir` would refuse it
        later (the same ``--out`` policy: :func:`formats.files.check_out`)."""
        if self.out is None:
            raise ValueError(f"{self.command}: this run has no output directory")
        check_out(self.path(self.out), self.command, [self.path(p) for p in inputs], self.force)

    def write_manifest(self, directory: str | os.PathLike, inputs: Iterable[str | os.PathLike],
                       parameters: dict[str, Any], **extra: Any) -> dict[str, Any]:
        """``directory``'s manifest.json for this run (its command, argv and root; ``extra``
        may hold ``described``, see :func:`formats.manifest.write_manifest`)."""
        log.debug(f"{self.command}: manifest.json in {directory}")
        return write_manifest(directory, self.command, inputs, parameters, argv=self.argv,
                              root=self.root, **extra)

    def describe_inputs(self, inputs: Iterable[str | os.PathLike]) -> list[dict[str, Any]]:
        """The inputs' paths, sizes and checksums now (read from ``root``), for a manifest
        written at the end of a long run (``write_manifest(..., described=...)``)."""
        return describe_inputs(inputs, self.root)
