"""Importing a heavy module (torch, a backend that brings it in) without paying the
garbage collector for it.

Kept apart from the backends (:mod:`lm.backends`) so that the console command can set its policy
without importing anything itself (``agree --help`` imports neither numpy nor torch).
"""
from __future__ import annotations

import gc
import importlib

#: Whether :func:`import_heavy` also moves every object then alive out of the collector's
#: reach (``gc.freeze``). The ``agree`` command sets it: its process ends with its command,
#: and torch's ~140,000 objects live until then. A library caller's collector is left whole.
FREEZE_AFTER_HEAVY_IMPORT = False


def import_heavy(module: str):
    """``importlib.import_module(module)`` with the cyclic garbage collector paused: a
    backend's first import brings in torch, some 140,000 objects, and the collector would
    walk the growing heap three times over to find next to no garbage. Paused, it walks
    the new objects once afterwards (a score run's collections: 0.21 s instead of 0.32);
    with :data:`FREEZE_AFTER_HEAVY_IMPORT` they are frozen and never walked (0.04 s)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return importlib.import_module(module)
    finally:
        if FREEZE_AFTER_HEAVY_IMPORT:
            gc.freeze()
        if paused:
            gc.enable()
