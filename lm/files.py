"""Directory moves shared by the model trainers and every command's output.

(Here rather than in ``agreement.outdir`` because ``lm`` must not import
``agreement``; ``agreement.outdir`` re-exports it.)"""
from __future__ import annotations

import os
import shutil
from pathlib import Path


def replace_dir(src: Path, dst: Path, overwrite: bool = True) -> None:
    """Move directory ``src`` to ``dst``; an existing ``dst`` is swapped out first,
    then removed, so ``dst`` is never missing or half-written."""
    src, dst = Path(src), Path(dst)
    if dst.exists():
        if not overwrite:
            shutil.rmtree(src, ignore_errors=True)
            raise FileExistsError(f"{dst} exists")
        old = dst.with_name(f".{dst.name}.old-{os.getpid()}")
        os.replace(dst, old)
        os.replace(src, dst)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(src, dst)
