"""Work read side by side in lanes: threads that each take a fixed share of a list.

Both local transformer engines use it on CPU with ``--threads N`` (at most MAX_LANES
lanes): the transformers engine's chunks (:mod:`lm.hf.forward`) and llama.cpp's decode
rounds (:mod:`lm.gguf.llamacpp`). Item i goes to lane i mod n, so the split, and with it
every score, is the same on every run and the same as one lane's. The engines release
the GIL inside their kernels (torch's operators, ``llama_decode`` through ctypes), so the
lanes compute at once.

Why not one engine at N threads: on the short sequences of minimal pairs a matrix product
holds a few hundred rows at most, and N threads share it worse than N lanes share the
work (SmolLM2 on 2 cores: torch 1.5-1.7x one thread against 1.8-2.0x for two lanes).
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

#: lanes at most: more contend for the GIL between the engines' kernels (measured at 2)
MAX_LANES = 4


def lanes_for(threads: int | None, on_cpu: bool) -> tuple[int, int]:
    """(lanes, threads per lane) for an explicit ``threads`` on CPU; else (1, threads)."""
    if threads is None or not on_cpu:
        return 1, threads or 1
    lanes = max(1, min(int(threads), MAX_LANES))
    return lanes, max(1, int(threads) // lanes)


def side_by_side(read: Callable[[int, Sequence, threading.Event], None], items: Sequence,
                 lanes: int) -> None:
    """``read(k, items[k::n], stop)`` for each lane k, in n threads named ``agree-lane``
    (n = at most ``lanes``, at most one per item). The first error, or a Ctrl-C reaching
    the caller, sets ``stop`` (each lane checks it between items) and is raised."""
    n = max(1, min(lanes, len(items)))
    stop = threading.Event()
    with ThreadPoolExecutor(n, thread_name_prefix="agree-lane") as pool:
        futures = [pool.submit(read, k, items[k::n], stop) for k in range(n)]
        try:
            for f in futures:
                f.result()
        finally:
            stop.set()
