"""The errors of the ``lm`` layer. The CLI turns each into one ``Error: ...`` line."""
from __future__ import annotations

import signal
import string


class LMError(Exception):
    """A user-facing error about corpora, training or model directories."""


class FieldError(LMError):
    """An LMError about settings, named by their field names (``vocab_size must be at
    least 1``): this layer knows no command-line flags. The message is a template whose
    ``{placeholders}`` are field names; ``str()`` spells them as fields, and the command
    layer re-spells them as its own options with :meth:`spelled` (``--vocab-size``).

    Values other than field names are formatted into the template by the caller, with
    :func:`literal` where they may hold braces (paths)."""

    def __init__(self, template: str):
        self.template = template
        self.fields = tuple(name for _, name, _, _ in string.Formatter().parse(template) if name)
        super().__init__(self.spelled(lambda name: name))

    def spelled(self, spell) -> str:
        """The message with every field ``name`` written as ``spell(name)``."""
        return self.template.format_map({name: spell(name) for name in self.fields})


def literal(value) -> str:
    """``str(value)`` escaped for a :class:`FieldError` template."""
    return str(value).replace("{", "{{").replace("}", "}}")


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
