"""Ctrl-C (SIGINT) and SIGTERM in training: finish what is under way, save a checkpoint, stop.

:class:`StopFlag` replaces both handlers for as long as a checkpointed run lasts, from
before torch is imported (:func:`lm.training.train.train_lm` opens it) to its last step.
A signal only sets the flag; the trainer acts on it at the next point where a
checkpoint can be saved: after the current batch while training, or once the model is
built while the run is still setting up (corpus, vocabulary, data, weights), so that an
early Ctrl-C leaves a checkpoint of step 0 that ``--resume`` continues, as a late one
does. A second signal stops at once, without a checkpoint.

Torch-free, so that the flag is up before torch (seconds to import) is loaded.
"""
from __future__ import annotations

import logging
import signal
import threading

from lm.errors import interrupt_for

log = logging.getLogger(__name__)


class StopFlag:
    """SIGINT/SIGTERM -> finish the batch (or the set-up), checkpoint, stop; a second
    signal stops at once. ``set``: a signal came; ``signum``: which (SIGTERM exits 143);
    ``training``: the trainer has started its steps (only the message depends on it)."""

    def __init__(self, announce: bool = True):
        self.set, self.announce, self._old = False, announce, {}
        self.signum = signal.SIGINT
        self.training = False

    def _handle(self, signum, frame):
        if self.set:
            raise interrupt_for(signum)
        self.set, self.signum = True, signum
        if self.announce:   # one process says it (logging decides whether it is shown)
            what = "after this batch" if self.training else "once the model is set up"
            log.info(f"\nstopping {what} and saving a checkpoint "
                     "(press Ctrl-C again to stop at once, without one)")

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for s in (signal.SIGINT, signal.SIGTERM):
                self._old[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, exc_type, *exc):
        for s, h in self._old.items():
            signal.signal(s, h)
        self._old = {}
        if self.set and exc_type is None:
            # the signal came after the last step, when nothing was left to stop: the
            # caller (a next pipeline step, agree demo's) must still see the interrupt
            raise interrupt_for(self.signum)
