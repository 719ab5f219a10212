"""The errors of the ``lm`` layer (each a :class:`treebanks.errors.DomainError`, the
root the CLI catches and turns into one ``Error: ...`` line)."""
from __future__ import annotations

import signal

from treebanks.errors import DomainError, literal  # noqa: F401  (literal: handed on)


class LMError(DomainError):
    """A user-facing error about corpora, training or model directories."""


class FieldError(LMError):
    """An LMError about settings, named by their field names (``vocab_size must be at
    least 1``): this layer knows no command-line flags. The message is a template whose
    ``{placeholders}`` are field names; ``str()`` spells them as fields, and the command
    layer re-spells them as its own options with :meth:`spelled` (``--vocab-size``).

    Values other than field names are formatted into the template by the caller, with
    :func:`literal` where they may hold braces (paths)."""

    def __init__(self, template: str, *, file=None, line: int | None = None):
        super().__init__(template, file=file, line=line, fields=True)


class TrainingInterrupted(FieldError):
    """Training stopped on SIGINT/SIGTERM after saving a checkpoint (resumable);
    ``signum``: the signal that stopped it (the CLI exits 128 + signum)."""

    def __init__(self, template: str, signum: int = signal.SIGINT):
        super().__init__(template)
        self.signum = signum


class Terminated(KeyboardInterrupt):
    """SIGTERM (what ``timeout``, ``kill`` and job schedulers send), raised where it lands
    as Ctrl-C's KeyboardInterrupt is, so that every clean-up on the way out (temporary
    directories, locks) runs the same; the CLI reports it and exits 143."""


def interrupt_for(signum: int) -> KeyboardInterrupt:
    """The exception that stands for signal ``signum`` (SIGTERM: Terminated; else Ctrl-C's)."""
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()
